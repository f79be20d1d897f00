//! The integration tests, in one binary so they share one GPU device and
//! one link step (CI has two cores). Each layer kind's tests and golden
//! images live in its own folder (`src/layers/<kind>/tests.rs`,
//! `golden/`), wgpu's examples' way; they are compiled here.

mod audio;
mod blend;
mod cli;
#[path = "../src/layers/colony/tests.rs"]
mod colony;
mod control;
mod ensemble;
mod floor_plan;
#[path = "../src/layers/fluid/tests.rs"]
mod fluid;
#[path = "../src/layers/forest/tests.rs"]
mod forest;
#[path = "../src/layers/forest/crown_tests.rs"]
mod forest_crowns;
mod fuzz;
mod glsl_classes;
mod golden;
mod hap;
mod hardening_files;
mod hardening_media;
mod hardening_net;
mod hardening_page;
mod hardening_show;
mod install;
mod isf;
mod kernels;
mod lens;
mod lighting;
mod live;
mod media;
mod newcomer;
mod osc_rig;
mod oscquery_spec;
mod outputs;
mod phone;
mod picture;
mod raster;
mod render_exact;
mod send;
mod send_takes;
mod shader_hardening;
mod shadertoy_channels;
mod show;
#[path = "../src/layers/skinned/tests.rs"]
mod skinned;
mod support;
mod timecode;
mod world;
