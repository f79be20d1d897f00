//! Sound as a control source, on synthetic sound made here: sines land in
//! their bands, noise bursts give onsets on time and no others, a kick
//! pattern gives its tempo and beats, `render --audio` is the same twice
//! and follows its soundtrack, `[[modulate]]` moves its parameter, Lua and
//! WGSL see the analysis, a missing input warns and the show runs, and
//! the Link timeline leads the clock.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use sylva::audio::analysis::{AnalysisSettings, Analyzer, AudioFrame};
use sylva::audio::file::{FileFeed, read};
use sylva::audio::input::{InputError, LiveInput, Microphone, OpenInput};
use sylva::audio::{Feed, GainSettings};
use sylva::base::status::ErrorLog;
use sylva::drivers::headless::{RenderOptions, render};
use sylva::gpu::{OUTPUT_FORMAT, RenderTarget, read_rgba8};
use sylva::params::{Source, Value};
use sylva::show::{AudioChoice, ShowOptions};

use crate::support::{self, Checked};

const RATE: u32 = 48_000;

/// 16-bit mono PCM WAV.
pub(crate) fn write_wav(path: &Path, samples: &[f32]) {
    write_wav_at(path, samples, RATE);
}

/// 16-bit mono PCM WAV whose header declares `rate`.
fn write_wav_at(path: &Path, samples: &[f32], rate: u32) {
    let data: Vec<u8> = samples
        .iter()
        .flat_map(|s| ((s.clamp(-1.0, 1.0) * 32767.0) as i16).to_le_bytes())
        .collect();
    let mut wav = Vec::new();
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes());
    wav.extend_from_slice(&rate.to_le_bytes());
    wav.extend_from_slice(&rate.wrapping_mul(2).to_le_bytes());
    wav.extend_from_slice(&2u16.to_le_bytes());
    wav.extend_from_slice(&16u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(data.len() as u32).to_le_bytes());
    wav.extend_from_slice(&data);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).checked("making the sound's folder");
    }
    std::fs::write(path, wav).checked("writing the sound");
}

fn sine(hz: f32, seconds: f32, amplitude: f32) -> Vec<f32> {
    let n = (seconds * RATE as f32) as usize;
    (0..n)
        .map(|i| amplitude * (std::f32::consts::TAU * hz * i as f32 / RATE as f32).sin())
        .collect()
}

/// Reproducible white noise in -1..1.
fn noise(n: usize, seed: u32) -> impl Iterator<Item = f32> {
    let mut state = seed.wrapping_mul(2_654_435_761).max(1);
    (0..n).map(move |_| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state as f32 / u32::MAX as f32 * 2.0 - 1.0
    })
}

/// A 60 Hz kick (a decaying sine with a click) every `period` seconds.
fn kicks(seconds: f32, period: f32) -> Vec<f32> {
    let n = (seconds * RATE as f32) as usize;
    let mut out = vec![0.0; n];
    let mut at = 0.0;
    while at < seconds {
        let start = (at * RATE as f32) as usize;
        for i in 0..(0.15 * RATE as f32) as usize {
            let t = i as f32 / RATE as f32;
            if let Some(s) = out.get_mut(start + i) {
                let pitch = 60.0 + 90.0 * (-t * 40.0).exp();
                *s += 0.9 * (-t * 18.0).exp() * (std::f32::consts::TAU * pitch * t).sin();
            }
        }
        at += period;
    }
    out
}

/// The show hears `sound` in step with its clock.
fn hear_file(show: &mut sylva::show::Show, sound: &Path) {
    let sound = read(sound).checked("reading the sound");
    let feed = FileFeed::new(sound, AnalysisSettings::default());
    show.hear_from(Feed::File(Box::new(feed)));
}

fn analyse(samples: &[f32]) -> Vec<AudioFrame> {
    let mut analyzer = Analyzer::new(RATE, AnalysisSettings::default());
    let mut frames = Vec::new();
    analyzer.push(samples, |f| frames.push(*f));
    frames
}

#[test]
fn sound_files_declaring_absurd_rates_are_refused_with_the_rate() {
    // The hardening probe: an 8 KB WAV declaring 4,294,967,295 Hz grew
    // `render --audio` to 4.3 GB; 0 Hz was reported as longer than an hour.
    let folder = support::show_folder("audio_rates", &[]);
    for rate in [u32::MAX, 0, 7_999, 400_000] {
        let path = folder.join(format!("rate_{rate}.wav"));
        write_wav_at(&path, &sine(440.0, 0.08, 0.5), rate);
        let message = match read(&path) {
            Ok(sound) => panic!("{rate} Hz read as {} Hz", sound.rate),
            Err(error) => error.to_string(),
        };
        assert!(
            message.contains(&format!("{rate} Hz")) && message.contains("8,000-384,000"),
            "{rate}: {message}"
        );
    }
    let usual = folder.join("rate_44100.wav");
    write_wav_at(&usual, &sine(440.0, 0.08, 0.5), 44_100);
    assert_eq!(read(&usual).checked("a 44.1 kHz file").rate, 44_100);
    std::fs::remove_dir_all(folder).ok();
}

#[test]
fn a_60_hz_sine_is_bass_and_a_6_khz_sine_is_high() {
    for (hz, band) in [(60.0, "bass"), (6_000.0, "high"), (1_000.0, "mid")] {
        let frames = analyse(&sine(hz, 1.0, 0.3));
        let last = frames.last().copied().unwrap_or_default();
        let (bass, mid, high) = (last.bass, last.mid, last.high);
        let (loud, others) = match band {
            "bass" => (bass, [mid, high]),
            "high" => (high, [bass, mid]),
            _ => (mid, [bass, high]),
        };
        assert!(loud > 0.9, "{hz} Hz: {band} reads {loud}");
        for other in others {
            assert!(
                other < 0.05,
                "{hz} Hz: another band reads {other} ({last:?})"
            );
        }
        let strongest = (0..16)
            .max_by(|a, b| last.bands[*a].total_cmp(&last.bands[*b]))
            .unwrap_or(0);
        let edge = |k: usize| 30.0 * (16_000.0f32 / 30.0).powf(k as f32 / 16.0);
        assert!(
            edge(strongest) * 0.8 <= hz && hz <= edge(strongest + 1) * 1.25,
            "{hz} Hz peaks in band {strongest} ({}-{} Hz)",
            edge(strongest),
            edge(strongest + 1)
        );
        assert!(
            last.level > 0.9,
            "automatic gain takes the level to 1: {}",
            last.level
        );
    }
}

#[test]
fn the_gain_can_be_fixed_frozen_and_scaled() {
    let quiet = sine(60.0, 1.0, 0.05);
    let mut analyzer = Analyzer::new(RATE, AnalysisSettings::default());
    analyzer.gain = GainSettings {
        automatic: false,
        frozen: false,
        manual: 2.0,
    };
    let mut last = AudioFrame::default();
    analyzer.push(&quiet, |f| last = *f);
    assert!(
        (last.level - 0.1).abs() < 0.01,
        "manual gain 2 on a 0.05 sine: {}",
        last.level
    );
    let mut analyzer = Analyzer::new(RATE, AnalysisSettings::default());
    analyzer.push(&sine(60.0, 0.5, 0.8), |_| {});
    analyzer.gain.frozen = true;
    analyzer.push(&quiet, |f| last = *f);
    assert!(
        last.level < 0.1,
        "frozen at the loud part's gain, the quiet part stays low: {}",
        last.level
    );
}

#[test]
fn noise_bursts_give_onsets_within_a_hop_and_no_others() {
    let mut samples = vec![0.0; 4 * RATE as usize];
    let bursts: Vec<f64> = (0..8).map(|k| 0.25 + 0.5 * k as f64).collect();
    for (k, at) in bursts.iter().enumerate() {
        let start = (at * f64::from(RATE)) as usize;
        for (i, s) in noise(RATE as usize / 20, k as u32 + 1).enumerate() {
            samples[start + i] = 0.5 * s;
        }
    }
    let onsets: Vec<f64> = analyse(&samples).iter().filter_map(|f| f.onset).collect();
    let hop = 512.0 / f64::from(RATE);
    assert_eq!(onsets.len(), bursts.len(), "one onset a burst: {onsets:?}");
    for (onset, burst) in onsets.iter().zip(&bursts) {
        assert!(
            (onset - burst).abs() <= hop,
            "onset at {onset:.4} s for a burst at {burst} s"
        );
    }
}

#[test]
fn a_120_bpm_kick_pattern_gives_its_tempo_and_beats_on_the_kicks() {
    let frames = analyse(&kicks(16.0, 0.5));
    let bpm = frames.last().map_or(0.0, |f| f.bpm);
    assert!((bpm - 120.0).abs() <= 1.0, "tempo {bpm}");
    let beats: Vec<f64> = frames
        .iter()
        .filter_map(|f| f.beat)
        .filter(|t| *t > 8.0)
        .collect();
    assert!(beats.len() >= 14, "beats over the last 8 s: {beats:?}");
    for beat in &beats {
        let kick = (beat / 0.5).round() * 0.5;
        assert!(
            (beat - kick).abs() <= 0.020,
            "beat at {beat:.4} s, kick at {kick} s"
        );
    }
}

fn flash_project(name: &str) -> PathBuf {
    // The frame block's audio values straight onto the screen, and a
    // modulation of the layer's opacity by the bass.
    let shader = "// @param gain float 1 min=0 max=4 \"How bright\"\n\n@fragment\nfn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {\n    let band = audio_band(sylva, u32(in.uv.x * 16.0));\n    return vec4<f32>(sylva.bass, band, sylva.level + sylva.onset * 0.0, 1.0) * params.gain;\n}\n";
    support::show_folder(
        name,
        &[
            ("shaders/shader/flash.wgsl", shader),
            ("presets/flash.toml", "layers = [\"shader.flash\"]\n"),
            (
                "presets/mappings/sound.toml",
                "[[modulate]]\nsource = \"audio.bass\"\nparam = \"shader.flash.gain\"\nrange = [0.0, 2.0]\nattack = 0.0\nrelease = 0.2\n",
            ),
        ],
    )
}

fn render_to(project: &Path, sound: &Path, out: &Path) -> Vec<Vec<u8>> {
    std::fs::remove_dir_all(out).ok();
    let mut show = ShowOptions::new(project, "flash");
    show.adapter = sylva::gpu::AdapterChoice::from_cli(None);
    show.audio = AudioChoice::File(sound.to_path_buf());
    let options = RenderOptions {
        show,
        frames: None,
        size: [32, 18],
        out: Some(out.to_path_buf()),
        fps: 24.0,
        every: 1,
        video: None,
    };
    render(&options).checked("rendering to the sound");
    let mut files: Vec<PathBuf> = std::fs::read_dir(out)
        .checked("reading the frames")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| std::fs::read(f).checked("reading a frame"))
        .collect()
}

#[test]
fn render_audio_is_the_same_twice_and_follows_its_soundtrack() {
    let project = flash_project("audio_render");
    let mut beat = vec![0.0; RATE as usize / 2];
    beat.extend(sine(60.0, 0.5, 0.8));
    let mut other = sine(60.0, 0.5, 0.8);
    other.extend(vec![0.0; RATE as usize / 2]);
    let (a, b) = (project.join("a.wav"), project.join("b.wav"));
    write_wav(&a, &beat);
    write_wav(&b, &other);
    let first = render_to(&project, &a, &project.join("out1"));
    let again = render_to(&project, &a, &project.join("out2"));
    let different = render_to(&project, &b, &project.join("out3"));
    assert_eq!(first.len(), 24, "one second at 24 fps: the whole sound");
    assert!(first == again, "the same sound renders the same frames");
    assert!(first != different, "another sound renders other frames");
    let red = |png: &[u8]| {
        let image = image::load_from_memory(png)
            .checked("decoding a frame")
            .to_rgba8();
        image.get_pixel(16, 9)[0]
    };
    assert!(
        red(&first[4]) < 8,
        "silence in the first half: {}",
        red(&first[4])
    );
    assert!(
        red(&first[20]) > 100,
        "the bass in the second half: {}",
        red(&first[20])
    );
}

#[test]
fn a_modulation_moves_its_parameter_with_the_source_over_the_base_value() {
    let project = flash_project("audio_modulate");
    let sound = project.join("bass.wav");
    let mut samples = vec![0.0; RATE as usize / 2];
    samples.extend(sine(60.0, 0.5, 0.8));
    write_wav(&sound, &samples);
    let mut show = support::show(project, "flash", OUTPUT_FORMAT);
    hear_file(&mut show, &sound);
    show.registry
        .set(
            "shader.flash.gain",
            Value::Float(0.5),
            Source::Osc("test".into()),
        )
        .checked("setting the base");
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "audio.output",
        [16, 16],
        OUTPUT_FORMAT,
    );
    let mut gains = Vec::new();
    for _ in 0..24 {
        show.frame(1.0 / 24.0, None, &mut output, |_, _| {});
        gains.push(show.registry.float("shader.flash.gain"));
    }
    assert!(
        (gains[8] - 0.5).abs() < 0.01,
        "silence: the base value, {}",
        gains[8]
    );
    assert!(gains[23] > 2.2, "bass: base plus up to 2, {}", gains[23]);
    assert_eq!(
        show.registry.base("shader.flash.gain"),
        Some(&Value::Float(0.5)),
        "the base stays what OSC set"
    );
    assert!(
        show.registry
            .set("audio.bass", Value::Float(1.0), Source::Osc("test".into()))
            .is_err(),
        "the analysis is read-only"
    );
    let image = read_rgba8(&show.ground.gpu, &output.texture).checked("reading back");
    assert!(
        image.get_pixel(8, 8)[0] > 200,
        "the WGSL frame block carries the bass"
    );
}

#[test]
fn lua_reads_the_analysis_and_hears_onsets() {
    let project = support::show_folder(
        "audio_lua",
        &[
            (
                "presets/listen.toml",
                "layers = [\"shader.aurora\"]\nscript = \"scripts/listen.lua\"\n",
            ),
            (
                "scripts/listen.lua",
                "function on_onset() persist.onsets = (persist.onsets or 0) + 1 end\nfunction update(dt) persist.bass = math.max(persist.bass or 0, sylva.audio.bass) ; persist.bands = #sylva.audio.bands end\n",
            ),
        ],
    );
    let sound = project.join("hits.wav");
    let mut samples = vec![0.0; RATE as usize];
    for k in 0..3 {
        let start = RATE as usize / 8 + k * RATE as usize / 4;
        for (i, s) in sine(60.0, 0.05, 0.8).into_iter().enumerate() {
            samples[start + i] = s;
        }
    }
    write_wav(&sound, &samples);
    let mut show = support::show(project, "listen", OUTPUT_FORMAT);
    hear_file(&mut show, &sound);
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "audio.lua",
        [16, 16],
        OUTPUT_FORMAT,
    );
    for _ in 0..30 {
        show.frame(1.0 / 30.0, None, &mut output, |_, _| {});
    }
    assert_eq!(
        show.script().persisted("onsets").as_deref(),
        Some("3"),
        "one on_onset a hit"
    );
    let bass: f32 = show
        .script()
        .persisted("bass")
        .and_then(|b| b.parse().ok())
        .unwrap_or(0.0);
    assert!(bass > 0.5, "sylva.audio.bass: {bass}");
    assert_eq!(show.script().persisted("bands").as_deref(), Some("16"));
}

#[test]
fn a_missing_input_device_warns_and_the_show_runs_in_silence() {
    let input = LiveInput::start(
        Some("no device is called this".into()),
        AnalysisSettings::default(),
        ErrorLog::default(),
    );
    let mut show = support::show(support::fixtures(), "default", OUTPUT_FORMAT);
    show.hear_from(Feed::Live(Box::new(input)));
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "audio.none",
        [16, 16],
        OUTPUT_FORMAT,
    );
    for _ in 0..5 {
        show.frame(1.0 / 60.0, None, &mut output, |_, _| {});
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(show.registry.float("audio.level"), 0.0);
    let device = show.hearing().device();
    assert!(
        device.contains("no audio input device whose name contains"),
        "the HUD says why: {device}"
    );
}

#[cfg(feature = "link")]
#[test]
fn the_link_timeline_leads_the_clock_and_takes_a_tempo_set_here() {
    // Link's local timeline only: the network is never enabled here.
    let mut show = support::show(support::fixtures(), "default", OUTPUT_FORMAT);
    show.registry
        .set(
            "master.tempo_source",
            Value::Text("link".into()),
            Source::Ui,
        )
        .checked("choosing Link");
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "audio.link",
        [16, 16],
        OUTPUT_FORMAT,
    );
    let mut frame = |show: &mut sylva::show::Show| {
        show.frame(1.0 / 60.0, None, &mut output, |_, _| {});
    };
    frame(&mut show);
    show.registry
        .set("master.bpm", Value::Float(90.0), Source::Osc("test".into()))
        .checked("a tempo from OSC");
    frame(&mut show);
    let started = show.clock.beats;
    std::thread::sleep(std::time::Duration::from_millis(400));
    frame(&mut show);
    assert!(
        (show.registry.float("master.bpm") - 90.0).abs() < 0.01,
        "the session took 90 BPM"
    );
    let beats = show.clock.beats - started;
    // 0.4 s at 90 BPM is 0.6 beats; the clock stands at Link's beat.
    assert!((0.55..0.8).contains(&beats), "{beats} beats in 0.4 s");
    assert_eq!(show.hearing().link_peers(), Some(0));
}

#[test]
fn the_tempo_heard_leads_the_clock_when_the_source_is_audio() {
    let project = support::show_folder("audio_tempo", &[]);
    let sound = project.join("kicks.wav");
    write_wav(&sound, &kicks(12.0, 0.5));
    let mut show = support::show(support::fixtures(), "default", OUTPUT_FORMAT);
    hear_file(&mut show, &sound);
    show.registry
        .set(
            "master.tempo_source",
            Value::Text("audio".into()),
            Source::Ui,
        )
        .checked("choosing the sound");
    show.registry
        .set("master.bpm", Value::Float(90.0), Source::Ui)
        .checked("a tempo to move from");
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "audio.tempo",
        [16, 16],
        OUTPUT_FORMAT,
    );
    let mut phases = Vec::new();
    for frame in 1..=360 {
        show.frame(1.0 / 30.0, None, &mut output, |_, _| {});
        // Just after a kick (every 15th frame), late in the sound.
        if frame > 240 && frame % 15 == 1 {
            phases.push(show.clock.beat_phase());
        }
    }
    let bpm = show.registry.float("master.bpm");
    assert!(
        (bpm - 120.0).abs() <= 1.0,
        "master.bpm follows the kicks: {bpm}"
    );
    for phase in &phases {
        let off = phase.min(1.0 - phase);
        assert!(off < 0.15, "the beat falls on the kicks: phases {phases:?}");
    }
}

/// A microphone the test plugs in and pulls out: while plugged, each
/// open hands the test the ring's other end.
#[derive(Clone, Default)]
struct TestMicrophone {
    plugged: Arc<AtomicBool>,
    failed: Arc<Mutex<Option<Arc<AtomicBool>>>>,
    ring: Arc<Mutex<Option<rtrb::Producer<f32>>>>,
    opened: Arc<AtomicU32>,
}

impl Microphone for TestMicrophone {
    fn open(&mut self) -> Result<OpenInput, InputError> {
        if !self.plugged.load(Ordering::SeqCst) {
            return Err(InputError::NoDevice(Some("test microphone".into())));
        }
        let (producer, consumer) = rtrb::RingBuffer::new(RATE as usize);
        let failed = Arc::new(AtomicBool::new(false));
        *self.ring.lock().checked("the ring") = Some(producer);
        *self.failed.lock().checked("the flag") = Some(failed.clone());
        self.opened.fetch_add(1, Ordering::SeqCst);
        Ok(OpenInput {
            name: "test microphone".into(),
            rate: RATE,
            ring: consumer,
            failed,
            keep: Box::new(()),
        })
    }
}

impl TestMicrophone {
    /// Plays `samples` into the open input, as its callback would.
    fn play(&self, samples: &[f32]) {
        let mut ring = self.ring.lock().checked("the ring");
        if let Some(ring) = ring.as_mut() {
            for s in samples {
                let _ = ring.push(*s);
            }
        }
    }

    fn wait_opened(&self, times: u32) {
        let started = std::time::Instant::now();
        while self.opened.load(Ordering::SeqCst) < times {
            assert!(started.elapsed().as_secs() < 10, "the input was not opened");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// What the input heard once `samples` have been analysed.
fn hear_played(input: &mut LiveInput, microphone: &TestMicrophone, samples: &[f32]) -> AudioFrame {
    microphone.play(samples);
    let seconds = samples.len() as f64 / f64::from(RATE);
    let started = std::time::Instant::now();
    loop {
        let heard = input.hear(GainSettings::default());
        // The analysis restarts its clock at each open.
        if heard.time >= seconds - 0.02 {
            return heard;
        }
        assert!(started.elapsed().as_secs() < 10, "not analysed: {heard:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn the_live_input_is_analysed_and_reopened_when_it_returns() {
    let microphone = TestMicrophone::default();
    microphone.plugged.store(true, Ordering::SeqCst);
    let mut input = LiveInput::listen_to(
        microphone.clone(),
        AnalysisSettings::default(),
        ErrorLog::default(),
    );
    microphone.wait_opened(1);
    let heard = hear_played(&mut input, &microphone, &sine(60.0, 0.4, 0.5));
    assert!(
        heard.bass > 0.9 && heard.high < 0.05,
        "a 60 Hz sine through the ring: {heard:?}"
    );
    assert!(
        input.device().contains("test microphone (48000 Hz)"),
        "{}",
        input.device()
    );
    // Pulled out: the callback reports the device gone.
    microphone.plugged.store(false, Ordering::SeqCst);
    if let Some(failed) = microphone.failed.lock().checked("the flag").as_ref() {
        failed.store(true, Ordering::SeqCst);
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(input.device().contains("went away"), "{}", input.device());
    // Plugged in again: opened at the next look, and heard (a longer
    // sound than the first, so the frame held from before does not pass).
    microphone.plugged.store(true, Ordering::SeqCst);
    microphone.wait_opened(2);
    let heard = hear_played(&mut input, &microphone, &sine(6_000.0, 0.6, 0.5));
    assert!(
        heard.high > 0.9 && heard.bass < 0.05,
        "a 6 kHz sine after the return: {heard:?}"
    );
}

#[test]
fn linear_timecode_on_the_live_input_is_read_frame_after_frame() {
    use sylva::base::timecode::{FrameRate, Timecode};
    let microphone = TestMicrophone::default();
    microphone.plugged.store(true, Ordering::SeqCst);
    let mut input = LiveInput::listen_to(
        microphone.clone(),
        AnalysisSettings::default(),
        ErrorLog::default(),
    );
    microphone.wait_opened(1);
    // Ten frames of 25 fps LTC from 10:00:00:00 at a quiet level, in
    // pieces as a sound card delivers them, read as they come.
    let first = Timecode::from_frame_number(36_000 * 25, FrameRate::Ebu25);
    let signal: Vec<f32> = sylva::audio::ltc::encode(first, 10, RATE)
        .iter()
        .map(|s| 0.2 * s)
        .collect();
    let mut heard = Vec::new();
    for piece in signal.chunks(RATE as usize / 100) {
        microphone.play(piece);
        std::thread::sleep(std::time::Duration::from_millis(4));
        heard.extend(input.hear(GainSettings::default()).ltc);
    }
    let started = std::time::Instant::now();
    while heard.last() != Some(&first.plus_frames(9)) && started.elapsed().as_secs() < 5 {
        std::thread::sleep(std::time::Duration::from_millis(10));
        heard.extend(input.hear(GainSettings::default()).ltc);
    }
    assert_eq!(heard.last(), Some(&first.plus_frames(9)), "{heard:?}");
    assert!(heard.len() >= 5, "most frames come one by one: {heard:?}");
    for pair in heard.windows(2) {
        assert!(pair[1].frame_number() > pair[0].frame_number(), "{heard:?}");
    }
}

/// An ISF file's `audio` input is the waveform heard and its `audioFFT`
/// the spectrum, each 512 texels wide, as VDMX gives them: a 1.5 kHz sine
/// crosses its middle again and again along the `audio` image, and stands
/// as one peak in the `audioFFT` one.
#[test]
fn an_isf_files_audio_is_the_waveform_and_its_audio_fft_the_spectrum() {
    let shader = "/*{\"ISFVSN\": \"2\", \"INPUTS\": [{\"NAME\": \"wave\", \"TYPE\": \"audio\"}, {\"NAME\": \"fft\", \"TYPE\": \"audioFFT\"}]}*/\n\
        void main() {\n\
        \x20   float x = isf_FragNormCoord.x;\n\
        \x20   gl_FragColor = vec4(IMG_NORM_PIXEL(wave, vec2(x, 0.5)).r, IMG_NORM_PIXEL(fft, vec2(x, 0.5)).r, 0.0, 1.0);\n\
        }\n";
    let preset = "layers = [\"shader.ear\"]\n[params]\n\"shader.ear.file\" = \"isf/ear.fs\"\n\"master.tonemap\" = \"clamp\"\n";
    let project = support::show_folder(
        "audio_isf",
        &[("shaders/isf/ear.fs", shader), ("presets/ear.toml", preset)],
    );
    let sound = project.join("sine.wav");
    write_wav(&sound, &sine(1500.0, 3.0, 0.5));
    let mut show = support::show(project, "ear", OUTPUT_FORMAT);
    hear_file(&mut show, &sound);
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "audio.isf",
        [512, 4],
        OUTPUT_FORMAT,
    );
    for _ in 0..30 {
        show.frame(1.0 / 30.0, None, &mut output, |_, _| {});
    }
    let picture = read_rgba8(&show.ground.gpu, &output.texture).checked("reading the picture");
    let row: Vec<[u8; 4]> = (0..512).map(|x| picture.get_pixel(x, 2).0).collect();
    let middle = row.iter().map(|p| f32::from(p[0])).sum::<f32>() / 512.0;
    let crossings = row
        .windows(2)
        .filter(|w| {
            (f32::from(w[0][0]) - middle).signum() != (f32::from(w[1][0]) - middle).signum()
        })
        .count();
    assert!(
        crossings >= 8,
        "the waveform crosses its middle {crossings} times: {:?}",
        &row[..16]
    );
    let greens: Vec<u8> = row.iter().map(|p| p[1]).collect();
    let peak = greens.iter().copied().max().unwrap_or(0);
    let mut sorted = greens.clone();
    sorted.sort_unstable();
    let median = sorted[256];
    assert!(
        peak >= median.saturating_add(60),
        "the spectrum's peak {peak} stands over its median {median}"
    );
}
