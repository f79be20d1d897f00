//! The live input: a supervised thread `sylva-audio` opens the input device
//! with `cpal` (the default one, or the first whose name contains
//! `--audio NAME`), whose callback only mixes to mono and copies into a
//! lock-free ring (`rtrb`); the same thread drains the ring, analyses every
//! hop and sends the frames to the show. A missing device is one warning
//! and silence; a device that goes away is looked for again every 2 s,
//! like MIDI ports.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};

use super::analysis::{AnalysisSettings, Analyzer, AudioFrame, GainSettings};
use super::{Heard, HeardSoFar};
use crate::base::status::ErrorLog;

/// Pause between looks for a device that is not there.
const RESCAN: Duration = Duration::from_secs(2);
/// Pause between two drains of the ring: well under a hop.
const DRAIN_EVERY: Duration = Duration::from_millis(2);
/// Seconds of sound the ring holds; a stalled analysis drops the rest.
const RING_SECONDS: u32 = 2;
/// Frames waiting for the show; a show that stops reading loses the oldest.
const QUEUED_FRAMES: usize = 512;

/// Why the input could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// No device (of that name).
    #[error("no audio input device{}", .0.as_ref().map_or(String::new(), |n| format!(" whose name contains {n:?}")))]
    NoDevice(Option<String>),
    /// The device refused.
    #[error("audio input {device}: {reason}")]
    Device {
        /// The device's name.
        device: String,
        /// What cpal said.
        reason: StreamError,
    },
}

/// Why the device gave no stream.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// What cpal said.
    #[error(transparent)]
    Cpal(#[from] cpal::Error),
    /// Samples sylva does not take.
    #[error("sample format {0} is not supported")]
    Format(cpal::SampleFormat),
}

/// What the show sees of the input.
pub struct LiveInput {
    frames: Receiver<AudioFrame>,
    gain: Arc<Mutex<GainSettings>>,
    device: Arc<Mutex<String>>,
    stop: Arc<AtomicBool>,
    heard: HeardSoFar,
    tap: Arc<Mutex<Option<SyncSender<SoundBlock>>>>,
}

pub use crate::outputs::send::record::SoundBlock;

/// Blocks queued to a recording's writer (about a second at the thread's
/// 2 ms drains); a writer that falls behind loses blocks, never the show.
const TAPPED_BLOCKS: usize = 512;

/// Where the samples come from: the sound card through cpal, or a test's
/// own.
pub trait Microphone: Send + 'static {
    /// Opens the input (on the audio thread, where it stays).
    fn open(&mut self) -> Result<OpenInput, InputError>;
}

/// An input that plays.
pub struct OpenInput {
    /// Its name, for the HUD and the log.
    pub name: String,
    /// Samples a second.
    pub rate: u32,
    /// Mono samples, filled by its callback.
    pub ring: rtrb::Consumer<f32>,
    /// Set when it goes away.
    pub failed: Arc<AtomicBool>,
    /// What must live while it plays (cpal's stream), dropped to stop it.
    pub keep: Box<dyn std::any::Any>,
}

/// The system's audio input through cpal: the default device, or the
/// first whose name contains `name`.
pub struct SoundCard {
    name: Option<String>,
}

impl LiveInput {
    /// Starts listening to the device whose name contains `name` (the
    /// default input when `None`).
    pub fn start(name: Option<String>, settings: AnalysisSettings, errors: ErrorLog) -> Self {
        Self::listen_to(SoundCard { name }, settings, errors)
    }

    /// Starts listening to `microphone`.
    pub fn listen_to(
        microphone: impl Microphone,
        settings: AnalysisSettings,
        errors: ErrorLog,
    ) -> Self {
        let (sender, frames) = sync_channel(QUEUED_FRAMES);
        let gain = Arc::new(Mutex::new(GainSettings::default()));
        let device = Arc::new(Mutex::new("no audio input yet".to_string()));
        let stop = Arc::new(AtomicBool::new(false));
        let tap = Arc::new(Mutex::new(None));
        let mut listening = CaptureThread {
            microphone: Box::new(microphone),
            settings,
            sender,
            gain: gain.clone(),
            device: device.clone(),
            stop: stop.clone(),
            warned: false,
            tap: tap.clone(),
        };
        let spawned = crate::base::supervise::spawn("sylva-audio", errors, move || listening.run());
        if let Err(error) = spawned {
            tracing::warn!(
                "cannot start the audio thread: {error}; the show goes on without sound"
            );
        }
        Self {
            frames,
            gain,
            device,
            stop,
            heard: HeardSoFar::default(),
            tap,
        }
    }

    /// The input's samples from now on, for a recording (a newer tap
    /// replaces an older one; dropping the receiver ends it).
    pub fn tap(&self) -> Receiver<SoundBlock> {
        let (sender, blocks) = sync_channel(TAPPED_BLOCKS);
        *self.tap.lock().unwrap_or_else(PoisonError::into_inner) = Some(sender);
        blocks
    }

    /// What was heard since the last call.
    pub fn hear(&mut self, gain: GainSettings) -> Heard {
        *self.gain.lock().unwrap_or_else(PoisonError::into_inner) = gain;
        while let Ok(frame) = self.frames.try_recv() {
            self.heard.add(&frame);
        }
        self.heard.take()
    }

    /// The device open now, or why none is.
    pub fn device(&self) -> String {
        self.device
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for LiveInput {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The thread's side.
struct CaptureThread {
    microphone: Box<dyn Microphone>,
    settings: AnalysisSettings,
    sender: SyncSender<AudioFrame>,
    gain: Arc<Mutex<GainSettings>>,
    device: Arc<Mutex<String>>,
    stop: Arc<AtomicBool>,
    warned: bool,
    tap: Arc<Mutex<Option<SyncSender<SoundBlock>>>>,
}

impl CaptureThread {
    fn run(&mut self) {
        while !self.stop.load(Ordering::Relaxed) {
            match self.microphone.open() {
                Ok(open) => {
                    self.warned = false;
                    self.listen(open);
                }
                Err(error) => {
                    if !self.warned {
                        tracing::warn!(
                            "{error}; the show goes on and the audio analysis stays at zero (looking again every {} s)",
                            RESCAN.as_secs()
                        );
                        self.warned = true;
                    }
                    self.set_device(format!("{error}"));
                    std::thread::sleep(RESCAN);
                }
            }
        }
    }

    fn set_device(&self, text: String) {
        *self.device.lock().unwrap_or_else(PoisonError::into_inner) = text;
    }
}

impl Microphone for SoundCard {
    /// Opens the device and starts its stream.
    fn open(&mut self) -> Result<OpenInput, InputError> {
        quiet_alsa();
        let host = cpal::default_host();
        let device = match &self.name {
            None => host.default_input_device(),
            Some(name) => host.input_devices().ok().and_then(|mut devices| {
                devices.find(|d| d.to_string().to_lowercase().contains(&name.to_lowercase()))
            }),
        }
        .ok_or_else(|| InputError::NoDevice(self.name.clone()))?;
        let device_name = device.to_string();
        let refused = |reason: StreamError| InputError::Device {
            device: device_name.clone(),
            reason,
        };
        let supported = device
            .default_input_config()
            .map_err(|e| refused(e.into()))?;
        let config = supported.config();
        let rate = config.sample_rate;
        let channels = usize::from(config.channels).max(1);
        let (producer, consumer) = rtrb::RingBuffer::new((rate * RING_SECONDS) as usize);
        let failed = Arc::new(AtomicBool::new(false));
        let stream = build_stream(
            &device,
            &config,
            supported.sample_format(),
            channels,
            producer,
            failed.clone(),
        )
        .map_err(&refused)?;
        stream.play().map_err(|e| refused(e.into()))?;
        Ok(OpenInput {
            name: device_name,
            rate,
            ring: consumer,
            failed,
            keep: Box::new(stream),
        })
    }
}

impl CaptureThread {
    /// Hands `samples` to a recording's tap, if there is one; a tap whose
    /// receiver is gone is removed.
    fn hand_to_tap(&self, rate: u32, samples: &[f32]) {
        if samples.is_empty() {
            return;
        }
        let mut tap = self.tap.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(sender) = tap.as_ref()
            && let Err(std::sync::mpsc::TrySendError::Disconnected(_)) =
                sender.try_send((rate, samples.to_vec()))
        {
            *tap = None;
        }
    }

    /// Analyses what the device sends until it fails or the show ends.
    fn listen(&mut self, mut open: OpenInput) {
        tracing::info!("audio input: {} at {} Hz", open.name, open.rate);
        self.set_device(format!("{} ({} Hz)", open.name, open.rate));
        let mut analyzer = Analyzer::new(open.rate, self.settings);
        let mut samples = Vec::new();
        while !self.stop.load(Ordering::Relaxed) && !open.failed.load(Ordering::Relaxed) {
            analyzer.gain = *self.gain.lock().unwrap_or_else(PoisonError::into_inner);
            samples.clear();
            if let Ok(chunk) = open.ring.read_chunk(open.ring.slots()) {
                let (a, b) = chunk.as_slices();
                samples.extend_from_slice(a);
                samples.extend_from_slice(b);
                chunk.commit_all();
            }
            self.hand_to_tap(open.rate, &samples);
            let sender = &self.sender;
            // A full queue (a show that stopped reading) drops frames, never blocks.
            analyzer.push(&samples, |frame| {
                let _ = sender.try_send(*frame);
            });
            std::thread::sleep(DRAIN_EVERY);
        }
        drop(open.keep);
        if !self.stop.load(Ordering::Relaxed) {
            tracing::warn!(
                "audio input {} went away; looking for it every {} s",
                open.name,
                RESCAN.as_secs()
            );
            self.set_device(format!("{} went away", open.name));
            std::thread::sleep(RESCAN);
        }
    }
}

/// alsa-lib prints a dozen lines to stderr at every look for a card that
/// is not there (every 2 s, for weeks, on a machine without sound); on
/// this thread they go to a buffer instead, replaced at each look so it
/// never grows.
#[cfg(target_os = "linux")]
fn quiet_alsa() {
    if let Err(error) = alsa::Output::local_error_handler() {
        tracing::debug!("cannot take alsa-lib's messages off stderr: {error}");
    }
}

#[cfg(not(target_os = "linux"))]
fn quiet_alsa() {}

/// Builds an input stream of the device's own sample format, mixing each
/// frame to mono into `ring`.
fn build_stream(
    device: &cpal::Device,
    config: &cpal::StreamConfig,
    format: cpal::SampleFormat,
    channels: usize,
    ring: rtrb::Producer<f32>,
    failed: Arc<AtomicBool>,
) -> Result<cpal::Stream, StreamError> {
    match format {
        cpal::SampleFormat::F32 => typed::<f32>(device, config, channels, ring, failed),
        cpal::SampleFormat::I16 => typed::<i16>(device, config, channels, ring, failed),
        cpal::SampleFormat::U16 => typed::<u16>(device, config, channels, ring, failed),
        cpal::SampleFormat::I32 => typed::<i32>(device, config, channels, ring, failed),
        cpal::SampleFormat::U8 => typed::<u8>(device, config, channels, ring, failed),
        cpal::SampleFormat::F64 => typed::<f64>(device, config, channels, ring, failed),
        other => Err(StreamError::Format(other)),
    }
}

fn typed<T>(
    device: &cpal::Device,
    config: &cpal::StreamConfig,
    channels: usize,
    mut ring: rtrb::Producer<f32>,
    failed: Arc<AtomicBool>,
) -> Result<cpal::Stream, StreamError>
where
    T: cpal::SizedSample,
    f32: cpal::FromSample<T>,
{
    let scale = 1.0 / channels as f32;
    // The callback neither allocates nor locks: it copies what fits.
    let data = move |data: &[T], _: &cpal::InputCallbackInfo| {
        for frame in data.chunks(channels) {
            let mono: f32 = frame
                .iter()
                .map(|s| <f32 as cpal::FromSample<T>>::from_sample_(*s))
                .sum::<f32>()
                * scale;
            if ring.push(mono).is_err() {
                break;
            }
        }
    };
    // Only a device gone or a stream that must be rebuilt ends it; an
    // overrun or a refused real-time priority is worth a line in the log.
    let mut logged = 0u32;
    let error = move |error: cpal::Error| {
        // Overruns can come every callback: the log hears of the first few.
        if logged < 10 {
            logged += 1;
            tracing::warn!("audio input: {error}");
        }
        let fatal = matches!(
            error.kind(),
            cpal::ErrorKind::DeviceNotAvailable
                | cpal::ErrorKind::HostUnavailable
                | cpal::ErrorKind::StreamInvalidated
        );
        if fatal {
            failed.store(true, Ordering::Relaxed);
        }
    };
    device
        .build_input_stream::<T, _, _>(*config, data, error, None)
        .map_err(StreamError::from)
}
