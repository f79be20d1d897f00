// The frame uniform block every layer can read: time, beat, the master
// values and the sound (the `audio.*` parameters, 0..1). Mirrors
// `FrameUniforms` in src/frame.rs (a test checks the sizes).

struct Frame {
    resolution: vec2<f32>,
    time: f32,
    dt: f32,
    frame: u32,
    seed: u32,
    beat: f32,
    beat_phase: f32,
    bpm: f32,
    brightness: f32,
    blackout: f32,
    _pad: f32,
    level: f32,
    bass: f32,
    mid: f32,
    high: f32,
    onset: f32,
    _pad_audio_0: f32,
    _pad_audio_1: f32,
    _pad_audio_2: f32,
    bands: array<vec4<f32>, 4>,
}

// Band `i` (0-15, 30 Hz to 16 kHz) of `audio.bands`.
fn audio_band(f: Frame, i: u32) -> f32 {
    return f.bands[min(i, 15u) / 4u][i % 4u];
}
