//! The scene's shadow map: depth seen from the key light, fitted to the
//! stage (a square `scene.shadow_extent` metres across around
//! `scene.target`, looking along the light), that every layer in the
//! scene casts into ([`crate::engine::Layer::cast_shadow`]) and every
//! layer that shades the scene reads (`shaders/common/shadow.wgsl`). The
//! show keeps one (`World::shadow`), cleared before the casters of each
//! frame that follows one that was cast into.

use std::cell::Cell;

use glam::camera::rh::proj;
use glam::camera::rh::view::look_at_mat4;
use glam::{Mat4, Vec3};

use crate::gpu::raster::{begin_depth_pass, clear_depth};
use crate::params::{ParamSpec, Registry, Value};

/// Texels along each side of the map.
pub const SHADOW_SIZE: u32 = 2048;

/// The map's format.
pub const SHADOW_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// The side of the square the map covers by default, metres.
pub const EXTENT: f32 = 12.0;

/// The shadow parameters, in the scene's section.
pub fn shadow_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::float("scene.shadows", 1.0, 0.0, 1.0)
            .with_smoothing(0.2)
            .with_description("How dark the key light's shadows fall (0: none)"),
        ParamSpec::float("scene.shadow_extent", EXTENT, 1.0, 500.0)
            .with_smoothing(0.3)
            .with_unit("m")
            .with_description("The width of the stage around the scene's target that casts and receives shadows (smaller: sharper shadows)"),
    ]
}

/// The light's clip space: an orthographic view along the light
/// (`towards`, unit, pointing at it) of the square `extent` metres across
/// around `target`, deep enough for what stands `extent` above or below.
pub fn light_clip(towards: Vec3, target: Vec3, extent: f32) -> Mat4 {
    let half = extent * 0.5;
    let eye = target + towards * extent * 2.0;
    // A light straight above has no bearing: any up will do but its own.
    let up = if towards.y.abs() > 0.999 {
        Vec3::Z
    } else {
        Vec3::Y
    };
    let view = look_at_mat4(eye, target, up);
    // wgpu's clip space is DirectX's: depth 0..1, y up.
    proj::directx::orthographic(-half, half, -half, half, extent * 0.5, extent * 3.5) * view
}

/// The light's clip space and how dark its shadows fall, as the registry
/// sets them; `towards` points at the light.
pub fn fitted(registry: &Registry, towards: Vec3) -> (Mat4, f32, f32) {
    let target = match registry.get("scene.target") {
        Some(Value::Vec3(v)) => Vec3::from_array(*v),
        _ => Vec3::Y,
    };
    let float = |name: &str, default: f32| {
        registry
            .get(name)
            .and_then(Value::as_f32)
            .unwrap_or(default)
    };
    let extent = float("scene.shadow_extent", EXTENT);
    let strength = float("scene.shadows", 1.0);
    (light_clip(towards, target, extent), strength, extent)
}

/// The map, its comparison sampler, and whether it was cast into since it
/// was last cleared.
#[derive(Debug)]
pub struct ShadowMap {
    view: wgpu::TextureView,
    sampler: wgpu::Sampler,
    cast: Cell<bool>,
}

impl ShadowMap {
    /// A cleared map (depth 1: nothing casts).
    pub fn new(device: &wgpu::Device) -> Self {
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("scene.shadow"),
            size: wgpu::Extent3d {
                width: SHADOW_SIZE,
                height: SHADOW_SIZE,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: SHADOW_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        });
        // Filtered comparison: each lookup weighs four texels, so the
        // shadow's edge is smooth rather than stair-stepped.
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("scene.shadow.sampler"),
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            compare: Some(wgpu::CompareFunction::LessEqual),
            ..Default::default()
        });
        Self {
            view: texture.create_view(&wgpu::TextureViewDescriptor::default()),
            sampler,
            cast: Cell::new(true),
        }
    }

    /// The map, to sample (`texture_depth_2d`) or to cast into.
    pub fn view(&self) -> &wgpu::TextureView {
        &self.view
    }

    /// Its comparison sampler.
    pub fn sampler(&self) -> &wgpu::Sampler {
        &self.sampler
    }

    /// The map as group 1 of `pipeline`'s automatic layout (the map at
    /// binding 0, its sampler at 1): what a receiver's fragment stage
    /// reads through `common/shadow.wgsl`.
    pub fn receiving_group(
        &self,
        device: &wgpu::Device,
        pipeline: &wgpu::RenderPipeline,
        label: &str,
    ) -> wgpu::BindGroup {
        self.group_for(device, &pipeline.get_bind_group_layout(1), label)
    }

    /// The map as a group of `layout` (the map at binding 0, its sampler
    /// at 1): a receiver shaded by compute.
    pub fn group_for(
        &self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        label: &str,
    ) -> wgpu::BindGroup {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(label),
            layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&self.view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Sampler(&self.sampler),
                },
            ],
        })
    }

    /// Clears the map if it was cast into since it was last cleared: the
    /// start of a frame's casting.
    pub fn clear(&self, encoder: &mut wgpu::CommandEncoder) {
        if self.cast.replace(false) {
            clear_depth(encoder, &self.view);
        }
    }

    /// A depth-only pass that casts into the map over what others cast.
    pub fn cast_pass<'e>(
        &self,
        encoder: &'e mut wgpu::CommandEncoder,
        label: &str,
        timestamps: Option<wgpu::RenderPassTimestampWrites<'_>>,
    ) -> wgpu::RenderPass<'e> {
        self.cast.set(true);
        begin_depth_pass(encoder, label, &self.view, wgpu::LoadOp::Load, timestamps)
    }
}

/// A caster's pipeline: `vertex` of `module` (with vertex `buffers`, if
/// any) drawn into the map's depth alone, both faces (a shell may be
/// open).
pub fn caster_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    vertex: &str,
    label: &str,
    buffers: &[Option<wgpu::VertexBufferLayout<'_>>],
) -> wgpu::RenderPipeline {
    caster(device, module, vertex, None, label, buffers)
}

/// A cut-out caster's pipeline: `vertex` of `module` drawn into the map's
/// depth where `fragment` keeps it (an impostor's leaves; it discards the
/// rest and writes no colour).
pub fn cut_out_caster_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    vertex: &str,
    fragment: &str,
    label: &str,
) -> wgpu::RenderPipeline {
    caster(device, module, vertex, Some(fragment), label, &[])
}

fn caster(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    vertex: &str,
    fragment: Option<&str>,
    label: &str,
    buffers: &[Option<wgpu::VertexBufferLayout<'_>>],
) -> wgpu::RenderPipeline {
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(label),
        layout: None,
        vertex: wgpu::VertexState {
            module,
            entry_point: Some(vertex),
            compilation_options: Default::default(),
            buffers,
        },
        primitive: Default::default(),
        depth_stencil: Some(caster_depth()),
        multisample: Default::default(),
        fragment: fragment.map(|entry| wgpu::FragmentState {
            module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            targets: &[],
        }),
        multiview_mask: None,
        cache: None,
    })
}

/// A caster's depth state: the map's format, nearest wins, pushed back a
/// little along the slope so a surface does not shadow itself.
fn caster_depth() -> wgpu::DepthStencilState {
    wgpu::DepthStencilState {
        format: SHADOW_FORMAT,
        depth_write_enabled: Some(true),
        depth_compare: Some(wgpu::CompareFunction::Less),
        stencil: Default::default(),
        bias: wgpu::DepthBiasState {
            constant: 2,
            slope_scale: 2.0,
            clamp: 0.0,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_light_s_view_holds_the_stage_and_looks_along_the_light() {
        let towards = Vec3::new(1.0, 1.0, 0.0).normalize();
        let clip = light_clip(towards, Vec3::ZERO, 10.0);
        // The stage's corners land inside the map.
        for corner in [
            Vec3::new(-5.0, 0.0, -5.0),
            Vec3::new(5.0, 0.0, 5.0),
            Vec3::new(4.0, 3.0, -4.0),
        ] {
            let p = clip.project_point3(corner);
            assert!(
                p.x.abs() <= 1.0 && p.y.abs() <= 1.0 && (0.0..=1.0).contains(&p.z),
                "{corner} -> {p}"
            );
        }
        // A point moved towards the light is nearer it, and a point moved
        // along the light's ray lands on the same texel.
        let near = clip.project_point3(towards);
        let at = clip.project_point3(Vec3::ZERO);
        assert!(near.z < at.z);
        assert!(near.truncate().abs_diff_eq(at.truncate(), 1e-5));
    }
}
