//! `sylva bench --whole-frame`: a preset (or a playlist) as the show plays
//! it, every pass of its frames timed by timestamp queries (a pass run
//! several times a frame, like the fluid's substeps, summed per frame),
//! the frame's GPU time (the sum of its passes) and its span (its first
//! timestamp to its last, the copies, clears and gaps between passes too),
//! the CPU time to record and submit it, the wall time of a frame waited
//! for, and the frames a second it holds unpaced (frames submitted back
//! to back, as `run --headless --unpaced` does), and what the layers
//! sample (`Layer::sampled`: the fluid's live particles, substeps and
//! density error), their mean and largest over as many frames again played
//! on right after (reading a million particles back between two measured
//! frames idles the GPU, which then clocks down and times the next frame
//! slow).

use std::time::Instant;

use anyhow::{Context, bail};
use serde::Serialize;

use super::bench::{labels_in_order, percentile};
use crate::gpu::{OUTPUT_FORMAT, PassTime, RenderTarget};
use crate::show::{Show, ShowOptions};

/// Options of `sylva bench --whole-frame`.
#[derive(Debug, Clone)]
pub struct WholeFrameOptions {
    /// The show: adapter, folder, seed, preset or playlist, outputs.
    pub show: ShowOptions,
    /// The canvas size.
    pub resolution: [u32; 2],
    /// Frames measured, each waited for; as many again run unpaced.
    pub steps: usize,
    /// Frames played first (show time at 60 fps), so the preset has faded
    /// in and its simulations have been built and are running.
    pub warm_up: usize,
    /// `param=value` settings applied once the preset (a playlist's first)
    /// has loaded: a coupling switched off to see what it costs.
    pub set: Vec<String>,
}

/// One pass over the measured frames.
#[derive(Debug, Clone, Serialize)]
pub struct FramePass {
    /// Pass label.
    pub pass: String,
    /// Times it ran in a frame (the median frame).
    pub runs: usize,
    /// Median milliseconds a frame (all its runs).
    pub median_ms: f64,
    /// 95th percentile milliseconds a frame.
    pub p95_ms: f64,
}

/// Median and p95 milliseconds.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Spread {
    /// Median.
    pub median_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
}

/// A figure a layer sampled after each measured frame.
#[derive(Debug, Clone, Serialize)]
pub struct Sampled {
    /// The layer's id.
    pub layer: String,
    /// What it is (`live_particles`).
    pub figure: String,
    /// Its mean over the measured frames.
    pub mean: f64,
    /// Its largest.
    pub max: f64,
}

/// A whole-frame run.
#[derive(Debug, Clone, Serialize)]
pub struct WholeFrameReport {
    /// The adapter line.
    pub adapter: String,
    /// The preset, or `playlist NAME`.
    pub show: String,
    /// Canvas size.
    pub resolution: [u32; 2],
    /// Frames measured.
    pub steps: usize,
    /// Every pass, in the order they first ran.
    pub passes: Vec<FramePass>,
    /// The frame's GPU time: its passes added up.
    pub frame: Spread,
    /// The frame's GPU span ([`crate::gpu::FrameTimes::span_ms`]): what
    /// it holds the GPU for, copies, clears and gaps included.
    pub span: Spread,
    /// The CPU's part: recording and submitting the frame.
    pub cpu: Spread,
    /// A frame waited for, CPU and GPU: what one frame costs alone.
    pub wall: Spread,
    /// Frames a second with frames submitted back to back.
    pub unpaced_fps: f64,
    /// What the layers sampled over as many frames again, played on right
    /// after the measured ones, in the order they first reported it.
    pub sampled: Vec<Sampled>,
    /// The media shelf's line for each source on stage: uploads, their
    /// time, a clip's frames and the path it took (4:2:0 planes, HAP's
    /// blocks on the GPU or decoded on the CPU).
    pub media: Vec<String>,
}

/// Plays the show and measures it.
pub fn run(options: &WholeFrameOptions) -> anyhow::Result<WholeFrameReport> {
    let mut show = crate::show::start(&options.show, OUTPUT_FORMAT)?;
    if !show.ground.gpu.timestamps {
        bail!(
            "{} has no timestamp queries; GPU times cannot be measured",
            show.ground.gpu.info.name
        );
    }
    for setting in super::bench::preset_params(&options.set)? {
        let value = crate::engine::toml_value(&setting.value)
            .with_context(|| format!("cannot read {:?}", setting.value))?;
        let set = crate::command::Command::Set(setting.name, value, crate::params::Source::Ui);
        show.apply(set)?;
    }
    let device = show.ground.gpu.device.clone();
    let mut output = RenderTarget::new(&device, "bench.output", options.resolution, OUTPUT_FORMAT);
    let dt = 1.0 / 60.0;
    for _ in 0..options.warm_up {
        show.frame(dt, None, &mut output, |_, _| {});
        show.profiler.collect();
    }
    show.ground.gpu.wait_idle();
    show.profiler.collect();
    let mut frames = Vec::with_capacity(options.steps);
    let mut clocks = Clocks::default();
    for _ in 0..options.steps {
        let started = Instant::now();
        let mut finished = show.frame(dt, None, &mut output, |_, _| {});
        clocks.cpu.push(started.elapsed().as_secs_f64() * 1e3);
        show.ground.gpu.wait_idle();
        clocks.wall.push(started.elapsed().as_secs_f64() * 1e3);
        finished.extend(show.profiler.collect());
        clocks.span.extend(finished.iter().map(|f| f.span_ms));
        frames.extend(finished.into_iter().map(|f| f.passes));
    }
    let started = Instant::now();
    for _ in 0..options.steps {
        show.frame(dt, None, &mut output, |_, _| {});
        show.profiler.collect();
    }
    show.ground.gpu.wait_idle();
    let unpaced_fps = options.steps as f64 / started.elapsed().as_secs_f64().max(1e-9);
    let mut sampled: Vec<(String, String, Vec<f64>)> = Vec::new();
    for _ in 0..options.steps {
        show.frame(dt, None, &mut output, |_, _| {});
        show.profiler.collect();
        sample(&show, &mut sampled);
    }
    if let Some(error) = show.ground.errors.snapshot().first() {
        bail!("{}: {}", error.origin, error.message);
    }
    let name = match &options.show.playlist {
        Some(playlist) => format!("playlist {playlist}"),
        None => options.show.preset.clone(),
    };
    let mut report = report(
        &show,
        name,
        options.resolution,
        &frames,
        clocks,
        unpaced_fps,
    );
    report.sampled = sampled
        .into_iter()
        .map(|(layer, figure, values)| Sampled {
            layer,
            figure,
            mean: values.iter().sum::<f64>() / values.len().max(1) as f64,
            max: values.iter().copied().fold(f64::MIN, f64::max),
        })
        .collect();
    Ok(report)
}

/// Adds what every layer samples now to `sampled` (layer, figure, values).
fn sample(show: &Show, sampled: &mut Vec<(String, String, Vec<f64>)>) {
    for layer in show.layers() {
        for (figure, value) in layer.sampled(&show.ground.gpu) {
            let id = layer.id();
            match sampled.iter_mut().find(|(l, f, _)| l == id && *f == figure) {
                Some((_, _, values)) => values.push(value),
                None => sampled.push((id.to_string(), figure, vec![value])),
            }
        }
    }
}

/// Milliseconds of each measured frame, other than its passes'.
#[derive(Default)]
struct Clocks {
    /// GPU span.
    span: Vec<f64>,
    /// Recording and submitting.
    cpu: Vec<f64>,
    /// Submitted and waited for.
    wall: Vec<f64>,
}

fn report(
    show: &Show,
    name: String,
    resolution: [u32; 2],
    frames: &[Vec<PassTime>],
    clocks: Clocks,
    unpaced_fps: f64,
) -> WholeFrameReport {
    let totals: Vec<f64> = frames
        .iter()
        .map(|f| f.iter().map(|p| p.ms).sum())
        .collect();
    let sorted = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        spread(&values)
    };
    WholeFrameReport {
        adapter: show.ground.gpu.adapter_line(),
        show: name,
        resolution,
        steps: frames.len(),
        passes: per_frame(frames),
        frame: sorted(totals),
        span: sorted(clocks.span),
        cpu: sorted(clocks.cpu),
        wall: sorted(clocks.wall),
        unpaced_fps,
        sampled: Vec::new(),
        media: show.media_report(),
    }
}

/// Each label's time a frame (its runs added up), median and p95 over the
/// frames it ran in, in the order labels first appeared.
pub fn per_frame(frames: &[Vec<PassTime>]) -> Vec<FramePass> {
    labels_in_order(frames)
        .into_iter()
        .map(|label| {
            let mut times = Vec::new();
            let mut runs = Vec::new();
            for frame in frames {
                let these: Vec<f64> = frame
                    .iter()
                    .filter(|p| p.label == label)
                    .map(|p| p.ms)
                    .collect();
                if !these.is_empty() {
                    runs.push(these.len() as f64);
                    times.push(these.iter().sum::<f64>());
                }
            }
            times.sort_by(f64::total_cmp);
            runs.sort_by(f64::total_cmp);
            let Spread { median_ms, p95_ms } = spread(&times);
            FramePass {
                pass: label.to_string(),
                runs: percentile(&runs, 0.5) as usize,
                median_ms,
                p95_ms,
            }
        })
        .collect()
}

fn spread(sorted: &[f64]) -> Spread {
    Spread {
        median_ms: percentile(sorted, 0.5),
        p95_ms: percentile(sorted, 0.95),
    }
}

/// The report as a table for a terminal.
pub fn table(report: &WholeFrameReport) -> String {
    let mut text = format!(
        "adapter: {}\nshow: {}, {}x{}, {} frames\n  {:<36} {:>5} {:>10} {:>10}\n",
        report.adapter,
        report.show,
        report.resolution[0],
        report.resolution[1],
        report.steps,
        "pass",
        "runs",
        "median ms",
        "p95 ms"
    );
    for pass in &report.passes {
        text.push_str(&format!(
            "  {:<36} {:>5} {:>10.4} {:>10.4}\n",
            pass.pass, pass.runs, pass.median_ms, pass.p95_ms
        ));
    }
    text.push_str(&format!(
        "  frame (GPU, passes added up): median {:.4} ms, p95 {:.4} ms\n  frame's GPU span (gaps too): median {:.4} ms, p95 {:.4} ms\n  recorded and submitted (CPU): median {:.4} ms, p95 {:.4} ms\n  frame waited for (wall): median {:.4} ms, p95 {:.4} ms\n  unpaced: {:.1} fps\n",
        report.frame.median_ms,
        report.frame.p95_ms,
        report.span.median_ms,
        report.span.p95_ms,
        report.cpu.median_ms,
        report.cpu.p95_ms,
        report.wall.median_ms,
        report.wall.p95_ms,
        report.unpaced_fps
    ));
    for s in &report.sampled {
        text.push_str(&format!(
            "  {} {}: mean {:.4}, max {:.4}\n",
            s.layer, s.figure, s.mean, s.max
        ));
    }
    for line in &report.media {
        text.push_str(&format!("  media: {line}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(label: &str, ms: f64) -> PassTime {
        PassTime {
            label: label.into(),
            ms,
        }
    }

    #[test]
    fn a_pass_run_several_times_a_frame_is_added_up_per_frame() {
        let frames: Vec<Vec<PassTime>> = (1..=20)
            .map(|i| {
                vec![
                    pass("fluid.substep", 1.0),
                    pass("fluid.substep", 1.0),
                    pass("compositor.master", f64::from(i)),
                ]
            })
            .collect();
        let passes = per_frame(&frames);
        assert_eq!(passes[0].pass, "fluid.substep");
        assert_eq!((passes[0].runs, passes[0].median_ms), (2, 2.0));
        assert_eq!(passes[1].runs, 1);
        assert_eq!((passes[1].median_ms, passes[1].p95_ms), (10.0, 19.0));
    }
}
