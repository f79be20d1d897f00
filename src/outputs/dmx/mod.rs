//! Lighting out: the `[[dmx]]` fixtures of an outputs file, LED strips and
//! matrices whose pixels take their colour from the picture (the canvas,
//! an output's warped picture, or one layer's own before the blend), sent as DMX universes over Art-Net and
//! sACN. Each time the lighting is due (at the lower of the show's frame
//! rate and [`RATE`]), one compute pass ([`sample`]) averages each
//! pixel's rectangle of the picture into a small texture; the readback
//! tap of the senders brings it off the GPU on a worker thread, where
//! [`universes`] turns the colours into channel values and [`wire`] sends
//! them. The show never waits for the network: a failing socket is an
//! error on screen and is opened again.

pub mod fixtures;
mod sample;
pub mod universes;
pub mod wire;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub use fixtures::{FixturePlan, Layout, Protocol};
pub use wire::DmxError;

use crate::base::Assets;
use crate::base::status::ErrorLog;
use crate::gpu::{BuildError, Gpu, GpuProfiler};
use crate::outputs::send::tap::{Counts, MakeSink, Sink, Tap};
use sample::Sampler;

/// A fixture's `source` naming a layer's own picture, before its id:
/// `layer:fluid`.
pub const LAYER: &str = "layer:";

/// The most packets a second per universe: DMX512's own refresh at full
/// 512 channels, which E1.31 asks senders not to exceed.
pub const RATE: f64 = 44.0;

/// The fixtures of one outputs file, sent while the show plays.
pub struct DmxOut {
    fixtures: Arc<Vec<FixturePlan>>,
    sampler: Sampler,
    tap: Option<Tap>,
    /// Show time the next packets are due.
    due: f64,
    universes: usize,
    /// Set as the show ends, so the fixtures are sent black; a file read
    /// again swaps fixtures without a black frame.
    dark: Arc<AtomicBool>,
}

impl DmxOut {
    /// Starts sending `fixtures` (none: `None`), the sockets opened on the
    /// worker, so that a network that is down is an error on screen and
    /// not a show that will not start.
    pub fn start(
        gpu: &Gpu,
        assets: &Assets,
        fixtures: &[FixturePlan],
        errors: ErrorLog,
    ) -> Result<Option<Self>, BuildError> {
        if fixtures.is_empty() {
            return Ok(None);
        }
        let fixtures = Arc::new(fixtures.to_vec());
        let sampler = Sampler::new(gpu, assets, &fixtures)?;
        let opened = fixtures.clone();
        let dark = Arc::new(AtomicBool::new(false));
        let dark_at_end = dark.clone();
        let make: MakeSink = Box::new(move |_size| {
            let sink = wire::DmxSink::open(opened.clone(), dark_at_end.clone())?;
            Ok(Box::new(sink) as Box<dyn Sink>)
        });
        let tap = Tap::start(
            &gpu.device,
            "sylva dmx",
            sampler.size(),
            make,
            errors.clone(),
        );
        let tap = match tap {
            Ok(tap) => Some(tap),
            Err(error) => {
                errors.report("dmx", format!("no thread to send DMX on: {error}"));
                None
            }
        };
        let universes = universes::Patch::new(&fixtures).universes.len();
        Ok(Some(Self {
            fixtures,
            sampler,
            tap,
            due: f64::NEG_INFINITY,
            universes,
            dark,
        }))
    }

    /// Records sampling the pictures when the lighting is due at show
    /// time `time`: `picture` gives the canvas (`None`), an output's
    /// picture by name, or a layer's (`layer:ID`).
    pub fn record(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        picture: &dyn Fn(Option<&str>) -> Option<wgpu::TextureView>,
        time: f64,
    ) {
        let Some(tap) = self.tap.as_mut() else {
            return;
        };
        if time < self.due {
            return;
        }
        // Due again a period on, or now if the show jumped back or stalled.
        self.due = if time - self.due > 1.0 / RATE {
            time + 1.0 / RATE
        } else {
            self.due + 1.0 / RATE
        };
        self.sampler.record(gpu, encoder, profiler, picture);
        tap.capture(encoder, self.sampler.texture(), time);
    }

    /// After the frame's submit: the sampled colours go to the worker.
    pub fn submitted(&mut self) {
        if let Some(tap) = self.tap.as_mut() {
            tap.submitted();
        }
    }

    /// A line for the HUD and the log: what goes out, how it fares.
    pub fn status(&self) -> String {
        self.line(self.tap.as_ref().map(|t| t.counts.as_ref()))
    }

    fn line(&self, counts: Option<&Counts>) -> String {
        let pixels: usize = self.fixtures.iter().map(|f| f.layout.pixels()).sum();
        let (sent, dropped, failure) = match counts {
            Some(counts) => (
                counts.sent.load(Ordering::Relaxed),
                counts.dropped.load(Ordering::Relaxed),
                counts.failure(),
            ),
            None => (0, 0, Some("not started".into())),
        };
        let mut line = format!(
            "dmx: {} fixtures, {pixels} pixels in {} universes, {sent} frames sent, {dropped} passed over",
            self.fixtures.len(),
            self.universes
        );
        if let Some(failure) = failure {
            line.push_str(&format!(" ({failure})"));
        }
        line
    }

    /// Stops at the end of the show: the fixtures sent black, the
    /// sockets closed; what was sent.
    pub fn finish(&mut self) -> Option<String> {
        self.dark.store(true, Ordering::Release);
        let counts = self.tap.take()?.finish();
        Some(self.line(Some(&counts)))
    }
}

impl Drop for DmxOut {
    fn drop(&mut self) {
        if let Some(tap) = self.tap.take() {
            tap.finish();
        }
    }
}
