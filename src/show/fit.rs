//! Fitting a layer's size to the GPU it finds. A layer with
//! `<id>.auto_count` on has its `<id>.count` set, while the show plays
//! live, to the largest that keeps the whole frame within [`HEADROOM`] of
//! 60 fps with everything else the preset draws: a second after each
//! (re)build the layer's GPU time and the frame's are measured over
//! [`MEASURE_FRAMES`] frames (two where each is [`FAR_OVER`] times over the
//! budget: a count far too large for the device), and the count is scaled
//! by what is left of the budget (a fluid costs about count^(4/3): its
//! substeps grow with the cube root of the count), until the frame lands
//! within [`SETTLED`] under the budget or after [`MAX_FITS`] verdicts (the
//! last only cuts). The frame is the GPU's span of it (its encoder's
//! first timestamp to its last, copies and clears too). Where the rest of
//! the frame alone is over the budget, no count reaches it: the count is
//! cut no further than an eighth of where its fit started
//! ([`FLOOR_SHARE`]), and the log says so. One layer is fitted at a time.
//! A new structure (tank, solver, preset) starts a layer's fit afresh; a
//! count set by hand during a fit is fitted from there, after it stays.
//! Each count is said in the log and shown with the layer's parameters. While a fit is under
//! way the pace guard leaves the layer to it ([`Fit::fitting`]); after it,
//! the pace guard (`pace.rs`) keeps the show above its floor. Renders,
//! benches and tests never fit (they are not paced): they run the pinned
//! count, so they stay deterministic.

use std::collections::HashMap;
use std::time::Instant;

use super::Show;
use crate::gpu::FrameTimes;
use crate::params::{Registry, Source, Value, Weight};

/// The frame rate a fitted show keeps.
pub const TARGET_FPS: f64 = 60.0;

/// The share of a frame at [`TARGET_FPS`] the fitted frame's GPU time may
/// take: the rest is the CPU's and the driver's.
pub const HEADROOM: f64 = 0.85;

/// Show seconds after a count is set before its frames are measured: the
/// layer is rebuilt once the count has rested a quarter of a second, and
/// its first frames warm up.
const SETTLE_SECONDS: f32 = 1.0;

/// Frames measured for one verdict.
const MEASURE_FRAMES: usize = 30;

/// Frames measured for a verdict where each took over [`FAR_OVER`] times
/// the budget.
const QUICK_FRAMES: usize = 2;

/// How far over the budget a frame is for a quick verdict.
const FAR_OVER: f64 = 3.0;

/// How close under the budget (a share of it) a frame must land for the
/// fit to stop: a frame over it is cut, however little, since the frame's
/// GPU span leaves out the CPU's and the driver's part.
const SETTLED: f64 = 0.15;

/// Counts tried at most.
const MAX_FITS: u32 = 5;

/// The most a count moves in one fit, a factor either way.
const MOST_STEP: f64 = 4.0;

/// The least share of the count a fit started from that it cuts to where
/// the rest of the frame alone is over the budget: there a pond of a few
/// hundred particles would not bring 60 fps back, only empty the scene.
const FLOOR_SHARE: i64 = 8;

/// One layer's fit so far.
#[derive(Debug)]
struct Fitting {
    /// The count its frames run with.
    count: i64,
    /// The least it may be cut to: the count it started from over
    /// [`FLOOR_SHARE`].
    floor: i64,
    /// Its structural parameters but the count (`structure_of`).
    structure: String,
    /// Show seconds left before its frames are measured.
    settling: f32,
    /// The first frame measured for the next verdict.
    measure_from: u64,
    /// The layer's and the whole frame's GPU ms, frame by frame.
    samples: Vec<(f64, f64)>,
    /// Counts tried; at [`MAX_FITS`] the fit is over.
    fits: u32,
}

/// The fits of the layers on stage.
#[derive(Debug, Default)]
pub struct Fit {
    layers: HashMap<String, Fitting>,
    /// When it was last kept: a slow frame's show time is capped, so the
    /// fit settles by the clock.
    kept: Option<Instant>,
}

impl Fitting {
    /// A fit from `count` for `structure`, measured after it settles.
    fn from(count: i64, structure: String) -> Self {
        Self {
            count,
            floor: (count / FLOOR_SHARE).max(1),
            structure,
            settling: SETTLE_SECONDS,
            measure_from: u64::MAX,
            samples: Vec::new(),
            fits: 0,
        }
    }

    /// Measured afresh after it settles again.
    fn settle(&mut self) {
        self.settling = SETTLE_SECONDS;
        self.measure_from = u64::MAX;
        self.samples.clear();
    }
}

impl Fit {
    /// The layers whose fit is under way, which the pace guard leaves to
    /// it.
    pub fn fitting(&self) -> Vec<String> {
        self.layers
            .iter()
            .filter(|(_, f)| f.fits < MAX_FITS)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// After a frame of a live show that advanced it by `dt` seconds:
    /// measures the frames that finished and sets the count of each layer
    /// that fits its own, saying so.
    pub fn keep(&mut self, show: &mut Show, dt: f32, finished: &[FrameTimes]) {
        if !show.profiler.enabled() {
            return;
        }
        let layers: Vec<String> = show.layers().iter().map(|l| l.id().to_string()).collect();
        let submitted = show.profiler.next_frame().saturating_sub(1);
        if show.outgoing().is_some() {
            // A crossfade runs two stacks: its frames say nothing of what
            // the incoming one costs alone.
            for fitting in self.layers.values_mut() {
                fitting.settle();
            }
        }
        let elapsed = self
            .kept
            .replace(Instant::now())
            .map_or(dt, |kept| kept.elapsed().as_secs_f32().max(dt));
        for (id, message) in self.judge(&mut show.registry, &layers, submitted, elapsed, finished) {
            tracing::info!("{id}: {message}");
        }
    }

    /// [`Fit::keep`] on the registry alone: `submitted` is the frame just
    /// submitted, `elapsed` the seconds since the last call. Returns
    /// (layer, what was set) for each count set or kept. One layer is
    /// fitted at a time, in stack order: each fit holds the others still.
    pub fn judge(
        &mut self,
        registry: &mut Registry,
        layers: &[String],
        submitted: u64,
        elapsed: f32,
        finished: &[FrameTimes],
    ) -> Vec<(String, String)> {
        self.layers.retain(|id, _| layers.contains(id));
        let mut said = Vec::new();
        let mut busy = false;
        for id in layers {
            let (auto, count) = (format!("{id}.auto_count"), format!("{id}.count"));
            let now = match registry.target(&count) {
                Some(Value::Int(n)) if registry.flag(&auto) => i64::from(*n),
                _ => {
                    self.layers.remove(id);
                    continue;
                }
            };
            let structure = structure_of(registry, id, &count);
            let fitting = self
                .layers
                .entry(id.clone())
                .or_insert_with(|| Fitting::from(now, structure.clone()));
            if fitting.structure != structure {
                // A new tank, solver or preset: fitted afresh.
                *fitting = Fitting::from(now, structure);
            } else if fitting.count != now && fitting.fits < MAX_FITS {
                // Set by hand or by a script during the fit: fitted from
                // there. (Once the fit is over a count set by hand stays.)
                *fitting = Fitting::from(now, structure);
            }
            if fitting.fits >= MAX_FITS || busy {
                continue;
            }
            busy = true;
            if fitting.settling > 0.0 {
                fitting.settling -= elapsed;
                if fitting.settling <= 0.0 {
                    fitting.measure_from = submitted + 1;
                }
                continue;
            }
            for times in finished.iter().filter(|t| t.frame >= fitting.measure_from) {
                let frame_ms = times.span_ms;
                let layer_ms = super::pace::layer_ms(&times.passes, id, layers);
                fitting.samples.push((layer_ms, frame_ms));
            }
            let budget = 1000.0 / TARGET_FPS * HEADROOM;
            let far_over = fitting.samples.len() >= QUICK_FRAMES
                && fitting.samples.iter().all(|s| s.1 > FAR_OVER * budget);
            if fitting.samples.len() < MEASURE_FRAMES && !far_over {
                continue;
            }
            let (layer_ms, frame_ms) = medians(&fitting.samples);
            fitting.settle();
            fitting.fits += 1;
            let allowed = budget - (frame_ms - layer_ms);
            let measured = format!(
                "{id} took {layer_ms:.1} ms of a {frame_ms:.1} ms frame (within {budget:.1} ms for {TARGET_FPS} fps)"
            );
            let last = fitting.fits >= MAX_FITS;
            if layer_ms <= 0.0
                || (frame_ms <= budget && frame_ms >= budget * (1.0 - SETTLED))
                || (last && frame_ms < budget)
            {
                // It fits, or it is the last verdict and the frame is
                // within the budget: the count stays.
                fitting.fits = MAX_FITS;
                said.push((
                    id.clone(),
                    format!("{count} {now} holds {TARGET_FPS} fps here: {measured}"),
                ));
                continue;
            }
            let scale = (allowed.max(0.0) / layer_ms)
                .powf(0.75)
                .clamp(1.0 / MOST_STEP, MOST_STEP);
            // Where the rest of the frame alone is over the budget, no
            // count reaches it: the cut stops at the layer's floor.
            let floor = if allowed <= 0.0 { fitting.floor } else { 1 };
            let wanted = rounded(now as f64 * scale, scale < 1.0).max(floor);
            if wanted >= now && scale < 1.0 {
                // At its floor and still over: the rest of the frame is
                // more than this device draws at 60 fps.
                fitting.fits = MAX_FITS;
                said.push((
                    id.clone(),
                    format!(
                        "{count} {now} is as low as the fit goes ({FLOOR_SHARE}th of where it started): {measured}; the rest of the frame alone is over the budget here"
                    ),
                ));
                continue;
            }
            let set = registry
                .set(
                    &count,
                    Value::Int(wanted.min(i64::from(i32::MAX)) as i32),
                    Source::Show,
                )
                .ok()
                .and_then(|_| match registry.target(&count) {
                    Some(Value::Int(n)) => Some(i64::from(*n)),
                    _ => None,
                })
                .unwrap_or(now);
            if set == now {
                // At the parameter's bound: nothing more to try.
                fitting.fits = MAX_FITS;
                continue;
            }
            fitting.count = set;
            if last {
                // The last verdict only cuts a count over the budget; what
                // it cut to is left to the pace guard.
                fitting.fits = MAX_FITS;
            }
            said.push((
                id.clone(),
                format!("{count} {now} -> {set} to hold {TARGET_FPS} fps: {measured}"),
            ));
        }
        said
    }
}

/// Layer `id`'s structural parameters but its count, as they stand: a
/// change (a new tank, solver or preset) starts its fit afresh.
fn structure_of(registry: &Registry, id: &str, count: &str) -> String {
    let prefix = format!("{id}.");
    let mut structure: Vec<String> = registry
        .iter()
        .filter(|(spec, _)| {
            spec.name.starts_with(&prefix)
                && spec.name != count
                && spec.weight == Weight::Structural
        })
        .map(|(spec, _)| format!("{}={:?}", spec.name, registry.target(&spec.name)))
        .collect();
    structure.sort();
    structure.join(";")
}

/// The medians of the layer's and the frame's milliseconds.
fn medians(samples: &[(f64, f64)]) -> (f64, f64) {
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied().unwrap_or(0.0)
    };
    (
        median(samples.iter().map(|s| s.0).collect()),
        median(samples.iter().map(|s| s.1).collect()),
    )
}

/// A count to two significant figures, so a fitted count reads as one a
/// person would set (748,213 -> 750,000); rounded `down` for a cut, so a
/// count a little over the budget is cut rather than rounded back.
fn rounded(count: f64, down: bool) -> i64 {
    if count < 1.0 {
        return 1;
    }
    let unit = 10f64.powi(count.log10().floor() as i32 - 1).max(1.0);
    let units = count / unit;
    (if down { units.floor() } else { units.round() } * unit) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::PassTime;
    use crate::params::ParamSpec;

    /// A registry with a fluid and a sky, and the fit judging frames whose
    /// fluid costs `per_million` ms a million particles to the 4/3, the
    /// sky 2 ms, each answered at once.
    fn fitted(auto: bool, count: i32, per_million: f64, frames: u64) -> (i32, Vec<String>) {
        fitted_under(2.0, auto, count, per_million, frames)
    }

    /// [`fitted`] under a sky of `sky_ms`.
    fn fitted_under(
        sky_ms: f64,
        auto: bool,
        count: i32,
        per_million: f64,
        frames: u64,
    ) -> (i32, Vec<String>) {
        let mut registry = Registry::new();
        registry.register(ParamSpec::bool("fluid.auto_count", auto));
        registry.register(ParamSpec::int("fluid.count", count, 100, 16_000_000).structural());
        let layers = vec!["fluid".to_string(), "shader.sky".to_string()];
        let mut fit = Fit::default();
        let mut said = Vec::new();
        for frame in 0..frames {
            let n = match registry.target("fluid.count") {
                Some(Value::Int(n)) => f64::from(*n),
                _ => 0.0,
            };
            let times = FrameTimes::back_to_back(
                frame,
                vec![
                    PassTime {
                        label: "fluid.substeps".into(),
                        ms: per_million * (n / 1e6).powf(4.0 / 3.0),
                    },
                    PassTime {
                        label: "shader.sky".into(),
                        ms: sky_ms,
                    },
                ],
            );
            for (_, message) in fit.judge(&mut registry, &layers, frame, 1.0 / 60.0, &[times]) {
                said.push(message);
            }
        }
        let count = match registry.target("fluid.count") {
            Some(Value::Int(n)) => *n,
            _ => 0,
        };
        (count, said)
    }

    #[test]
    fn a_count_grows_on_a_fast_gpu_and_shrinks_on_a_slow_one_until_the_frame_fits() {
        let budget = 1000.0 / TARGET_FPS * HEADROOM;
        for (start, per_million) in [(20_000, 10.0), (750_000, 10.0), (750_000, 400.0)] {
            let (count, said) = fitted(true, start, per_million, 2_000);
            let frame = per_million * (f64::from(count) / 1e6).powf(4.0 / 3.0) + 2.0;
            assert!(
                (frame / budget - 1.0).abs() <= SETTLED + 0.1,
                "from {start} at {per_million} ms a million: {count} gives a {frame:.1} ms frame ({said:?})"
            );
            assert!(said.last().is_some_and(|m| m.contains("holds")), "{said:?}");
        }
    }

    #[test]
    fn a_frame_over_the_budget_without_the_fluid_cuts_it_no_further_than_its_floor() {
        let (count, said) = fitted_under(20.0, true, 800_000, 10.0, 2_000);
        assert_eq!(i64::from(count), 800_000 / FLOOR_SHARE, "{said:?}");
        assert!(
            said.last().is_some_and(|m| m.contains("as low as")),
            "{said:?}"
        );
    }

    #[test]
    fn a_count_far_too_large_is_cut_within_seconds_and_spared_the_pace_guard_meanwhile() {
        // A million particles at 4 s a frame on a slow device: each frame
        // stands for its own 4 s of show time.
        let mut registry = Registry::new();
        registry.register(ParamSpec::bool("fluid.auto_count", true));
        registry.register(ParamSpec::int("fluid.count", 1_000_000, 100, 16_000_000).structural());
        let layers = vec!["fluid".to_string()];
        let mut fit = Fit::default();
        let mut cuts = 0;
        for frame in 0..8 {
            let times = FrameTimes::back_to_back(
                frame,
                vec![PassTime {
                    label: "fluid.substeps".into(),
                    ms: 4000.0,
                }],
            );
            cuts += fit
                .judge(&mut registry, &layers, frame, 4.0, &[times])
                .len();
            assert_eq!(fit.fitting(), ["fluid"], "frame {frame}");
            if frame == 2 {
                // Settled in the first frame's 4 s, two frames measured:
                // cut by the most a fit moves.
                assert_eq!(registry.target("fluid.count"), Some(&Value::Int(250_000)));
            }
        }
        assert_eq!(cuts, 2, "a cut every three frames of 4 s");
    }

    #[test]
    fn a_pinned_count_is_never_fitted() {
        let (count, said) = fitted(false, 750_000, 400.0, 2_000);
        assert_eq!((count, said.len()), (750_000, 0));
    }

    #[test]
    fn counts_are_rounded_to_two_figures() {
        assert_eq!(rounded(748_213.0, false), 750_000);
        assert_eq!(rounded(748_213.0, true), 740_000);
        assert_eq!(rounded(1_234_567.0, false), 1_200_000);
        assert_eq!(rounded(87.0, true), 87);
        assert_eq!(rounded(0.2, true), 1);
    }
}
