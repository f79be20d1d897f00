//! The renderer, which knows nothing of Lua, MIDI, OSC or audio: the
//! [`Layer`] trait and what a kind exports, a preset's description, the
//! stack of layers with their health, the frame uniform block, the
//! shared orbit camera and simulation plumbing, the compositor that
//! blends the layers and runs the master section into the engine's own
//! picture (which the outputs tier takes from there), and the world the
//! simulations share (the bodies that touch the water).

pub mod antialias;
pub mod blit;
pub mod bloom;
pub mod bodies;
pub mod camera;
pub mod compositor;
pub mod frame;
pub mod inputs;
mod layer;
pub mod lens;
pub mod light;
pub mod occlusion;
pub mod picture;
mod preset;
pub mod renderer;
mod scene_look;
pub mod shadow;
pub mod simulation;
pub mod stack;
pub mod tonemap;
pub mod world;

pub use layer::{
    BLEND_MODES, BenchWorkload, Layer, LayerEnv, LayerError, LayerFrame, LayerKind, LayerSwitches,
    common_params, kind_in, report_kernel_reload, shaders_changed,
};
pub use preset::{MAX_LAYERS, MAX_PARAMS, Preset, PresetError, PresetParam, toml_of, toml_value};
pub use stack::{Outgoing, Stack};

use crate::gpu::UniformLayout;

/// The engine's structs uploaded to the GPU, each against its WGSL struct.
pub const ENGINE_LAYOUTS: &[UniformLayout] = &[
    UniformLayout::of::<frame::FrameUniforms>("FrameUniforms", "common/frame.wgsl", "Frame"),
    UniformLayout::of::<camera::CameraUniform>("CameraUniform", "common/camera.wgsl", "Camera"),
    UniformLayout::of::<compositor::BlendUniforms>(
        "BlendUniforms",
        "compositor/blend.wgsl",
        "Blend",
    ),
    UniformLayout::of::<compositor::MasterUniforms>(
        "MasterUniforms",
        "compositor/master.wgsl",
        "Master",
    ),
    UniformLayout::of::<world::Capsule>("Capsule", "common/world.wgsl", "Capsule"),
    UniformLayout::of::<bloom::BloomUniforms>("BloomUniforms", "compositor/bloom.wgsl", "Bloom"),
    UniformLayout::of::<occlusion::OcclusionUniforms>(
        "OcclusionUniforms",
        "compositor/occlusion.wgsl",
        "Occlusion",
    ),
    UniformLayout::of::<antialias::AntialiasUniforms>(
        "AntialiasUniforms",
        "compositor/antialias.wgsl",
        "Antialias",
    ),
    UniformLayout::of::<lens::LensUniforms>("LensUniforms", "compositor/lens.wgsl", "Lens"),
];
