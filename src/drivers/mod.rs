//! What drives frames: the command-line arguments every show takes, the
//! window (keys, HUD), the headless and render loops, the bench, and the
//! video writer `render --video` pipes frames into.

pub mod bench;
pub mod cli;
pub mod headless;
pub mod video;
pub mod window;
