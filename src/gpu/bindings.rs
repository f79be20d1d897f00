//! Small helpers for bind groups: layouts and groups numbered by position
//! (uniforms, sampled and storage textures, samplers), and uniform buffers.
//! The compositor, the `shader` layer and the simulations that paint into
//! maps (the forest's density) use them so none spells out wgpu's
//! descriptors.

use super::Gpu;

/// A uniform buffer of `size` bytes, written with `Queue::write_buffer`.
pub fn uniform_buffer(device: &wgpu::Device, label: &str, size: usize) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size as u64,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// One binding of a fragment-stage bind group, numbered by position.
pub enum Slot {
    /// A uniform buffer.
    Uniform,
    /// A texture; `true` if it is sampled with filtering.
    Texture(bool),
    /// A filtering sampler.
    Sampler,
    /// A 2D storage texture of this format, read, written or both.
    StorageTexture(wgpu::TextureFormat, wgpu::StorageTextureAccess),
    /// A depth texture read by comparison (the scene's shadow map).
    DepthTexture,
    /// A sampler that compares depths.
    ComparisonSampler,
}

/// A sampler that filters linearly and clamps to the edge: what every
/// fullscreen pass here samples its textures with.
pub fn linear_sampler(device: &wgpu::Device, label: &str) -> wgpu::Sampler {
    device.create_sampler(&wgpu::SamplerDescriptor {
        label: Some(label),
        mag_filter: wgpu::FilterMode::Linear,
        min_filter: wgpu::FilterMode::Linear,
        ..Default::default()
    })
}

/// A bind group layout whose binding `i` is `slots[i]`, for a fullscreen
/// pass (fragment stage, or compute where it runs as compute).
pub fn layout(device: &wgpu::Device, label: &str, slots: &[Slot]) -> wgpu::BindGroupLayout {
    let stages = wgpu::ShaderStages::FRAGMENT | wgpu::ShaderStages::COMPUTE;
    layout_for(device, label, stages, slots)
}

/// A bind group layout whose binding `i` is `slots[i]`, seen by `stages`.
pub fn layout_for(
    device: &wgpu::Device,
    label: &str,
    stages: wgpu::ShaderStages,
    slots: &[Slot],
) -> wgpu::BindGroupLayout {
    let entries: Vec<wgpu::BindGroupLayoutEntry> = slots
        .iter()
        .enumerate()
        .map(|(binding, slot)| wgpu::BindGroupLayoutEntry {
            binding: binding as u32,
            visibility: stages,
            ty: match slot {
                Slot::Uniform => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                Slot::Texture(filterable) => wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Float {
                        filterable: *filterable,
                    },
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                Slot::Sampler => wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                Slot::StorageTexture(format, access) => wgpu::BindingType::StorageTexture {
                    access: *access,
                    format: *format,
                    view_dimension: wgpu::TextureViewDimension::D2,
                },
                Slot::DepthTexture => wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Depth,
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                Slot::ComparisonSampler => {
                    wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Comparison)
                }
            },
            count: None,
        })
        .collect();
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    })
}

/// A bind group whose binding `i` is `resources[i]`.
pub fn bind(
    gpu: &Gpu,
    layout: &wgpu::BindGroupLayout,
    label: &str,
    resources: &[wgpu::BindingResource<'_>],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry<'_>> = resources
        .iter()
        .enumerate()
        .map(|(binding, resource)| wgpu::BindGroupEntry {
            binding: binding as u32,
            resource: resource.clone(),
        })
        .collect();
    gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    })
}
