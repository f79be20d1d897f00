//! The drawing and binding helpers the coming layers build on: a mesh
//! pipeline over vertex and index buffers (glTF characters), and storage
//! textures in bind group layouts (the forest's density maps).

use sylva::gpu::bindings::{Slot, bind, layout_for};
use sylva::gpu::raster::{Attachments, mesh_pipeline};
use sylva::gpu::{HDR_FORMAT, RenderTarget, read_rgba16f};

use crate::support;

fn module(source: &str) -> wgpu::ShaderModule {
    support::gpu()
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("raster.test"),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        })
}

#[test]
fn a_mesh_pipeline_draws_indexed_vertex_buffers() {
    let gpu = support::gpu();
    let shader = module(
        "@vertex fn vs(@location(0) p: vec2<f32>) -> @builtin(position) vec4<f32> {\n\
             return vec4<f32>(p, 0.0, 1.0);\n\
         }\n\
         @fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }\n",
    );
    let attributes = wgpu::vertex_attr_array![0 => Float32x2];
    let layout = wgpu::VertexBufferLayout {
        array_stride: 8,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &attributes,
    };
    let pipeline = mesh_pipeline(
        &gpu.device,
        &shader,
        "raster.mesh",
        "vs",
        "fs",
        &[Some(layout)],
        Attachments {
            format: HDR_FORMAT,
            blend: None,
            depth: sylva::gpu::raster::Depth::None,
        },
    );
    // The left half of clip space as two triangles sharing an edge.
    let corners: [[f32; 2]; 4] = [[-1.0, -1.0], [0.0, -1.0], [0.0, 1.0], [-1.0, 1.0]];
    let indices: [u16; 6] = [0, 1, 2, 0, 2, 3];
    let buffer = |label, bytes: &[u8], usage| {
        let buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.len().next_multiple_of(4) as u64,
            usage: usage | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut padded = bytes.to_vec();
        padded.resize(bytes.len().next_multiple_of(4), 0);
        gpu.queue.write_buffer(&buffer, 0, &padded);
        buffer
    };
    let vertices = buffer(
        "mesh.vertices",
        bytemuck::cast_slice(&corners),
        wgpu::BufferUsages::VERTEX,
    );
    let index = buffer(
        "mesh.indices",
        bytemuck::cast_slice(&indices),
        wgpu::BufferUsages::INDEX,
    );
    let target = RenderTarget::new(&gpu.device, "mesh.target", [8, 4], HDR_FORMAT);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("mesh"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &target.view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_vertex_buffer(0, vertices.slice(..));
        pass.set_index_buffer(index.slice(..), wgpu::IndexFormat::Uint16);
        pass.draw_indexed(0..6, 0, 0..1);
    }
    gpu.queue.submit([encoder.finish()]);
    let pixels = read_rgba16f(&gpu, &target.texture).unwrap_or_else(|e| panic!("{e}"));
    for (i, p) in pixels.iter().enumerate() {
        let left = i % 8 < 4;
        assert_eq!(p[0] > 0.5, left, "pixel {} of row {}", i % 8, i / 8);
    }
}

#[test]
fn a_compute_pass_paints_a_storage_texture_bound_by_the_helpers() {
    let gpu = support::gpu();
    let format = wgpu::TextureFormat::Rgba16Float;
    let layout = layout_for(
        &gpu.device,
        "paint.layout",
        wgpu::ShaderStages::COMPUTE,
        &[Slot::StorageTexture(
            format,
            wgpu::StorageTextureAccess::WriteOnly,
        )],
    );
    let shader = module(
        "@group(0) @binding(0) var map: texture_storage_2d<rgba16float, write>;\n\
         @compute @workgroup_size(8, 8) fn paint(@builtin(global_invocation_id) id: vec3<u32>) {\n\
             textureStore(map, vec2<i32>(id.xy), vec4<f32>(f32(id.x), f32(id.y), 0.0, 1.0));\n\
         }\n",
    );
    let pipeline_layout = gpu
        .device
        .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("paint"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
    let pipeline = gpu
        .device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("paint"),
            layout: Some(&pipeline_layout),
            module: &shader,
            entry_point: Some("paint"),
            compilation_options: Default::default(),
            cache: None,
        });
    let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("paint.map"),
        size: wgpu::Extent3d {
            width: 8,
            height: 8,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::STORAGE_BINDING | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let view = texture.create_view(&Default::default());
    let group = bind(
        &gpu,
        &layout,
        "paint.group",
        &[wgpu::BindingResource::TextureView(&view)],
    );
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
    gpu.queue.submit([encoder.finish()]);
    let pixels = read_rgba16f(&gpu, &texture).unwrap_or_else(|e| panic!("{e}"));
    for (i, p) in pixels.iter().enumerate() {
        assert_eq!([p[0], p[1]], [(i % 8) as f32, (i / 8) as f32], "texel {i}");
    }
}

/// A plain HDR texture the compute form cannot store to, so the same
/// pipeline draws into it with the rasterizer.
fn raster_only_target(size: u32) -> wgpu::Texture {
    support::gpu()
        .device
        .create_texture(&wgpu::TextureDescriptor {
            label: Some("raster.only"),
            size: wgpu::Extent3d {
                width: size,
                height: size,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: HDR_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        })
}

#[test]
fn a_fullscreen_pass_run_as_compute_gives_the_rasterizers_pixels() {
    let gpu = support::gpu();
    let source = String::from(
        "struct FullscreenVertex {\n    @builtin(position) position: vec4<f32>,\n    @location(0) uv: vec2<f32>,\n}\n\
           @vertex fn vs_fullscreen(@builtin(vertex_index) i: u32) -> FullscreenVertex {\n\
               let c = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));\n\
               return FullscreenVertex(vec4<f32>(c * 2.0 - 1.0, 0.0, 1.0), vec2<f32>(c.x, 1.0 - c.y));\n\
           }\n\
           @group(0) @binding(0) var<uniform> tint: vec4<f32>;\n\
           @fragment\nfn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {\n\
               return vec4<f32>(in.uv, fract(in.position.x * 0.37 + in.position.y * 0.11), 1.0) * tint;\n\
           }\n",
    );
    let layout = sylva::gpu::bindings::layout(&gpu.device, "raster.tint", &[Slot::Uniform]);
    let pipeline = sylva::gpu::FullscreenPipeline::new(
        &gpu.device,
        "raster.fullscreen",
        &source,
        &layout,
        HDR_FORMAT,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(pipeline.computes(), "the shader runs as compute");
    let tint = sylva::gpu::bindings::uniform_buffer(&gpu.device, "raster.tint", 16);
    gpu.queue
        .write_buffer(&tint, 0, bytemuck::cast_slice(&[0.5f32, 2.0, 1.0, 1.0]));
    let group = bind(&gpu, &layout, "raster.tint", &[tint.as_entire_binding()]);
    let stored = RenderTarget::new(&gpu.device, "raster.stored", [24, 24], HDR_FORMAT);
    let drawn = raster_only_target(24);
    let drawn_view = drawn.create_view(&Default::default());
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    pipeline.draw(&mut encoder, "raster.stored", &stored.view, &group, None);
    pipeline.draw(&mut encoder, "raster.drawn", &drawn_view, &group, None);
    gpu.queue.submit([encoder.finish()]);
    let a = read_rgba16f(&gpu, &stored.texture).unwrap_or_else(|e| panic!("{e}"));
    let b = read_rgba16f(&gpu, &drawn).unwrap_or_else(|e| panic!("{e}"));
    for (i, (p, q)) in a.iter().zip(&b).enumerate() {
        for c in 0..4 {
            assert!(
                (p[c] - q[c]).abs() < 2e-3,
                "pixel {i} channel {c}: compute {p:?}, raster {q:?}"
            );
        }
    }
    assert!(
        a[24 * 23 + 23][1] > 1.8,
        "the uv reaches the bottom right: {:?}",
        a[24 * 23 + 23]
    );
}
