//! `sylva bench --layer audio --sizes 1024,2048,4096`: the analysis's CPU
//! time per hop at each FFT window (hop a quarter of it) over a minute of
//! synthetic music (a bass line, a chord, noise hats, a kick every half
//! second), so the cost of listening is measured the same way as the GPU.

use serde::Serialize;

use super::analysis::{AnalysisSettings, Analyzer};

/// Sample rate measured at.
const RATE: u32 = 48_000;

/// One window's figures.
#[derive(Debug, Clone, Serialize)]
pub struct AnalysisTime {
    /// FFT window, samples.
    pub window: usize,
    /// Hop, samples.
    pub hop: usize,
    /// Hops measured.
    pub hops: usize,
    /// Mean microseconds per hop (the tempo estimate, every 8th hop,
    /// costs most).
    pub mean_us: f64,
    /// Median microseconds per hop.
    pub median_us: f64,
    /// 95th percentile.
    pub p95_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Share of one core the analysis takes in real time (mean), percent.
    pub core_percent: f64,
}

/// A minute of music-like sound.
fn music(seconds: usize) -> Vec<f32> {
    let mut noise = 0x9e37_79b9u32;
    (0..seconds * RATE as usize)
        .map(|i| {
            let t = i as f32 / RATE as f32;
            noise ^= noise << 13;
            noise ^= noise >> 17;
            noise ^= noise << 5;
            let beat = t % 0.5;
            let kick = (-beat * 18.0).exp() * (std::f32::consts::TAU * 55.0 * beat).sin();
            let hat = if (t % 0.25) < 0.02 {
                noise as f32 / u32::MAX as f32 - 0.5
            } else {
                0.0
            };
            let chord: f32 = [220.0, 277.2, 329.6]
                .iter()
                .map(|hz| (std::f32::consts::TAU * hz * t).sin())
                .sum();
            0.5 * kick + 0.2 * hat + 0.05 * chord
        })
        .collect()
}

/// Times the analysis at each window in `windows`, `hops` hops each (at
/// most a minute of sound).
pub fn run(windows: &[u32], hops: usize) -> anyhow::Result<Vec<AnalysisTime>> {
    let sound = music(60);
    windows
        .iter()
        .map(|&window| {
            let settings = AnalysisSettings {
                window: window as usize,
                hop: window as usize / 4,
            }
            .checked()?;
            let mut analyzer = Analyzer::new(RATE, settings);
            let mut times: Vec<f64> = sound
                .chunks(settings.hop)
                .take(hops.max(1))
                .map(|chunk| {
                    let started = std::time::Instant::now();
                    analyzer.push(chunk, |frame| {
                        std::hint::black_box(frame);
                    });
                    started.elapsed().as_secs_f64() * 1e6
                })
                .collect();
            let mean = times.iter().sum::<f64>() / times.len() as f64;
            times.sort_by(f64::total_cmp);
            let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
            let hop_us = settings.hop as f64 / f64::from(RATE) * 1e6;
            Ok(AnalysisTime {
                window: settings.window,
                hop: settings.hop,
                hops: times.len(),
                mean_us: mean,
                median_us: at(0.5),
                p95_us: at(0.95),
                p99_us: at(0.99),
                core_percent: 100.0 * mean / hop_us,
            })
        })
        .collect()
}

/// The figures as a table.
pub fn table(times: &[AnalysisTime]) -> String {
    let mut text = String::from(
        "window   hop    hops   mean us   median us   p95 us   p99 us   % of a core\n",
    );
    for t in times {
        text.push_str(&format!(
            "{:>6} {:>5} {:>7} {:>9.1} {:>11.1} {:>8.1} {:>8.1} {:>12.2}\n",
            t.window, t.hop, t.hops, t.mean_us, t.median_us, t.p95_us, t.p99_us, t.core_percent
        ));
    }
    text
}
