//! The frame uniform block: written once per frame by the show (step 3
//! of the frame flow) and bound by every layer that wants time, the beat,
//! the master values or the sound. Its WGSL twin is `shaders/common/frame.wgsl`.

use crate::base::clock::Clock;
use crate::params::{Registry, Value};

/// `struct Frame` in WGSL. All fields are 4 bytes and the vec2 comes first,
/// so the layout has no hidden padding; the size is a multiple of 16 as
/// uniform blocks require.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct FrameUniforms {
    /// Render target size in pixels.
    pub resolution: [f32; 2],
    /// Seconds since start (wraps to keep f32 precision after days).
    pub time: f32,
    /// Seconds since the previous frame.
    pub dt: f32,
    /// Frame number.
    pub frame: u32,
    /// The show's seed (from `--seed`).
    pub seed: u32,
    /// Beats since start.
    pub beat: f32,
    /// Position inside the beat, 0..1.
    pub beat_phase: f32,
    /// Tempo.
    pub bpm: f32,
    /// `master.brightness`.
    pub brightness: f32,
    /// `master.blackout`.
    pub blackout: f32,
    _pad: f32,
    /// `audio.level`, `audio.bass`, `audio.mid`, `audio.high`.
    pub level: f32,
    /// See `level`.
    pub bass: f32,
    /// See `level`.
    pub mid: f32,
    /// See `level`.
    pub high: f32,
    /// `audio.onset`: 1 in the frame of an onset.
    pub onset: f32,
    _pad_audio: [f32; 3],
    /// `audio.bands`, four to a vec4 (uniform arrays step by 16 bytes).
    pub bands: [[f32; 4]; 4],
}

/// Seconds after which `time` wraps: an installation runs for weeks and an
/// f32 loses sub-millisecond precision past a few hours. A day is a
/// whole number of 60 s cycles, so loops of common periods stay seamless.
const TIME_WRAP: f64 = 86_400.0;

impl FrameUniforms {
    /// The block for this frame.
    pub fn new(clock: &Clock, registry: &Registry, size: [u32; 2], seed: u64) -> Self {
        // A show without the audio section (a bench) hears silence.
        let heard = |name: &str| registry.get(name).and_then(Value::as_f32).unwrap_or(0.0);
        Self {
            resolution: [size[0] as f32, size[1] as f32],
            time: (clock.time % TIME_WRAP) as f32,
            dt: clock.dt,
            frame: clock.frame as u32,
            seed: seed as u32,
            beat: (clock.beats % TIME_WRAP) as f32,
            beat_phase: clock.beat_phase(),
            bpm: clock.bpm,
            brightness: registry.float("master.brightness"),
            blackout: registry.float("master.blackout"),
            _pad: 0.0,
            level: heard("audio.level"),
            bass: heard("audio.bass"),
            mid: heard("audio.mid"),
            high: heard("audio.high"),
            onset: heard("audio.onset"),
            _pad_audio: [0.0; 3],
            bands: match registry.get("audio.bands") {
                Some(Value::List(bands)) => std::array::from_fn(|i| {
                    std::array::from_fn(|j| bands.get(4 * i + j).copied().unwrap_or(0.0))
                }),
                _ => [[0.0; 4]; 4],
            },
        }
    }
}
