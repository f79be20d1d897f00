//! sylva: a live-coding and VJ runtime. GPU layers render into HDR targets
//! that a compositor blends under a master section; a parameter registry is
//! the single source of truth that presets, scripts and controllers write.
//!
//! The binary (`src/main.rs`) is a thin CLI over this library; the
//! integration tests in `tests/` drive the same library on a software
//! adapter.

#![warn(missing_docs)]

pub mod app;
pub mod audio;
pub mod bench;
pub mod check;
pub mod cli;
pub mod clock;
pub mod command;
pub mod compositor;
pub mod control;
pub mod frame;
pub mod gpu;
pub mod headless;
pub mod installation;
pub mod layers;
pub mod params;
pub mod script;
pub mod show;
pub mod status;
pub mod supervise;
pub mod video;
