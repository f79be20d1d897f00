//! The outputs tier: everywhere a finished frame goes, each an [`Output`]
//! (ruffle's `RenderTarget`, grown to a show's whole life: `record` the
//! frame's pictures into its commands, `submitted` after they run,
//! `status` for the HUD, `finish` at the end). The engine renders each
//! frame into a picture ([`Picture`]); the show warps each projector's
//! region of it (an outputs file, `plan`, drawn by [`MappedOutputs`] with
//! `geometry` and `warp`); then every output takes what it wants of these
//! [`Pictures`]: a texture to read back (PNG frames, `--video`, tests), a
//! window's surface ([`SurfaceOutput`]), a projector's window, every
//! sender and the recording ([`send`]); and the lighting fixtures of the
//! outputs file take their pixels' colours from them as DMX ([`dmx`]).

pub mod dmx;
pub mod geometry;
pub mod grips;
mod mapped;
pub mod plan;
pub mod send;
pub mod stderr_tail;
mod surface;
mod texture;
pub mod video;
mod warp;

pub use crate::engine::blit::Blit;
pub use mapped::{
    MIN_SCALE, MappedOutput, MappedOutputs, Mask, PATTERN, SCALE, drawn_size, output_params,
    read_masks,
};
pub use plan::{OutputPlan, OutputsError, OutputsPlan};
pub use surface::SurfaceOutput;
pub use warp::WarpUniforms;

use crate::engine::picture::Picture;
use crate::gpu::{Gpu, GpuProfiler, RenderTarget, UniformLayout};

/// The outputs' structs uploaded to the GPU, each against its WGSL struct.
pub const OUTPUT_LAYOUTS: &[UniformLayout] = &[UniformLayout::of::<WarpUniforms>(
    "WarpUniforms",
    "outputs/warp.wgsl",
    "Warp",
)];

/// One frame's finished pictures: the canvas, and each output of the
/// outputs file warped from it.
pub struct Pictures<'a> {
    /// The canvas, as the engine rendered it.
    pub canvas: &'a Picture,
    /// Each output of the outputs file by name, drawn this frame.
    pub outputs: Vec<(&'a str, &'a RenderTarget)>,
    /// The show's time of the frame, seconds.
    pub time: f64,
}

impl Pictures<'_> {
    /// The canvas (`None`), or the output named `output`.
    pub fn texture(&self, output: Option<&str>) -> Option<&wgpu::Texture> {
        match output {
            None => Some(self.canvas.texture()),
            Some(name) => self.output(name).map(|t| &t.texture),
        }
    }

    /// The output named `name` of the outputs file, drawn this frame.
    pub fn output(&self, name: &str) -> Option<&RenderTarget> {
        self.outputs
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
    }
}

/// Somewhere a finished frame goes, for the whole of a show.
pub trait Output {
    /// The size in pixels the engine renders the canvas at for this
    /// output; `None` for one that takes the canvas at whatever size the
    /// show renders it (a sender, a projector).
    fn size(&self) -> Option<[u32; 2]>;

    /// Records taking this frame's `pictures` into `encoder` (after the
    /// engine's passes, before the frame's one submit), timed through
    /// `profiler`.
    fn record(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        pictures: &Pictures<'_>,
    );

    /// After the frame's commands were submitted: a readback mapped, a
    /// window's picture presented, a failure put on screen.
    fn submitted(&mut self) {}

    /// Its lines for the HUD: what it sends, how it fares.
    fn status(&self) -> Vec<String> {
        Vec::new()
    }

    /// The end of the show: its files written out; a line for each thing
    /// it did. Later calls find nothing left to finish.
    fn finish(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// A list of outputs as one: the canvas at the first size one asks for,
/// each recording in the list's order.
impl Output for Vec<Box<dyn Output>> {
    fn size(&self) -> Option<[u32; 2]> {
        self.iter().find_map(|o| o.size())
    }

    fn record(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        pictures: &Pictures<'_>,
    ) {
        for output in self.iter_mut() {
            output.record(gpu, encoder, profiler, pictures);
        }
    }

    fn submitted(&mut self) {
        self.iter_mut().for_each(|o| o.submitted());
    }

    fn status(&self) -> Vec<String> {
        self.iter().flat_map(|o| o.status()).collect()
    }

    fn finish(&mut self) -> Vec<String> {
        self.iter_mut().flat_map(|o| o.finish()).collect()
    }
}

/// Two outputs as one: the canvas rendered at the first's size (or the
/// second's, when the first takes any), each recording in turn.
pub struct Both<'a>(pub &'a mut dyn Output, pub &'a mut dyn Output);

impl Output for Both<'_> {
    fn size(&self) -> Option<[u32; 2]> {
        self.0.size().or_else(|| self.1.size())
    }

    fn record(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        pictures: &Pictures<'_>,
    ) {
        self.0.record(gpu, encoder, profiler, pictures);
        self.1.record(gpu, encoder, profiler, pictures);
    }

    fn submitted(&mut self) {
        self.0.submitted();
        self.1.submitted();
    }

    fn status(&self) -> Vec<String> {
        let mut lines = self.0.status();
        lines.extend(self.1.status());
        lines
    }

    fn finish(&mut self) -> Vec<String> {
        let mut lines = self.0.finish();
        lines.extend(self.1.finish());
        lines
    }
}
