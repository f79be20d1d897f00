//! The rendering part of [`Show`]: what turns the layers into the frame's
//! picture and hands it on, kept as one field so that the frame's steps
//! borrow it beside the registry, the clock and the profiler.
//!
//! [`Show`]: super::Show

use std::collections::VecDeque;
use std::time::Duration;

use super::outputs::LiveOutputs;
use super::{FRAMES_IN_FLIGHT, Ground, ShowStartError};
use crate::engine::compositor::Compositor;
use crate::engine::frame::FrameUniforms;
use crate::engine::picture::Picture;
use crate::engine::stack::{Outgoing, Stack};
use crate::gpu::bindings::uniform_buffer;

/// The stack on stage and the one leaving it in a crossfade, the frame's
/// uniforms and finished picture, the outputs file's outputs drawn from
/// it, and the frames the GPU has not finished yet.
pub(super) struct Rendering {
    /// The layers on stage and their compositor.
    pub(super) stack: Stack,
    /// The stack leaving the stage in a crossfade, if one runs.
    pub(super) outgoing: Option<Outgoing>,
    /// The compositor the last crossfade left, for the next one.
    pub(super) spare_compositor: Option<Compositor>,
    /// The format the picture and the outputs are written in.
    pub(super) output_format: wgpu::TextureFormat,
    /// The engine's finished frame, which outputs take.
    pub(super) picture: Option<Picture>,
    /// Time, beat, size and seed, as every pass reads them.
    pub(super) frame_uniforms: wgpu::Buffer,
    /// Frames submitted that the GPU may not have finished, oldest first.
    pub(super) in_flight: VecDeque<wgpu::SubmissionIndex>,
    /// The outputs file in use, if any.
    pub(super) outputs: Option<LiveOutputs>,
}

impl Rendering {
    /// An empty stage on `ground`, writing `output_format`.
    pub(super) fn new(
        ground: &Ground,
        output_format: wgpu::TextureFormat,
    ) -> Result<Self, ShowStartError> {
        let compositor = Compositor::new(&ground.env(), output_format)?;
        let frame_uniforms = uniform_buffer(
            &ground.gpu.device,
            "frame.uniforms",
            size_of::<FrameUniforms>(),
        );
        Ok(Self {
            stack: Stack::new(compositor),
            outgoing: None,
            spare_compositor: None,
            output_format,
            picture: None,
            frame_uniforms,
            in_flight: VecDeque::new(),
            outputs: None,
        })
    }

    /// A compositor for a stack coming on stage during a crossfade: the one
    /// the last crossfade left, else a new one (on failure, reported, and
    /// the preset cuts in).
    pub(super) fn fresh_compositor(&mut self, ground: &Ground) -> Option<Compositor> {
        if let Some(spare) = self.spare_compositor.take() {
            return Some(spare);
        }
        Compositor::new(&ground.env(), self.output_format)
            .inspect_err(|e| ground.errors.report("crossfade", e))
            .ok()
    }

    /// Ends the crossfade that runs, if one does: the stack leaving goes,
    /// its compositor kept for the next crossfade.
    pub(super) fn end_crossfade(&mut self) {
        if let Some(done) = self.outgoing.take() {
            self.spare_compositor = Some(done.stack.compositor);
        }
    }

    /// Counts submission `index` in flight and says what to wait for: the
    /// frame [`FRAMES_IN_FLIGHT`] submissions back, once there is one, so
    /// the CPU never runs further ahead of the GPU.
    pub(super) fn submitted(&mut self, index: wgpu::SubmissionIndex) -> wgpu::PollType {
        self.in_flight.push_back(index);
        if self.in_flight.len() > FRAMES_IN_FLIGHT {
            wgpu::PollType::Wait {
                submission_index: self.in_flight.pop_front(),
                timeout: Some(Duration::from_secs(5)),
            }
        } else {
            wgpu::PollType::Poll
        }
    }
}
