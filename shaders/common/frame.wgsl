// The frame uniform block every layer can read: time, beat and the master
// values. Mirrors `FrameUniforms` in src/frame.rs (a test checks the sizes).

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
}
