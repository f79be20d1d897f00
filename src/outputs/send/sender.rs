//! One target fed as an [`Output`]: each frame its picture (the canvas or
//! one output of the outputs file) copied into a readback ([`Tap`]) whose
//! thread hands the pixels to the target's sink; a new size starts a new
//! tap (a resized window), a failure is on screen under the target's
//! label until it sends again.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};

use super::tap::{Counts, MakeSink, Tap};
use crate::base::status::ErrorLog;
use crate::gpu::{Gpu, GpuProfiler};
use crate::outputs::{Output, Pictures};

/// One target being fed.
pub struct Sender {
    label: String,
    /// The output it sends, or the canvas.
    output: Option<String>,
    /// What makes its sink: shared by each tap it has, one per frame size
    /// (a resized window finishes the old tap and starts a new one).
    make: Arc<Mutex<MakeSink>>,
    /// No thread could be started for it: not tried again every frame.
    stalled: bool,
    /// Its failure is on screen (under its label): cleared once it sends.
    failing: bool,
    tap: Option<Tap>,
    errors: ErrorLog,
}

impl Sender {
    /// Target `label` fed with `output` (none: the canvas) through sinks
    /// `make` makes; its failures said in `errors`.
    pub fn new(label: String, output: Option<String>, make: MakeSink, errors: ErrorLog) -> Self {
        Self {
            label,
            output,
            make: Arc::new(Mutex::new(make)),
            stalled: false,
            failing: false,
            tap: None,
            errors,
        }
    }

    /// Puts its failure on screen under its own label (two targets failing
    /// at once each keep their line), or clears it once it sends again.
    fn say(&mut self) {
        match self.tap.as_ref().and_then(|t| t.counts.failure()) {
            Some(why) => {
                self.errors
                    .report(&self.label, unlabelled(&self.label, &why));
                self.failing = true;
            }
            None if self.failing => {
                self.errors.clear(&self.label);
                self.failing = false;
            }
            None => {}
        }
    }

    /// A maker for one tap, calling the target's own.
    fn maker(&self) -> MakeSink {
        let shared = self.make.clone();
        Box::new(move |size| (shared.lock().unwrap_or_else(PoisonError::into_inner))(size))
    }

    /// Starts a tap for frames of `size` unless one runs or none can.
    fn tap_for(&mut self, device: &wgpu::Device, size: [u32; 2]) {
        if self.tap.as_ref().is_some_and(|t| t.size() != size) {
            // A new size (the window resized): a new tap, the old one
            // finished (a recording's take written out, and checked).
            if let Some(old) = self.tap.take()
                && let Some(why) = old.finish().failure()
            {
                self.errors
                    .report(&self.label, unlabelled(&self.label, &why));
            }
        }
        if self.tap.is_none() && !self.stalled {
            match Tap::start(
                device,
                "sylva-send",
                size,
                self.maker(),
                self.errors.clone(),
            ) {
                Ok(tap) => self.tap = Some(tap),
                Err(error) => {
                    self.stalled = true;
                    self.errors
                        .report(&self.label, format!("no thread: {error}"));
                }
            }
        }
    }
}

impl Output for Sender {
    fn size(&self) -> Option<[u32; 2]> {
        None
    }

    fn record(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        _profiler: &mut GpuProfiler,
        pictures: &Pictures<'_>,
    ) {
        let Some(texture) = pictures.texture(self.output.as_deref()) else {
            return;
        };
        self.tap_for(&gpu.device, [texture.width(), texture.height()]);
        if let Some(tap) = self.tap.as_mut() {
            tap.capture(encoder, texture, pictures.time);
        }
    }

    fn submitted(&mut self) {
        if let Some(tap) = self.tap.as_mut() {
            tap.submitted();
        }
        self.say();
    }

    fn status(&self) -> Vec<String> {
        let what = self.output.as_deref().unwrap_or("canvas");
        let line = match &self.tap {
            Some(tap) => {
                let counts = &tap.counts;
                format!(
                    "{} ({what}): {} sent, {} dropped{}",
                    self.label,
                    counts.sent.load(Ordering::Relaxed),
                    counts.dropped.load(Ordering::Relaxed),
                    counts
                        .failure()
                        .map(|f| format!(" — {f}"))
                        .unwrap_or_default()
                )
            }
            None => format!("{} ({what}): starting", self.label),
        };
        vec![line]
    }

    fn finish(&mut self) -> Vec<String> {
        let Some(tap) = self.tap.take() else {
            return Vec::new();
        };
        let counts: Arc<Counts> = tap.finish();
        let made = counts
            .made
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let failure = counts
            .failure()
            .map(|why| unlabelled(&self.label, &why).to_string());
        if let Some(why) = &failure {
            self.errors.report(&self.label, why);
        }
        vec![format!(
            "{}: {} frames sent, {} dropped{}{}{}",
            self.label,
            counts.sent.load(Ordering::Relaxed),
            counts.dropped.load(Ordering::Relaxed),
            latency(&counts),
            made.map(|m| format!(", wrote {m}")).unwrap_or_default(),
            failure
                .map(|f| format!("; FAILED: {f}"))
                .unwrap_or_default()
        )]
    }
}

/// `why` without the `label: ` it starts with (a sink names its target;
/// the error is shown under the target's label already).
fn unlabelled<'a>(label: &str, why: &'a str) -> &'a str {
    why.strip_prefix(label)
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(why)
}

/// The readback latency of `counts`, as the HUD and the log say it.
fn latency(counts: &Counts) -> String {
    counts
        .latency()
        .map(|[median, worst]| format!(", readback {median:.1} ms (worst {worst:.1})"))
        .unwrap_or_default()
}
