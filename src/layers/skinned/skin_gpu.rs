//! The character on the GPU: its bind-pose vertices, the bones written
//! once a frame (two frames' worth, alternating halves, so a frame still in
//! flight keeps the bones it was recorded with),
//! the compute pass that skins every vertex, and the skinned vertices and
//! indices the drawing reads.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3};

use super::model::Model;
use super::pose::{Bone, bone};
use crate::base::{Assets, ChangedFile};
use crate::gpu::bindings::uniform_buffer;
use crate::gpu::compute::{Binding, Kernel, KernelReload, read_buffer, storage_buffer};
use crate::gpu::{BuildError, Gpu, GpuProfiler, ReadbackError};

const FILE: &str = "skinned/skin.wgsl";

/// `struct SkinParams` in `shaders/skinned/bones.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct SkinParams {
    /// First bone of the half written this frame.
    pub joint_offset: u32,
    /// Joints per half.
    pub joint_count: u32,
    /// 1: skin with the matrices even where a bone's quaternion would do.
    pub force_matrices: u32,
    /// Vertices to skin.
    pub vertex_count: u32,
}

/// `struct BindVertex` in `shaders/skinned/skin.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct BindVertex {
    position: [f32; 3],
    joints_01: u32,
    normal: [f32; 3],
    joints_23: u32,
    weights: [f32; 4],
}

/// Bytes of one skinned vertex (position and normal as vec4s).
pub const SKINNED_VERTEX_BYTES: u64 = 32;

/// One vertex's surface as the skin's draw reads it (`vs_body`'s
/// locations 2 and 3): base colour and metallic, then roughness.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct SurfaceVertex {
    colour_metallic: [f32; 4],
    roughness: f32,
}

/// The character's GPU buffers and its skinning kernel.
pub struct SkinGpu {
    kernel: (Kernel, Binding),
    /// `SkinParams`.
    pub params: wgpu::Buffer,
    /// Two frames of bones.
    pub bones: wgpu::Buffer,
    /// Two frames of bone matrices.
    pub matrices: wgpu::Buffer,
    /// Skinned positions and normals (also a vertex buffer).
    pub skinned: wgpu::Buffer,
    /// Triangle indices.
    pub indices: wgpu::Buffer,
    /// Each vertex's surface ([`SurfaceVertex`], a vertex buffer).
    pub surfaces: wgpu::Buffer,
    joint_count: u32,
    vertex_count: u32,
    index_count: u32,
    half: u32,
}

impl SkinGpu {
    /// Uploads `model`'s bind pose and compiles the kernel.
    pub fn new(gpu: &Gpu, assets: &Assets, model: &Model) -> Result<Self, BuildError> {
        let joint_count = model.joints.len().max(1) as u32;
        let vertex_count = model.vertices.len() as u32;
        gpu.check_storage(
            &format!("{}: {vertex_count} vertices", model.source),
            u64::from(vertex_count) * 48,
        )?;
        let bind: Vec<BindVertex> = model
            .vertices
            .iter()
            .map(|v| BindVertex {
                position: v.position.to_array(),
                joints_01: v.joints[0] | (v.joints[1] << 16),
                normal: v.normal.to_array(),
                joints_23: v.joints[2] | (v.joints[3] << 16),
                weights: v.weights,
            })
            .collect();
        let none = wgpu::BufferUsages::empty();
        let bind_pose = storage_buffer(
            gpu,
            "skinned.bind_pose",
            size_of_val(&bind[..]) as u64,
            none,
        );
        gpu.queue
            .write_buffer(&bind_pose, 0, bytemuck::cast_slice(&bind));
        let skinned = storage_buffer(
            gpu,
            "skinned.vertices",
            u64::from(vertex_count) * SKINNED_VERTEX_BYTES,
            wgpu::BufferUsages::VERTEX,
        );
        let indices = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("skinned.indices"),
            size: (model.indices.len().max(3) * 4) as u64,
            usage: wgpu::BufferUsages::INDEX | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        gpu.queue
            .write_buffer(&indices, 0, bytemuck::cast_slice(&model.indices));
        let surfaces: Vec<SurfaceVertex> = (model.vertices.iter())
            .map(|v| {
                let [r, g, b] = v.material.colour;
                SurfaceVertex {
                    colour_metallic: [r, g, b, v.material.metallic],
                    roughness: v.material.roughness,
                }
            })
            .collect();
        let surfaces_buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("skinned.surfaces"),
            size: (size_of_val(&surfaces[..]) as u64).max(20),
            usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        gpu.queue
            .write_buffer(&surfaces_buffer, 0, bytemuck::cast_slice(&surfaces));
        let bones = storage_buffer(
            gpu,
            "skinned.bones",
            u64::from(joint_count) * 2 * size_of::<Bone>() as u64,
            none,
        );
        let matrices = storage_buffer(
            gpu,
            "skinned.bone_matrices",
            u64::from(joint_count) * 2 * 64,
            none,
        );
        let params = uniform_buffer(&gpu.device, "skinned.params", size_of::<SkinParams>());
        let kernel = Kernel::new(gpu, assets, FILE, "skin_vertices")?;
        let binding = kernel.bind(
            gpu,
            &[
                (0, &bind_pose),
                (1, &skinned),
                (8, &params),
                (9, &bones),
                (10, &matrices),
            ],
        );
        Ok(Self {
            kernel: (kernel, binding),
            params,
            bones,
            matrices,
            skinned,
            indices,
            surfaces: surfaces_buffer,
            joint_count,
            vertex_count,
            index_count: model.indices.len() as u32,
            half: 0,
        })
    }

    /// Writes this frame's bones from the joints' skin transforms into the
    /// half the last frame did not use.
    pub fn write_bones(&mut self, gpu: &Gpu, skin: &[Mat4], force_matrices: bool) {
        self.half = 1 - self.half;
        let offset = self.half * self.joint_count;
        let count = (skin.len() as u32).min(self.joint_count) as usize;
        let bones: Vec<Bone> = skin[..count].iter().map(bone).collect();
        let matrices: Vec<[[f32; 4]; 4]> =
            skin[..count].iter().map(Mat4::to_cols_array_2d).collect();
        gpu.queue.write_buffer(
            &self.bones,
            u64::from(offset) * size_of::<Bone>() as u64,
            bytemuck::cast_slice(&bones),
        );
        gpu.queue.write_buffer(
            &self.matrices,
            u64::from(offset) * 64,
            bytemuck::cast_slice(&matrices),
        );
        let params = SkinParams {
            joint_offset: offset,
            joint_count: self.joint_count,
            force_matrices: u32::from(force_matrices),
            vertex_count: self.vertex_count,
        };
        gpu.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
    }

    /// Records the skinning pass.
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder, profiler: &mut GpuProfiler) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("skinned.skin"),
            timestamp_writes: profiler.compute_pass("skinned.skin"),
        });
        let (kernel, binding) = &self.kernel;
        kernel.dispatch(&mut pass, binding, self.vertex_count, 256);
    }

    /// Rebuilds the kernel when its files are saved.
    pub fn reload(&mut self, gpu: &Gpu, assets: &Assets, changed: &[ChangedFile]) -> KernelReload {
        let mut report = KernelReload::default();
        let (kernel, binding) = &mut self.kernel;
        report.kernel(gpu, assets, changed, kernel, &mut [binding]);
        report
    }

    /// Vertices skinned.
    pub fn vertex_count(&self) -> u32 {
        self.vertex_count
    }

    /// Indices drawn.
    pub fn index_count(&self) -> u32 {
        self.index_count
    }

    /// Memory the skinning pass moves: the bind-pose vertex read, the
    /// skinned vertex written (bones come from cache).
    pub fn bytes_per_pass(&self) -> u64 {
        u64::from(self.vertex_count) * (size_of::<BindVertex>() as u64 + SKINNED_VERTEX_BYTES)
    }

    /// The skinned positions and normals (waits for the GPU).
    pub fn read_skinned(&self, gpu: &Gpu) -> Result<Vec<(Vec3, Vec3)>, ReadbackError> {
        let raw: Vec<[f32; 8]> = read_buffer(gpu, &self.skinned, self.vertex_count as usize)?;
        Ok(raw
            .iter()
            .map(|v| (Vec3::new(v[0], v[1], v[2]), Vec3::new(v[4], v[5], v[6])))
            .collect())
    }
}
