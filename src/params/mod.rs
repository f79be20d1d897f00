//! The parameter registry: the single source of truth for every tunable of
//! the show. Presets, Lua, MIDI, OSC and the HUD write through it; layers,
//! the HUD and OSCQuery read from it. Once per frame (step 2 of the frame
//! in docs/dev/frame.md) the registry advances ramps and smoothing.

mod curve;
mod handle;
mod ramp;
mod registry;
mod spec;

pub use curve::Curve;
pub use handle::{Handle, Readable};
pub use ramp::{Easing, Ramp};
pub use registry::{Change, ParamError, Registry, Source};
pub use spec::{ParamKind, ParamSpec, SpecError, Value, Weight};
