//! `sylva bench`: runs one layer at increasing sizes and prints the GPU
//! milliseconds of each pass (median and p95 over many frames after the
//! GPU's clocks and the layer are warmed up), from timestamp queries.
//! Each frame is waited for, so the numbers are per pass, not overlapped.
//! A size is in the layer's own unit; for `shader` layers it is the
//! output height in pixels at 16:9.

use std::sync::Arc;

use anyhow::{Context, bail};
use serde::Serialize;

use crate::base::status::ErrorLog;
use crate::engine::{Preset, PresetParam, toml_value};
use crate::gpu::{Gpu, OUTPUT_FORMAT, PassTime, RenderTarget};
use crate::layers;
use crate::show::Show;
use crate::show::ShowOptions;

/// Frames rendered before measuring, so pipelines and caches are warm.
const WARM_UP: usize = 10;

/// A frame whose fixed reference pass took more than this times its
/// median was a frame of a slow GPU, not of a busy layer.
const DISTURBED: f64 = 1.25;

/// The pass every bench frame runs with the same work.
const REFERENCE_PASS: &str = "compositor.master";

/// Options of `sylva bench`.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Adapter, show folder and seed (the preset is ignored).
    pub show: ShowOptions,
    /// Layer id, e.g. `shader.aurora`.
    pub layer: String,
    /// Sizes in the layer's unit.
    pub sizes: Vec<u32>,
    /// Measured frames per size.
    pub steps: usize,
    /// `param=value` settings applied before measuring.
    pub set: Vec<String>,
    /// Output size instead of the layer's default.
    pub resolution: Option<[u32; 2]>,
    /// Keep each measured frame's passes in the report.
    pub timeline: bool,
}

/// Timing of one pass at one size.
#[derive(Debug, Clone, Serialize)]
pub struct PassStats {
    /// Pass label.
    pub pass: String,
    /// Median milliseconds.
    pub median_ms: f64,
    /// 95th percentile milliseconds.
    pub p95_ms: f64,
    /// Bytes the pass reads and writes in memory (a lower bound where a
    /// shader's texture reads are unknown).
    pub bytes: u64,
    /// `bytes` over the median time, in GB/s.
    pub gb_per_s: f64,
}

/// Results at one size.
#[derive(Debug, Clone, Serialize)]
pub struct SizeResult {
    /// The size in the layer's unit.
    pub size: u32,
    /// What the size means here.
    pub unit: String,
    /// Output resolution used.
    pub resolution: [u32; 2],
    /// Frames measured.
    pub steps: usize,
    /// Per pass.
    pub passes: Vec<PassStats>,
    /// A simulation step (all the layer's compute passes of a frame):
    /// median and busiest, in ms, over the frames the GPU ran at its pace
    /// (see `disturbed_frames`).
    pub step: Option<[f64; 2]>,
    /// The mean of the same steps, in ms: where steps alternate between
    /// kinds (the fluid's substeps that rebuild its neighbour lists and
    /// those that reuse them), the cost a step averages.
    pub step_mean: Option<f64>,
    /// Frames left out of `step` and `groups`: those in which the
    /// compositor's master pass, the same work every frame, took over
    /// 1.25 times its median, so the whole GPU ran slow (on the
    /// H200 every pass 2-5x slower in runs of 5-45 frames, at full clocks,
    /// at random points of a run).
    pub disturbed_frames: usize,
    /// Further groups of passes the kind times on their own (the skinned
    /// layer's skinning and growth): name, median and busiest ms.
    pub groups: Vec<(String, [f64; 2])>,
    /// What the layer reports after the run (node counts, bytes per step).
    pub layer: std::collections::BTreeMap<String, f64>,
    /// With `--per-frame`: each measured frame's compute and drawing
    /// passes in order, label and ms.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<Vec<(String, f64)>>,
}

/// A whole bench run.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// The adapter line.
    pub adapter: String,
    /// Layer id.
    pub layer: String,
    /// One entry per size.
    pub results: Vec<SizeResult>,
}

/// How a layer kind turns a bench size into a workload; its settings
/// (`param=value`) are named for `layer`.
fn setup(layer: &str, size: u32) -> anyhow::Result<crate::engine::BenchWorkload> {
    let mut workload = (layers::kind_of(layer)?.bench)(size);
    for setting in &mut workload.settings {
        *setting = format!("{layer}.{setting}");
    }
    Ok(workload)
}

/// Runs the bench and returns its report.
pub fn run(options: &BenchOptions) -> anyhow::Result<BenchReport> {
    let gpu = Arc::new(Gpu::new(
        Gpu::instance(),
        &options.show.adapter,
        None,
        ErrorLog::default(),
    )?);
    tracing::info!("adapter: {}", gpu.adapter_line());
    if !gpu.timestamps {
        bail!(
            "{} has no timestamp queries; GPU times cannot be measured",
            gpu.info.name
        );
    }
    let mut results = Vec::new();
    for &size in &options.sizes {
        let workload = setup(&options.layer, size)?;
        let (unit, settings) = (workload.unit, &workload.settings);
        let resolution = options.resolution.unwrap_or(workload.resolution);
        let (assets, _) = options.show.assets();
        let mut show = Show::new(
            gpu.clone(),
            assets.clone(),
            OUTPUT_FORMAT,
            options.show.seed,
        )?;
        let preset = Preset {
            file: "bench".into(),
            description: String::new(),
            layers: vec![(options.layer.clone(), 1)],
            script: None,
            mappings: Vec::new(),
            params: preset_params(&[settings.as_slice(), &options.set].concat())?,
        };
        if let Some(outputs) = &options.show.outputs {
            show.use_outputs(outputs);
        }
        show.apply_preset("bench", &preset)?;
        show.profiler.time_stages();
        super::warm_up::warm_clocks(&gpu, &assets)?;
        let frames = measure(&mut show, resolution, options.steps)?;
        let layer_report = show
            .layers()
            .first()
            .map(|l| l.report(&gpu))
            .unwrap_or_default();
        let steady = steady_frames(&frames);
        let step_times = layer_steps(&steady, &[format!("{}.", options.layer)]);
        let steps = median_and_busiest(&step_times);
        let step_mean = (!step_times.is_empty())
            .then(|| step_times.iter().sum::<f64>() / step_times.len() as f64);
        let groups = workload
            .groups
            .iter()
            .filter_map(|(name, prefixes)| {
                let prefixes: Vec<String> = prefixes.iter().map(|p| p.to_string()).collect();
                Some((name.to_string(), step_statistics(&steady, &prefixes)?))
            })
            .collect();
        let mut passes = statistics(&frames);
        let pixels = u64::from(resolution[0]) * u64::from(resolution[1]);
        let warped: Vec<(String, u64)> = show
            .outputs()
            .map(|o| o.outputs())
            .unwrap_or_default()
            .iter()
            .map(|o| {
                let [w, h] = o.plan.size.map(u64::from);
                (format!("output.{}", o.plan.name), w * h)
            })
            .collect();
        for pass in &mut passes {
            pass.bytes = match warped.iter().find(|(label, _)| *label == pass.pass) {
                // An output's warp reads about its own area of the canvas
                // (8-bit) and writes its pixels.
                Some((_, output_pixels)) => output_pixels * (4 + 4),
                None => pass_bytes(&pass.pass, &options.layer, pixels),
            };
            pass.gb_per_s = pass.bytes as f64 / (pass.median_ms * 1e6).max(1e-12);
        }
        let timeline = if options.timeline {
            frames
                .iter()
                .map(|f| f.iter().map(|p| (p.label.clone(), p.ms)).collect())
                .collect()
        } else {
            Vec::new()
        };
        results.push(SizeResult {
            size,
            unit: unit.to_string(),
            resolution,
            steps: frames.len(),
            passes,
            step: steps,
            step_mean,
            disturbed_frames: frames.len() - steady.len(),
            groups,
            layer: layer_report.into_iter().collect(),
            timeline,
        });
    }
    Ok(BenchReport {
        adapter: gpu.adapter_line(),
        layer: options.layer.clone(),
        results,
    })
}

/// `param=value` settings as preset parameters, so the layer's first
/// build already has them (a later change may rebuild on a worker thread,
/// after measuring has begun).
pub(crate) fn preset_params(settings: &[String]) -> anyhow::Result<Vec<PresetParam>> {
    settings
        .iter()
        .map(|setting| {
            let (name, text) = setting
                .split_once('=')
                .with_context(|| format!("{setting:?} is not param=value"))?;
            let value = toml::from_str::<toml::Table>(&format!("v = {text}"))
                .ok()
                .and_then(|mut t| t.remove("v"))
                .unwrap_or_else(|| toml::Value::String(text.to_string()));
            toml_value(&value).with_context(|| format!("cannot read {text:?}"))?;
            Ok(PresetParam {
                name: name.to_string(),
                value,
                line: 1,
            })
        })
        .collect()
}

fn measure(show: &mut Show, size: [u32; 2], steps: usize) -> anyhow::Result<Vec<Vec<PassTime>>> {
    let mut output =
        RenderTarget::new(&show.ground.gpu.device, "bench.output", size, OUTPUT_FORMAT);
    let mut frames = Vec::with_capacity(steps);
    for step in 0..WARM_UP + steps {
        // Timings may be ready as soon as the frame submits, or only after the wait.
        let mut finished = show.frame(1.0 / 60.0, None, &mut output, |_, _| {});
        show.ground.gpu.wait_idle();
        finished.extend(show.profiler.collect());
        if step >= WARM_UP {
            frames.extend(finished.into_iter().map(|f| f.passes));
        }
    }
    if let Some(error) = show.ground.errors.snapshot().first() {
        bail!("{}: {}", error.origin, error.message);
    }
    Ok(frames)
}

/// Memory traffic of a pass at `pixels` (render scale 1): the compositor's
/// are exact (half-float RGBA is 8 bytes a pixel, the 8-bit output 4: the
/// master section reads the composite and stores the output; where the
/// GPU cannot store to it, it writes a half-float picture instead, which
/// `outputs.blit` copies in); a
/// layer's drawing pass counts its target write only; a simulation's
/// compute passes are counted by the layer per step (0 here).
fn pass_bytes(label: &str, layer: &str, pixels: u64) -> u64 {
    if label == "compositor.master" {
        pixels * (8 + 4)
    } else if label.starts_with("compositor.blend.") {
        pixels * 8 * 3
    } else if label == layer || label.contains(".draw") {
        pixels * 8
    } else {
        0
    }
}

/// The frames whose reference pass ran within [`DISTURBED`] times its
/// median (all of them where no frame has it).
fn steady_frames(frames: &[Vec<PassTime>]) -> Vec<Vec<PassTime>> {
    let reference = |frame: &[PassTime]| {
        frame
            .iter()
            .find(|p| p.label == REFERENCE_PASS)
            .map(|p| p.ms)
    };
    let mut times: Vec<f64> = frames.iter().filter_map(|f| reference(f)).collect();
    if times.is_empty() {
        return frames.to_vec();
    }
    times.sort_by(f64::total_cmp);
    let limit = percentile(&times, 0.5) * DISTURBED;
    frames
        .iter()
        .filter(|f| reference(f).is_none_or(|ms| ms <= limit))
        .cloned()
        .collect()
}

/// Median and largest per-frame sum of the compute passes whose labels
/// start with one of `prefixes` (drawing passes contain `.draw`).
fn step_statistics(frames: &[Vec<PassTime>], prefixes: &[String]) -> Option<[f64; 2]> {
    median_and_busiest(&layer_steps(frames, prefixes))
}

/// Median and largest of sorted step times.
fn median_and_busiest(steps: &[f64]) -> Option<[f64; 2]> {
    Some([percentile(steps, 0.5), *steps.last()?])
}

/// Those per-frame sums, sorted (frames without such a pass left out).
fn layer_steps(frames: &[Vec<PassTime>], prefixes: &[String]) -> Vec<f64> {
    let mut steps: Vec<f64> = frames
        .iter()
        .map(|f| {
            f.iter()
                .filter(|p| {
                    prefixes
                        .iter()
                        .any(|prefix| p.label.starts_with(prefix.as_str()))
                        && !p.label.contains(".draw")
                })
                .map(|p| p.ms)
                .sum()
        })
        .filter(|ms: &f64| *ms > 0.0)
        .collect();
    steps.sort_by(f64::total_cmp);
    steps
}

/// The pass labels of `frames`, each once, in the order they first ran.
pub(crate) fn labels_in_order(frames: &[Vec<PassTime>]) -> Vec<&str> {
    let mut labels: Vec<&str> = Vec::new();
    for pass in frames.iter().flatten() {
        if !labels.contains(&pass.label.as_str()) {
            labels.push(&pass.label);
        }
    }
    labels
}

/// Median and p95 per pass label, in the order passes first appeared.
pub fn statistics(frames: &[Vec<PassTime>]) -> Vec<PassStats> {
    labels_in_order(frames)
        .into_iter()
        .map(|label| {
            let mut times: Vec<f64> = frames
                .iter()
                .flatten()
                .filter(|p| p.label == label)
                .map(|p| p.ms)
                .collect();
            times.sort_by(f64::total_cmp);
            PassStats {
                pass: label.to_string(),
                median_ms: percentile(&times, 0.5),
                p95_ms: percentile(&times, 0.95),
                bytes: 0,
                gb_per_s: 0.0,
            }
        })
        .collect()
}

/// Nearest-rank percentile of sorted `values`.
pub(crate) fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// The report as a table for a terminal.
pub fn table(report: &BenchReport) -> String {
    let mut text = format!("adapter: {}\nlayer: {}\n", report.adapter, report.layer);
    for result in &report.results {
        text.push_str(&format!(
            "\nsize {} ({}), {}x{}, {} steps\n  {:<36} {:>10} {:>10} {:>12} {:>9}\n",
            result.size,
            result.unit,
            result.resolution[0],
            result.resolution[1],
            result.steps,
            "pass",
            "median ms",
            "p95 ms",
            "bytes",
            "GB/s"
        ));
        for pass in &result.passes {
            text.push_str(&format!(
                "  {:<36} {:>10.4} {:>10.4} {:>12} {:>9.1}\n",
                pass.pass, pass.median_ms, pass.p95_ms, pass.bytes, pass.gb_per_s
            ));
        }
        if let (Some([median, busiest]), Some(mean)) = (result.step, result.step_mean) {
            text.push_str(&format!(
                "  step: median {median:.4} ms, mean {mean:.4} ms, busiest {busiest:.4} ms\n"
            ));
        }
        if result.disturbed_frames > 0 {
            text.push_str(&format!(
                "  {} frames left out of the steps: {REFERENCE_PASS} over {DISTURBED}x its median (the whole GPU ran slow)\n",
                result.disturbed_frames
            ));
        }
        for (name, [median, busiest]) in &result.groups {
            text.push_str(&format!(
                "  {name}: median {median:.4} ms, busiest {busiest:.4} ms\n"
            ));
        }
        for (name, value) in &result.layer {
            text.push_str(&format!("  {name}: {value}\n"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_take_median_and_p95_per_pass() {
        let frames: Vec<Vec<PassTime>> = (1..=100)
            .map(|i| {
                vec![
                    PassTime {
                        label: "a".into(),
                        ms: f64::from(i),
                    },
                    PassTime {
                        label: "b".into(),
                        ms: 1.0,
                    },
                ]
            })
            .collect();
        let stats = statistics(&frames);
        assert_eq!(stats[0].pass, "a");
        assert_eq!((stats[0].median_ms, stats[0].p95_ms), (50.0, 95.0));
        assert_eq!((stats[1].median_ms, stats[1].p95_ms), (1.0, 1.0));
    }

    /// Frames in which the reference pass ran slow (a slow GPU, not a busy
    /// layer) are left out of the steps; a layer's own busy frame is not.
    #[test]
    fn frames_of_a_slow_gpu_are_left_out_of_the_steps() {
        let frame = |step: f64, master: f64| {
            vec![
                PassTime {
                    label: "colony.search".into(),
                    ms: step,
                },
                PassTime {
                    label: REFERENCE_PASS.into(),
                    ms: master,
                },
            ]
        };
        let mut frames: Vec<Vec<PassTime>> = (0..20)
            .map(|i| frame(1.0 + f64::from(i) * 0.01, 0.33))
            .collect();
        frames.push(frame(3.0, 0.36));
        frames.extend((0..5).map(|_| frame(4.0, 1.6)));
        let steady = steady_frames(&frames);
        assert_eq!(frames.len() - steady.len(), 5);
        let [_, busiest] = step_statistics(&steady, &["colony.".to_string()]).unwrap_or_default();
        assert_eq!(busiest, 3.0);
    }
}
