//! Drawing the character's skin from the skinned vertices and their
//! materials, over the branches: lit and opaque; a half-translucent skin,
//! lit by its materials' metal-rough factors, see-through where it faces
//! the eye and thickening towards the silhouette, with a rim light, so the
//! branches inside show through (as in Dendrite); or a glass
//! shell of light, brightest where it turns away from the eye; and its
//! depth from the key light into the scene's shadow map.

use bytemuck::{Pod, Zeroable};

use super::skin_gpu::{SKINNED_VERTEX_BYTES, SkinGpu, SurfaceVertex};
use crate::base::Assets;
use crate::engine::camera::CameraUniform;
use crate::engine::shadow::{ShadowMap, caster_pipeline};
use crate::gpu::bindings::uniform_buffer;
use crate::gpu::raster::{
    DEPTH_FORMAT, DepthBuffer, additive, begin_3d_pass, begin_scene_pass, buffers_group,
};
use crate::gpu::wgsl::Composer;
use crate::gpu::{BuildError, Gpu, GpuProfiler, HDR_FORMAT};

const FILE: &str = "skinned/body.wgsl";

/// How the skin is drawn, in the order of `<id>.body`.
pub const BODY_STYLES: [&str; 4] = ["glass", "lit", "hidden", "skin"];

/// A `<id>.body` choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyStyle {
    /// Added light, brightest at the silhouette.
    Glass,
    /// Opaque and lit.
    Lit,
    /// Not drawn.
    Hidden,
    /// Half-translucent and lit, with a rim light.
    Skin,
}

impl BodyStyle {
    /// The style at `index` of [`BODY_STYLES`].
    pub fn at(index: usize) -> Self {
        match index {
            1 => Self::Lit,
            2 => Self::Hidden,
            3 => Self::Skin,
            _ => Self::Glass,
        }
    }

    /// `BodyParams.style` in body.wgsl, and the index of its pipeline: 0
    /// lit, 1 glass, 2 skin.
    fn code(self) -> u32 {
        match self {
            Self::Lit => 0,
            Self::Skin => 2,
            Self::Glass | Self::Hidden => 1,
        }
    }
}

/// `struct BodyParams` in WGSL.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct BodyParams {
    /// Skin colour (linear).
    pub colour: [f32; 4],
    /// 0 lit, 1 glass, 2 skin.
    pub style: u32,
    /// Glass opacity.
    pub opacity: f32,
    _pad: [u32; 2],
}

impl BodyParams {
    /// Parameters for `style`.
    pub fn new(colour: [f32; 4], style: BodyStyle, opacity: f32) -> Self {
        Self {
            colour,
            style: style.code(),
            opacity,
            _pad: [0; 2],
        }
    }
}

/// A pipeline that draws the skin and its uniforms' bind group.
type Drawn = (wgpu::RenderPipeline, wgpu::BindGroup);

/// The skin's pipelines (lit, glass, skin), the caster's, and their
/// uniforms.
pub struct BodyRenderer {
    styles: [Drawn; 3],
    caster: Drawn,
    camera: wgpu::Buffer,
    light_camera: wgpu::Buffer,
    params: wgpu::Buffer,
    /// The scene's shadow map as each style's pipeline reads it.
    receiving: Option<[wgpu::BindGroup; 3]>,
    depth: DepthBuffer,
}

impl BodyRenderer {
    /// Compiles both pipelines.
    pub fn new(gpu: &Gpu, assets: &Assets) -> Result<Self, BuildError> {
        let composed = Composer::new(assets).file(FILE)?.finish()?;
        composed.validate()?;
        let layout = wgpu::VertexBufferLayout {
            array_stride: SKINNED_VERTEX_BYTES,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &wgpu::vertex_attr_array![0 => Float32x4, 1 => Float32x4],
        };
        let surfaces = wgpu::VertexBufferLayout {
            array_stride: size_of::<SurfaceVertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &wgpu::vertex_attr_array![2 => Float32x4, 3 => Float32],
        };
        gpu.scoped(FILE, || {
            let module = gpu
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(FILE),
                    source: wgpu::ShaderSource::Wgsl(composed.text().into()),
                });
            // Lit: opaque and depth-tested. Glass: added light that needs
            // no sorting, the far side culled so each skin layer glows once.
            // Skin: blended over the branches drawn before it, behind what
            // is nearer in the scene, and into the depth, so the layers
            // after it (the water) are hidden behind the body.
            let pipeline = |label, blend, depth_write, compare| {
                gpu.device
                    .create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                        label: Some(label),
                        layout: None,
                        vertex: wgpu::VertexState {
                            module: &module,
                            entry_point: Some("vs_body"),
                            compilation_options: Default::default(),
                            buffers: &[Some(layout.clone()), Some(surfaces.clone())],
                        },
                        primitive: wgpu::PrimitiveState {
                            cull_mode: Some(wgpu::Face::Back),
                            ..Default::default()
                        },
                        depth_stencil: Some(wgpu::DepthStencilState {
                            format: DEPTH_FORMAT,
                            depth_write_enabled: Some(depth_write),
                            depth_compare: Some(compare),
                            stencil: Default::default(),
                            bias: Default::default(),
                        }),
                        multisample: Default::default(),
                        fragment: Some(wgpu::FragmentState {
                            module: &module,
                            entry_point: Some("fs_body"),
                            compilation_options: Default::default(),
                            targets: &[Some(wgpu::ColorTargetState {
                                format: HDR_FORMAT,
                                blend,
                                write_mask: wgpu::ColorWrites::ALL,
                            })],
                        }),
                        multiview_mask: None,
                        cache: None,
                    })
            };
            let lit = pipeline("skinned.body.lit", None, true, wgpu::CompareFunction::Less);
            let glass = pipeline(
                "skinned.body.glass",
                Some(additive()),
                false,
                wgpu::CompareFunction::Always,
            );
            let skin = pipeline(
                "skinned.body.skin",
                Some(wgpu::BlendState::PREMULTIPLIED_ALPHA_BLENDING),
                true,
                wgpu::CompareFunction::Less,
            );
            let caster = caster_pipeline(
                &gpu.device,
                &module,
                "vs_body",
                "skinned.body.caster",
                &[Some(layout.clone()), Some(surfaces.clone())],
            );
            let camera = uniform_buffer(
                &gpu.device,
                "skinned.body.camera",
                size_of::<CameraUniform>(),
            );
            let light_camera = uniform_buffer(
                &gpu.device,
                "skinned.body.light_camera",
                size_of::<CameraUniform>(),
            );
            let params =
                uniform_buffer(&gpu.device, "skinned.body.params", size_of::<BodyParams>());
            // Only uniforms are bound: the vertices come with each draw.
            let buffers = [(0, &camera), (1, &params)];
            let group = |pipeline: &wgpu::RenderPipeline| {
                buffers_group(&gpu.device, pipeline, "skinned.body", &buffers)
            };
            let cast = [(0, &light_camera)];
            let cast = buffers_group(&gpu.device, &caster, "skinned.body.caster", &cast);
            Ok::<_, BuildError>(Self {
                styles: [lit, glass, skin].map(|pipeline| {
                    let group = group(&pipeline);
                    (pipeline, group)
                }),
                caster: (caster, cast),
                camera,
                light_camera,
                params,
                receiving: None,
                depth: DepthBuffer::default(),
            })
        })
    }

    /// This frame's uploads: the camera and the look, and a depth buffer
    /// for a target of `size`.
    pub fn prepare(
        &mut self,
        gpu: &Gpu,
        size: [u32; 2],
        camera: &CameraUniform,
        params: &BodyParams,
    ) {
        gpu.queue
            .write_buffer(&self.camera, 0, bytemuck::bytes_of(camera));
        let light = camera.from_light();
        gpu.queue
            .write_buffer(&self.light_camera, 0, bytemuck::bytes_of(&light));
        gpu.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(params));
        self.depth.at(&gpu.device, "skinned.body.depth", size);
    }

    /// Binds the scene's shadow map for the skin to read, once (the show
    /// keeps one map).
    pub fn receive(&mut self, gpu: &Gpu, map: &ShadowMap) {
        if self.receiving.is_none() {
            let group = |(pipeline, _): &Drawn| {
                map.receiving_group(&gpu.device, pipeline, "skinned.shadow")
            };
            self.receiving = Some(self.styles.each_ref().map(group));
        }
    }

    /// Records the skinned mesh over what `target` holds, in `style`
    /// (hidden: nothing), with what [`BodyRenderer::prepare`] uploaded.
    /// In the shared scene (`scene_depth`) the skin draws into its depth.
    pub fn draw(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        skin: &SkinGpu,
        target: &wgpu::TextureView,
        scene_depth: Option<&wgpu::TextureView>,
        style: BodyStyle,
    ) {
        let (Some(depth), Some(shadows)) = (self.depth.view(), &self.receiving) else {
            return;
        };
        if style == BodyStyle::Hidden {
            return;
        }
        // The pipelines stand in the order of the styles' codes.
        let at = style.code() as usize;
        let ((pipeline, group), shadow) = (&self.styles[at], &shadows[at]);
        let label = "skinned.draw.body";
        let load = wgpu::LoadOp::Load;
        let timestamps = profiler.render_pass(label);
        let mut pass = match scene_depth {
            Some(scene) => begin_scene_pass(encoder, label, target, load, scene, timestamps),
            None => begin_3d_pass(encoder, label, target, load, Some(depth), timestamps),
        };
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.set_bind_group(1, shadow, &[]);
        pass.set_vertex_buffer(0, skin.skinned.slice(..));
        pass.set_vertex_buffer(1, skin.surfaces.slice(..));
        pass.set_index_buffer(skin.indices.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..skin.index_count(), 0, 0..1);
    }

    /// Records the skinned mesh's depth from the key light into `map`.
    pub fn cast(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        skin: &SkinGpu,
        map: &ShadowMap,
    ) {
        let label = "skinned.cast.body";
        let timestamps = profiler.render_pass(label);
        let mut pass = map.cast_pass(encoder, label, timestamps);
        let (caster, group) = &self.caster;
        pass.set_pipeline(caster);
        pass.set_bind_group(0, group, &[]);
        pass.set_vertex_buffer(0, skin.skinned.slice(..));
        pass.set_vertex_buffer(1, skin.surfaces.slice(..));
        pass.set_index_buffer(skin.indices.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..skin.index_count(), 0, 0..1);
    }
}
