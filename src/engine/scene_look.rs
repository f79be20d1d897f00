//! What the compositor does to the shared scene once the last layer in
//! it has been blended, before any layer laid over it: its ambient
//! occlusion (`occlusion.rs`), its temporal anti-aliasing
//! (`antialias.rs`) and its lens (`lens.rs`), in that order, each
//! reading the composite and the scene's depth by compute and handing
//! back a picture the compositor lays over the composite.

use super::antialias::TemporalAntialias;
use super::compositor::{BlendUniforms, CompositorError, MULTIPLY};
use super::lens::{LensSettings, SceneLens};
use super::occlusion::{Occlusion, OcclusionUniforms};
use super::world::SceneCamera;
use glam::Mat4;

use super::camera::CameraUniform;
use crate::base::clock::Clock;
use crate::engine::LayerEnv;
use crate::gpu::GpuProfiler;
use crate::gpu::bindings::uniform_buffer;
use crate::params::Registry;

/// The scene's passes, in the order they run.
#[derive(Debug, Clone, Copy)]
pub enum ScenePass {
    /// Ambient occlusion, multiplied in.
    Occlusion,
    /// The frames gathered, edges settled.
    Antialias,
    /// Depth of field and motion blur.
    Lens,
}

impl ScenePass {
    /// Every pass, in order.
    pub const ALL: [ScenePass; 3] = [ScenePass::Occlusion, ScenePass::Antialias, ScenePass::Lens];
}

/// What the passes see the scene by this frame: the scene's camera as the
/// layers drew with it (shifted), and its unshifted clip space.
pub type SceneView = (CameraUniform, Mat4);

/// A pass's result: the picture, the blend uniforms' buffer and values
/// that lay it over the composite, and the blend's name in the HUD.
pub type Laid = (wgpu::TextureView, wgpu::Buffer, BlendUniforms, &'static str);

/// The three passes, the scene's camera they see it by, and a blend
/// uniform buffer each (a frame's uploads land before any pass runs, so
/// each blend has its own).
pub struct SceneLook {
    occlusion: Occlusion,
    antialias: TemporalAntialias,
    lens: SceneLens,
    camera: SceneCamera,
    blends: [wgpu::Buffer; 3],
}

impl SceneLook {
    /// Compiles the passes.
    pub fn new(env: &LayerEnv<'_>) -> Result<Self, CompositorError> {
        let failed = |file| move |reason| CompositorError { file, reason };
        let (gpu, assets) = (env.gpu, env.assets);
        let blend = |label| uniform_buffer(&gpu.device, label, size_of::<BlendUniforms>());
        Ok(Self {
            occlusion: Occlusion::new(gpu, assets).map_err(failed("compositor/occlusion.wgsl"))?,
            antialias: TemporalAntialias::new(gpu, assets)
                .map_err(failed("compositor/antialias.wgsl"))?,
            lens: SceneLens::new(gpu, assets).map_err(failed("compositor/lens.wgsl"))?,
            camera: SceneCamera::default(),
            blends: [
                blend("compositor.occlusion"),
                blend("compositor.antialias.blend"),
                blend("compositor.lens"),
            ],
        })
    }

    /// The scene's camera this frame for a picture of `size`, once for
    /// all the passes.
    pub fn seen(&self, registry: &Registry, clock: &Clock, size: [u32; 2]) -> SceneView {
        let steady = self.camera.steady(registry, clock.time, size);
        let camera = SceneCamera::shifted(steady, registry, clock, size);
        (camera, steady.view_proj())
    }

    /// Records `pass` over `now` (the composite) and `depth`, both of
    /// `size` pixels, when the scene's parameters ask for it.
    pub fn record(
        &mut self,
        pass: ScenePass,
        env: &LayerEnv<'_>,
        registry: &Registry,
        seen: &SceneView,
        now: &wgpu::TextureView,
        depth: &wgpu::TextureView,
        size: [u32; 2],
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) -> Option<Laid> {
        let (gpu, (camera, steady)) = (env.gpu, seen);
        let (picture, blend, label) = match pass {
            ScenePass::Occlusion => {
                let (amount, (radius, intensity)) = Occlusion::wanted(registry)?;
                let uniforms = OcclusionUniforms::of_camera(camera, size, radius, intensity);
                let picture = (self.occlusion).trace(gpu, encoder, profiler, depth, &uniforms);
                (
                    picture,
                    BlendUniforms::new(MULTIPLY, amount),
                    "compositor.occlusion",
                )
            }
            ScenePass::Antialias => {
                let keep = self.antialias.wanted(registry)?;
                let picture = (self.antialias).resolve(
                    gpu, encoder, profiler, now, depth, size, camera, *steady, keep,
                );
                (
                    picture,
                    BlendUniforms::new(0, 1.0),
                    "compositor.antialias.blend",
                )
            }
            ScenePass::Lens => {
                let Some(settings) = LensSettings::of(registry) else {
                    self.lens.rest();
                    return None;
                };
                let picture = (self.lens).apply(
                    gpu, encoder, profiler, now, depth, size, camera, *steady, settings,
                );
                (picture, BlendUniforms::new(0, 1.0), "compositor.lens")
            }
        };
        Some((
            picture.clone(),
            self.blends[pass as usize].clone(),
            blend,
            label,
        ))
    }
}
