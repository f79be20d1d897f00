//! Compute-pipeline helpers shared by the simulation layers: building a
//! pipeline from a composed WGSL file inside a validation error scope,
//! rebuilding it live when one of its files is saved (the buffers, and so
//! the running simulation, stay), bind groups over plain buffers, and dispatch sizes for any element count
//! (past 65,535 workgroups the grid wraps into a second dimension, which the
//! kernels undo with `workgroup_id.x + workgroup_id.y * num_workgroups.x`).

use super::wgsl::Composer;
use super::{BuildError, Gpu, ReadbackError};
use crate::base::{Assets, ChangedFile, Folder};

/// The largest workgroup count in one dimension WebGPU guarantees.
const MAX_GROUPS: u32 = 65_535;

/// A compute pipeline with its bind group layout 0, and what it was built
/// from, so a save of any of its WGSL files can rebuild it live.
pub struct Kernel {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    label: String,
    file: String,
    entry: String,
    files: Vec<String>,
    constants: Vec<(&'static str, f64)>,
}

/// A bind group and the buffers it binds, so it can be made again for a
/// rebuilt kernel (automatic layouts belong to one pipeline).
pub struct Binding {
    group: wgpu::BindGroup,
    buffers: Vec<(u32, wgpu::Buffer)>,
}

impl Kernel {
    /// Compiles entry point `entry` of shader file `file` (relative to
    /// `shaders/`, includes resolved).
    pub fn new(gpu: &Gpu, assets: &Assets, file: &str, entry: &str) -> Result<Self, BuildError> {
        Self::with_constants(gpu, assets, file, entry, &[])
    }

    /// Like [`Kernel::new`], with the file's `override` constants set.
    pub fn with_constants(
        gpu: &Gpu,
        assets: &Assets,
        file: &str,
        entry: &str,
        constants: &[(&'static str, f64)],
    ) -> Result<Self, BuildError> {
        let composed = Composer::new(assets).file(file)?.finish()?;
        composed.validate()?;
        let label = format!("{file}:{entry}");
        let pipeline = gpu.scoped(&label, || {
            let module = gpu
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&label),
                    source: wgpu::ShaderSource::Wgsl(composed.text().into()),
                });
            Ok::<_, BuildError>(gpu.device.create_compute_pipeline(
                &wgpu::ComputePipelineDescriptor {
                    label: Some(&label),
                    layout: None,
                    module: &module,
                    entry_point: Some(entry),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants,
                        ..Default::default()
                    },
                    cache: None,
                },
            ))
        })?;
        Ok(Self {
            layout: pipeline.get_bind_group_layout(0),
            pipeline,
            label,
            file: file.to_string(),
            entry: entry.to_string(),
            files: composed.files().map(str::to_string).collect(),
            constants: constants.to_vec(),
        })
    }

    /// A bind group of whole buffers at their bindings. An entry point's
    /// automatic layout holds only the bindings it uses, so each kernel
    /// names just those.
    pub fn bind(&self, gpu: &Gpu, buffers: &[(u32, &wgpu::Buffer)]) -> Binding {
        let buffers: Vec<(u32, wgpu::Buffer)> = buffers
            .iter()
            .map(|(b, buffer)| (*b, (*buffer).clone()))
            .collect();
        Binding {
            group: self.group(gpu, &buffers),
            buffers,
        }
    }

    /// A bind group of this kernel over the buffers of `like`, another
    /// kernel's binding (a variant of a kernel binding the same buffers).
    pub fn bind_like(&self, gpu: &Gpu, like: &Binding) -> Binding {
        Binding {
            group: self.group(gpu, &like.buffers),
            buffers: like.buffers.clone(),
        }
    }

    fn group(&self, gpu: &Gpu, buffers: &[(u32, wgpu::Buffer)]) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
            .iter()
            .map(|(binding, buffer)| wgpu::BindGroupEntry {
                binding: *binding,
                resource: buffer.as_entire_binding(),
            })
            .collect();
        gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&self.label),
            layout: &self.layout,
            entries: &entries,
        })
    }

    /// Whether a saved file is one this kernel was built from (its own
    /// file or one it includes).
    pub fn touched_by(&self, changed: &[ChangedFile]) -> bool {
        changed
            .iter()
            .any(|c| c.folder == Folder::Shaders && self.files.contains(&c.name))
    }

    /// Rebuilds the kernel from its files as saved now and remakes
    /// `bindings` for it, keeping the buffers (and so the running state).
    /// On any error, a WGSL one (`file:line:column`) or bindings that no
    /// longer fit, nothing changes and the old kernel keeps running.
    pub fn reload(
        &mut self,
        gpu: &Gpu,
        assets: &Assets,
        bindings: &mut [&mut Binding],
    ) -> Result<(), BuildError> {
        let kernel = Kernel::with_constants(gpu, assets, &self.file, &self.entry, &self.constants)?;
        let groups: Vec<wgpu::BindGroup> = gpu.scoped(&self.label, || {
            Ok::<_, BuildError>(
                bindings
                    .iter()
                    .map(|b| kernel.group(gpu, &b.buffers))
                    .collect(),
            )
        })?;
        for (binding, group) in bindings.iter_mut().zip(groups) {
            binding.group = group;
        }
        *self = kernel;
        Ok(())
    }

    /// Records a dispatch of enough workgroups of `size` for `count` items.
    pub fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        binding: &Binding,
        count: u32,
        size: u32,
    ) {
        let (x, y) = groups(count, size);
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &binding.group, &[]);
        pass.dispatch_workgroups(x, y, 1);
    }

    /// A bind group at index `group` of the kernel's automatic layout over
    /// `entries`: textures a frame chooses, beside the buffers of group 0.
    pub fn group_at(
        &self,
        gpu: &Gpu,
        group: u32,
        entries: &[wgpu::BindGroupEntry<'_>],
    ) -> wgpu::BindGroup {
        gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&self.label),
            layout: &self.layout_at(group),
            entries,
        })
    }

    /// The kernel's automatic layout of group `group`.
    pub fn layout_at(&self, group: u32) -> wgpu::BindGroupLayout {
        self.pipeline.get_bind_group_layout(group)
    }

    /// A dispatch like [`Kernel::dispatch`] with `extra` bound at group 1.
    pub fn dispatch_with(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        binding: &Binding,
        extra: &wgpu::BindGroup,
        count: u32,
        size: u32,
    ) {
        self.dispatch_groups(pass, binding, &[extra], count, size);
    }

    /// A dispatch like [`Kernel::dispatch`] with `extra` bound at groups 1
    /// on.
    pub fn dispatch_groups(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        binding: &Binding,
        extra: &[&wgpu::BindGroup],
        count: u32,
        size: u32,
    ) {
        let (x, y) = groups(count, size);
        self.set_groups(pass, binding, extra);
        pass.dispatch_workgroups(x, y, 1);
    }

    /// Records a dispatch whose size the GPU wrote into `args` at `offset`.
    pub fn dispatch_indirect(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        binding: &Binding,
        args: &wgpu::Buffer,
        offset: u64,
    ) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &binding.group, &[]);
        pass.dispatch_workgroups_indirect(args, offset);
    }

    /// A dispatch like [`Kernel::dispatch_indirect`] with `extra` bound at
    /// groups 1 on.
    pub fn dispatch_indirect_with(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        binding: &Binding,
        extra: &[&wgpu::BindGroup],
        args: &wgpu::Buffer,
        offset: u64,
    ) {
        self.set_groups(pass, binding, extra);
        pass.dispatch_workgroups_indirect(args, offset);
    }

    /// The kernel with `binding` at group 0 and `extra` at groups 1 on.
    fn set_groups(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        binding: &Binding,
        extra: &[&wgpu::BindGroup],
    ) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &binding.group, &[]);
        for (index, group) in (1..).zip(extra) {
            pass.set_bind_group(index, *group, &[]);
        }
    }
}

/// What a live reload of simulation kernels did: how many were rebuilt,
/// and the errors of those that kept their old version.
#[derive(Debug, Default)]
pub struct KernelReload {
    /// Kernels rebuilt.
    pub rebuilt: usize,
    /// Errors, one per kernel that failed.
    pub errors: Vec<String>,
}

impl KernelReload {
    /// Reloads `kernel` and its `bindings` if `changed` touches its files.
    pub fn kernel(
        &mut self,
        gpu: &Gpu,
        assets: &Assets,
        changed: &[ChangedFile],
        kernel: &mut Kernel,
        bindings: &mut [&mut Binding],
    ) {
        if !kernel.touched_by(changed) {
            return;
        }
        match kernel.reload(gpu, assets, bindings) {
            Ok(()) => self.rebuilt += 1,
            Err(error) => {
                let message = error.to_string();
                if !self.errors.contains(&message) {
                    self.errors.push(message);
                }
            }
        }
    }
}

/// Workgroups (x, y) covering `count` items in groups of `size`.
pub fn groups(count: u32, size: u32) -> (u32, u32) {
    let total = count.div_ceil(size).max(1);
    if total <= MAX_GROUPS {
        (total, 1)
    } else {
        (MAX_GROUPS, total.div_ceil(MAX_GROUPS))
    }
}

/// A storage buffer of `size` bytes, zeroed.
pub fn storage_buffer(
    gpu: &Gpu,
    label: &str,
    size: u64,
    extra: wgpu::BufferUsages,
) -> wgpu::Buffer {
    gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size.max(16).next_multiple_of(16),
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC
            | extra,
        mapped_at_creation: false,
    })
}

/// Reads a buffer back as `T`s (tests, export and bench only: it waits).
pub fn read_buffer<T: bytemuck::Pod>(
    gpu: &Gpu,
    buffer: &wgpu::Buffer,
    count: usize,
) -> Result<Vec<T>, ReadbackError> {
    let size = (count * size_of::<T>()) as u64;
    let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback.buffer"),
        size: size.max(4).next_multiple_of(4),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size.next_multiple_of(4));
    gpu.queue.submit([encoder.finish()]);
    let (sender, receiver) = std::sync::mpsc::channel();
    staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        let _ = sender.send(r);
    });
    gpu.wait_idle();
    receiver
        .recv()
        .map_err(|e| ReadbackError::Map(e.to_string()))?
        .map_err(|e| ReadbackError::Map(e.to_string()))?;
    let mapped = staging
        .slice(..)
        .get_mapped_range()
        .map_err(|e| ReadbackError::Map(e.to_string()))?;
    let values = bytemuck::pod_collect_to_vec(&mapped[..count * size_of::<T>()]);
    drop(mapped);
    staging.unmap();
    Ok(values)
}
