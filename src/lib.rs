//! sylva: a live-coding and VJ runtime. GPU layers render into HDR targets
//! that a compositor blends under a master section; a parameter registry is
//! the single source of truth that presets, scripts and controllers write.
//!
//! The binary (`src/main.rs`) is a thin CLI over this library; the
//! integration tests in `tests/` drive the same library on a software
//! adapter.

#![warn(missing_docs)]
// The docs are for those who work on sylva (`cargo doc
// --document-private-items`): a public item's docs link to the private
// constants and helpers that explain it, on purpose.
#![allow(rustdoc::private_intra_doc_links)]

// Tiers, each importing only those before it: base, params, mapping,
// command, gpu, engine, outputs, layers, control, audio, script, show,
// drivers, tools (tests/floor_plan.rs holds the order and fails on an import
// against it).
pub mod audio;
pub mod base;
pub mod command;
pub mod control;
pub mod drivers;
pub mod engine;
pub mod gpu;
pub mod layers;
pub mod mapping;
pub mod outputs;
pub mod params;
pub mod script;
pub mod show;
pub mod tools;
