//! The impostor atlas of a forest's grown crowns (`shaders/forest/
//! atlas.wgsl`, captured by `shaders/forest/impostor.wgsl`): when a
//! forest's crowns are grown, each is drawn whole from sixteen directions
//! (eight around it, at two heights) into an array texture, a layer a
//! view, a cell a crown, and each layer's mip levels made from it. The
//! trees not drawn whole then draw as one square each showing their
//! crown's cell of the nearest view, lit by the captured normals and
//! tinted as their own (`vs_impostor` in `shaders/forest/draw.wgsl`): the
//! branches and leaves the colony grew, to the horizon, at the cost of a
//! quad a tree.

use bytemuck::{Pod, Zeroable};

use super::sim::ForestSim;
use crate::gpu::Gpu;
use crate::gpu::bindings::uniform_buffer;
use crate::gpu::raster::{DEPTH_FORMAT, Depth, depth_state};

/// Texels across one crown's cell.
pub const CELL: u32 = 128;
/// Mip levels kept: the cell 128 texels across down to 8, so a level's
/// texels never mix two cells.
pub const LEVELS: u32 = 5;
/// Views captured: `VIEWS_AROUND` × `RINGS` in `atlas.wgsl`.
pub const VIEWS: u32 = 16;
/// Crowns a row of the atlas (`ATLAS_COLUMNS`).
pub const COLUMNS: u32 = 8;
/// What a texel keeps: leafiness, leaf brightness, coverage; and the
/// normal.
const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// `struct Capture` in `shaders/forest/impostor.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct Capture {
    view: u32,
    rows: u32,
    cell: f32,
    _pad: u32,
}

/// The captured views of every crown, and what the impostors bind.
pub struct ImpostorAtlas {
    /// Rows of crowns in each layer.
    pub rows: u32,
    /// The leaves and normals as the impostors sample them (group 2).
    leaves: wgpu::Texture,
    normals: wgpu::Texture,
    sampler: wgpu::Sampler,
}

impl ImpostorAtlas {
    /// Captures every crown of `sim` with `pipelines` (`vs_capture` and
    /// `fs_capture`, then `fs_downsample` for each coarser level),
    /// submitted at once.
    pub fn capture(gpu: &Gpu, pipelines: &CapturePipelines, sim: &ForestSim) -> Self {
        let pipeline = &pipelines.capture;
        let crowns = sim.crown_count.max(1);
        let rows = crowns.div_ceil(COLUMNS);
        let size = wgpu::Extent3d {
            width: CELL * COLUMNS,
            height: CELL * rows,
            depth_or_array_layers: VIEWS,
        };
        let texture = |label| {
            gpu.device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size,
                mip_level_count: LEVELS,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: FORMAT,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT
                    | wgpu::TextureUsages::TEXTURE_BINDING,
                view_formats: &[],
            })
        };
        let (leaves, normals) = (
            texture("forest.atlas_leaves"),
            texture("forest.atlas_normals"),
        );
        let depth = gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("forest.atlas_depth"),
            size: wgpu::Extent3d {
                depth_or_array_layers: 1,
                ..size
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: DEPTH_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        });
        let depth_view = depth.create_view(&Default::default());
        let [segments, leaf_clusters, table, reaches] = &sim.crowns;
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        for view in 0..VIEWS {
            let uniform = uniform_buffer(&gpu.device, "forest.capture", size_of::<Capture>());
            let capture = Capture {
                view,
                rows,
                cell: CELL as f32,
                _pad: 0,
            };
            gpu.queue
                .write_buffer(&uniform, 0, bytemuck::bytes_of(&capture));
            let group = crate::gpu::raster::buffers_group(
                &gpu.device,
                pipeline,
                "forest.capture",
                &[
                    (0, &uniform),
                    (12, segments),
                    (13, leaf_clusters),
                    (14, table),
                    (16, reaches),
                ],
            );
            let (leaf_layer, normal_layer) = (level(&leaves, view, 0), level(&normals, view, 0));
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("forest.capture"),
                color_attachments: &[cleared(&leaf_layer), cleared(&normal_layer)],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &depth_view,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Discard,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.draw(0..CROWN_VERTICES, 0..sim.crown_count);
            drop(pass);
            for finer in 0..LEVELS - 1 {
                let group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("forest.atlas_mip"),
                    layout: &pipelines.downsample.get_bind_group_layout(0),
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: wgpu::BindingResource::TextureView(&level(
                                &leaves, view, finer,
                            )),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: wgpu::BindingResource::TextureView(&level(
                                &normals, view, finer,
                            )),
                        },
                    ],
                });
                let coarser = (
                    level(&leaves, view, finer + 1),
                    level(&normals, view, finer + 1),
                );
                let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                    label: Some("forest.atlas_mip"),
                    color_attachments: &[cleared(&coarser.0), cleared(&coarser.1)],
                    depth_stencil_attachment: None,
                    timestamp_writes: None,
                    occlusion_query_set: None,
                    multiview_mask: None,
                });
                pass.set_pipeline(&pipelines.downsample);
                pass.set_bind_group(0, &group, &[]);
                pass.draw(0..3, 0..1);
            }
        }
        gpu.queue.submit([encoder.finish()]);
        let sampler = gpu.device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("forest.atlas"),
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            mipmap_filter: wgpu::MipmapFilterMode::Linear,
            ..Default::default()
        });
        Self {
            rows,
            leaves,
            normals,
            sampler,
        }
    }

    /// The atlas as an impostor's shading binds it at group 2 (`layout`).
    pub fn group(&self, gpu: &Gpu, layout: &wgpu::BindGroupLayout) -> wgpu::BindGroup {
        self.bound(gpu, layout, true)
    }

    /// The leaves alone, as what only cuts the crowns out binds them (the
    /// splat, an impostor casting into the shadow map), at group 2.
    pub fn leaves_group(&self, gpu: &Gpu, layout: &wgpu::BindGroupLayout) -> wgpu::BindGroup {
        self.bound(gpu, layout, false)
    }

    fn bound(&self, gpu: &Gpu, layout: &wgpu::BindGroupLayout, normals: bool) -> wgpu::BindGroup {
        let array = |texture: &wgpu::Texture| {
            texture.create_view(&wgpu::TextureViewDescriptor {
                dimension: Some(wgpu::TextureViewDimension::D2Array),
                ..Default::default()
            })
        };
        let views = [array(&self.leaves), array(&self.normals)];
        let mut entries = vec![
            wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::TextureView(&views[0]),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::Sampler(&self.sampler),
            },
        ];
        if normals {
            entries.push(wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::TextureView(&views[1]),
            });
        }
        gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("forest.atlas"),
            layout,
            entries: &entries,
        })
    }
}

/// Mip level `mip` of layer `layer` of `texture`, to draw into or read.
fn level(texture: &wgpu::Texture, layer: u32, mip: u32) -> wgpu::TextureView {
    texture.create_view(&wgpu::TextureViewDescriptor {
        dimension: Some(wgpu::TextureViewDimension::D2),
        base_array_layer: layer,
        array_layer_count: Some(1),
        base_mip_level: mip,
        mip_level_count: Some(1),
        ..Default::default()
    })
}

/// `view` drawn into, cleared to nothing first.
fn cleared(view: &wgpu::TextureView) -> Option<wgpu::RenderPassColorAttachment<'_>> {
    Some(wgpu::RenderPassColorAttachment {
        view,
        depth_slice: None,
        resolve_target: None,
        ops: wgpu::Operations {
            load: wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
            store: wgpu::StoreOp::Store,
        },
    })
}

/// Vertices of a grown crown (`CROWN_VERTICES` in `shaders/forest/
/// crown.wgsl`): a prism of 24 a branch and the trunk, two triangles a
/// leaf cluster.
const CROWN_VERTICES: u32 =
    (super::crowns::CROWN_SEGMENTS as u32 + 1) * 24 + super::crowns::CROWN_LEAVES as u32 * 6;

/// The atlas's pipelines over `module` (`shaders/forest/impostor.wgsl`).
pub struct CapturePipelines {
    /// The crowns drawn into a layer's first level: two targets, depth
    /// tested and written.
    capture: wgpu::RenderPipeline,
    /// A level from the one above.
    downsample: wgpu::RenderPipeline,
}

impl CapturePipelines {
    /// Builds both.
    pub fn new(gpu: &Gpu, module: &wgpu::ShaderModule) -> Self {
        let target = Some(wgpu::ColorTargetState {
            format: FORMAT,
            blend: None,
            write_mask: wgpu::ColorWrites::ALL,
        });
        let pipeline = |label, (vertex, fragment), depth| {
            gpu.device
                .create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                    label: Some(label),
                    layout: None,
                    vertex: wgpu::VertexState {
                        module,
                        entry_point: Some(vertex),
                        compilation_options: Default::default(),
                        buffers: &[],
                    },
                    primitive: wgpu::PrimitiveState::default(),
                    depth_stencil: depth_state(depth),
                    multisample: Default::default(),
                    fragment: Some(wgpu::FragmentState {
                        module,
                        entry_point: Some(fragment),
                        compilation_options: Default::default(),
                        targets: &[target.clone(), target.clone()],
                    }),
                    multiview_mask: None,
                    cache: None,
                })
        };
        Self {
            capture: pipeline(
                "forest.capture",
                ("vs_capture", "fs_capture"),
                Depth::Written,
            ),
            downsample: pipeline(
                "forest.atlas_mip",
                ("vs_fullscreen", "fs_downsample"),
                Depth::None,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::crowns::declared;
    use super::*;

    #[test]
    fn the_atlas_shaders_lay_it_out_as_it_is_made() {
        let atlas = include_str!("../../../shaders/forest/atlas.wgsl");
        let around: u32 = declared(atlas, "VIEWS_AROUND")
            .and_then(|v| v.trim_end_matches('u').parse().ok())
            .unwrap_or(0);
        let rings: u32 = declared(atlas, "RINGS")
            .and_then(|v| v.trim_end_matches('u').parse().ok())
            .unwrap_or(0);
        assert_eq!(around * rings, VIEWS);
        assert_eq!(
            declared(atlas, "ATLAS_COLUMNS"),
            Some(format!("{COLUMNS}u"))
        );
        let [x, y, z] = super::super::crowns::CAPTURE_CENTRE;
        assert_eq!(
            declared(atlas, "CAPTURE_CENTRE"),
            Some(format!("vec3<f32>({x:?}, {y:?}, {z:?})"))
        );
        let crown = include_str!("../../../shaders/forest/crown.wgsl");
        assert_eq!(
            declared(crown, "CROWN_VERTICES"),
            Some("PRISMS * PRISM_VERTICES + CROWN_LEAVES * 6u".to_string())
        );
        assert_eq!(CROWN_VERTICES, 161 * 24 + 96 * 6);
    }
}
