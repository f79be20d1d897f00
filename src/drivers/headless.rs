//! Shows without a window: `sylva render` writes deterministic PNG frames
//! (fixed dt, fixed seed), and `sylva run --headless` runs the show loop
//! into an offscreen target for machines without a screen and for tests of
//! control, reload and soak. Both drive the same [`Show`] as the window.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::control::ControlOptions;
use crate::drivers::live::{Live, LiveOptions, OFF_AIR_NAP, Stepped};
use crate::gpu::{OUTPUT_FORMAT, RenderTarget, read_rgba8};
use crate::outputs::MappedOutputs;
use crate::outputs::send::SendOptions;
use crate::outputs::video::VideoWriter;
use crate::show::ensemble::Role;
use crate::show::installation::InstallOptions;
use crate::show::{AudioChoice, Show, ShowOptions, open_device, start, start_live_on};

/// Why a `WIDTHxHEIGHT` argument was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SizeArgError {
    /// No `x` between two numbers.
    #[error("{0:?} is not WIDTHxHEIGHT, e.g. 1920x1080")]
    Form(String),
    /// A side that is not a number in range.
    #[error("{0:?} is not a size between 1 and 16384")]
    Side(String),
}

/// Parses `WIDTHxHEIGHT`.
pub fn parse_size(text: &str) -> Result<[u32; 2], SizeArgError> {
    let (w, h) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| SizeArgError::Form(text.to_string()))?;
    let parse = |v: &str| {
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|v| (1..=16384).contains(v))
            .ok_or_else(|| SizeArgError::Side(v.to_string()))
    };
    Ok([parse(w)?, parse(h)?])
}

/// Options of `sylva render`.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// Show to render.
    pub show: ShowOptions,
    /// Number of frames; `None`: 60, or with a sound file all of it.
    pub frames: Option<u32>,
    /// Output size.
    pub size: [u32; 2],
    /// Folder for `frame_00000.png` and onward.
    pub out: Option<PathBuf>,
    /// Frames per second; dt is exactly `1 / fps`.
    pub fps: f32,
    /// Write every n-th frame only (a time-lapse of a long show); 1
    /// writes them all.
    pub every: u32,
    /// Encode the frames (and the sound file) into this video with ffmpeg.
    pub video: Option<PathBuf>,
}

/// Renders `frames` PNGs. Any error a layer reports fails the render, so a
/// broken shader never yields a folder of black frames.
pub fn render(options: &RenderOptions) -> anyhow::Result<()> {
    if let Some(out) = &options.out {
        std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    }
    let exact = ShowOptions {
        exact: true,
        ..options.show.clone()
    };
    let mut show = start(&exact, OUTPUT_FORMAT)?;
    fail_on_errors(&show)?;
    let soundtrack = match &options.show.audio {
        AudioChoice::File(path) => Some(path.as_path()),
        _ => None,
    };
    let frames = options
        .frames
        .unwrap_or_else(|| match show.hearing().sound_seconds() {
            Some(seconds) => (seconds * f64::from(options.fps)).ceil() as u32,
            None => 60,
        });
    let mut video = options
        .video
        .as_ref()
        .map(|path| VideoWriter::start(path, options.size, options.fps, soundtrack))
        .transpose()?;
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "render.output",
        options.size,
        OUTPUT_FORMAT,
    );
    let progress = indicatif::ProgressBar::new(u64::from(frames)).with_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} frames, {per_sec}, eta {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let dt = 1.0 / options.fps;
    let every = options.every.max(1);
    for index in 0..frames {
        show.frame(dt, None, &mut output, |_, _| {});
        progress.inc(1);
        if (index + 1) % every != 0 {
            continue;
        }
        let image = read_rgba8(&show.ground.gpu, &output.texture)?;
        fail_on_errors(&show)?;
        if let Some(video) = video.as_mut() {
            video.frame(image.as_raw())?;
        }
        if let Some(out) = &options.out {
            let path = out.join(format!("frame_{index:05}.png"));
            image
                .save(&path)
                .with_context(|| format!("writing {}", path.display()))?;
            write_outputs(&show, out, index)?;
        }
    }
    progress.finish();
    if let Some(video) = video {
        let path = video.finish()?;
        tracing::info!("video written to {}", path.display());
    }
    Ok(())
}

/// A live frame as `folder/frame_N.png` (and its outputs'), N its show
/// frame number, when N is a multiple of `every`: the same name on every
/// machine of an ensemble.
fn write_frame(
    show: &Show,
    output: &RenderTarget,
    folder: &std::path::Path,
    every: u32,
) -> anyhow::Result<()> {
    let frame = show.clock.frame;
    if !frame.is_multiple_of(u64::from(every.max(1))) {
        return Ok(());
    }
    // The outputs first, the canvas last, each whole or not at all: a
    // frame's canvas on disk says its outputs are there too, even when
    // the process is killed between them.
    write_outputs(show, folder, frame)?;
    let path = folder.join(format!("frame_{frame:05}.png"));
    save_whole(&read_rgba8(&show.ground.gpu, &output.texture)?, &path)
}

/// `image` as the PNG `path`, through a file beside it renamed over it.
fn save_whole(image: &image::RgbaImage, path: &std::path::Path) -> anyhow::Result<()> {
    let partial = path.with_extension("png.partial");
    image
        .save_with_format(&partial, image::ImageFormat::Png)
        .with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, path).with_context(|| format!("writing {}", path.display()))
}

/// Each output of the outputs file in use as `out/<output name>/frame_N.png`.
fn write_outputs(
    show: &Show,
    out: &std::path::Path,
    index: impl std::fmt::Display,
) -> anyhow::Result<()> {
    for output in show.outputs().map_or(&[][..], |o| o.outputs()) {
        let folder = out.join(&output.plan.name);
        std::fs::create_dir_all(&folder)
            .with_context(|| format!("creating {}", folder.display()))?;
        let path = folder.join(format!("frame_{index:0>5}.png"));
        save_whole(
            &read_rgba8(&show.ground.gpu, &output.target.texture)?,
            &path,
        )?;
    }
    Ok(())
}

fn fail_on_errors(show: &Show) -> anyhow::Result<()> {
    let errors = show.ground.errors.snapshot();
    if let Some(first) = errors.first() {
        bail!("{}: {}", first.origin, first.message);
    }
    Ok(())
}

/// Options of `sylva run --headless`.
#[derive(Debug, Clone)]
pub struct HeadlessOptions {
    /// Show to run.
    pub show: ShowOptions,
    /// Offscreen target size.
    pub size: [u32; 2],
    /// Stop after this many seconds of wall time.
    pub exit_after: Option<f64>,
    /// Stop after this many frames.
    pub frames: Option<u64>,
    /// Run as fast as possible with a fixed dt instead of at real-time pace.
    pub unpaced: bool,
    /// Frame rate when paced, and the fixed rate when unpaced.
    pub fps: f32,
    /// MIDI and OSC, if the show listens.
    pub control: Option<ControlOptions>,
    /// State file and schedule of an installation.
    pub install: InstallOptions,
    /// NDI, streams, recording.
    pub send: SendOptions,
    /// Leading or following other machines.
    pub ensemble: Option<Role>,
    /// Write every `.1`-th frame (and each output's) as a PNG named by
    /// its show frame number into this folder.
    pub frames_to: Option<(PathBuf, u32)>,
}

/// Runs the show loop without a window until a limit is reached.
pub fn run(options: &HeadlessOptions) -> anyhow::Result<()> {
    let show = start_live_on(open_device(&options.show)?, &options.show, OUTPUT_FORMAT)?;
    let mut live = Live::start(
        show,
        &LiveOptions {
            control: options.control.as_ref(),
            install: &options.install,
            send: &options.send,
            fps: options.fps,
            playlist: options.show.playlist.as_deref(),
            ensemble: options.ensemble,
            // Unpaced, a follower's loop draws the frames it is behind one
            // by one, each written by `--frames-to`.
            catch_up: false,
        },
    )?;
    if let Some((folder, _)) = &options.frames_to {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("creating {}", folder.display()))?;
    }
    // A follower draws when its leader's frames come, at the leader's pace.
    let paced = !options.unpaced && !matches!(options.ensemble, Some(Role::Follow(_)));
    let mut output = RenderTarget::new(
        &live.show.ground.gpu.device,
        "headless.output",
        options.size,
        OUTPUT_FORMAT,
    );
    let period = Duration::from_secs_f32(1.0 / options.fps);
    let started = Instant::now();
    let mut last = started;
    // When the next frame is due: frames keep to the rate on average
    // (sleeping a period from each frame's start lost a frame a second to
    // the sleeps' overshoot), and a frame late by more than a period
    // starts the count again rather than rushing to catch up.
    let mut due = started;
    let mut report = started;
    let mut frames = 0u64;
    let mut reported = 0u64;
    loop {
        let now = Instant::now();
        let done_frames = options.frames.is_some_and(|n| frames >= n);
        let done_time = options
            .exit_after
            .is_some_and(|s| now.duration_since(started).as_secs_f64() >= s);
        if done_frames || done_time {
            break;
        }
        let dt = if options.unpaced {
            period.as_secs_f32()
        } else {
            now.duration_since(last).as_secs_f32().clamp(0.0, 0.25)
        };
        last = now;
        // No window turns the main run loop here, on air or off: Syphon's
        // clients find its servers through it.
        crate::outputs::send::syphon::turn_main_run_loop();
        if live.show.ground.gpu.is_lost() {
            live.show.recover_device(None)?;
            output = RenderTarget::new(
                &live.show.ground.gpu.device,
                "headless.output",
                options.size,
                OUTPUT_FORMAT,
            );
        }
        // An outputs file's canvas, once read, is the offscreen target's size.
        let canvas = (live.show.outputs().and_then(MappedOutputs::canvas)).unwrap_or(options.size);
        if output.size != canvas {
            output = RenderTarget::new(
                &live.show.ground.gpu.device,
                "headless.output",
                canvas,
                OUTPUT_FORMAT,
            );
        }
        match live.step(dt, &mut output, |_, _| {}) {
            Stepped::Drawn => {}
            Stepped::Held => continue,
            Stepped::OffAir => {
                std::thread::sleep(OFF_AIR_NAP);
                continue;
            }
            Stepped::Ended => {
                tracing::info!("headless: the leader's show ended");
                break;
            }
        }
        frames += 1;
        if let Some((folder, every)) = &options.frames_to {
            write_frame(&live.show, &output, folder, *every)?;
        }
        if now.duration_since(report) >= Duration::from_secs(5) {
            // The rate of the last five seconds, not since the start: a
            // fit or a rebuild early on says nothing of the show now.
            let fps = (frames - reported) as f64 / now.duration_since(report).as_secs_f64();
            tracing::info!("headless: {frames} frames, {fps:.1} fps over the last 5 s");
            (report, reported) = (now, frames);
        }
        if paced {
            due += period;
            let now = Instant::now();
            if due + period < now {
                due = now;
            }
            std::thread::sleep(due.saturating_duration_since(now));
        }
    }
    live.show.ground.gpu.wait_idle();
    // The show's own time, before the senders finish their files.
    let seconds = started.elapsed().as_secs_f64();
    live.finish();
    for line in live.show.media_report() {
        tracing::info!("media: {line}");
    }
    tracing::info!(
        "headless: stopped after {frames} frames in {seconds:.2} s ({:.1} fps)",
        frames as f64 / seconds.max(1e-9)
    );
    if let Some(control) = live.control.filter(|c| c.latency_samples() > 0) {
        let ms = |q| control.latency(q).map_or(0.0, |d| d.as_secs_f64() * 1e3);
        tracing::info!(
            "control latency, UDP receipt to applied: median {:.2} ms, p99 {:.2} ms, max {:.2} ms over {} writes",
            ms(0.5),
            ms(0.99),
            ms(1.0),
            control.latency_samples()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_parse_and_nonsense_is_refused() {
        assert_eq!(parse_size("256x144"), Ok([256, 144]));
        assert!(parse_size("256").is_err());
        assert!(parse_size("0x10").is_err());
        assert!(parse_size("axb").is_err());
    }
}
