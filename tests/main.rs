//! The integration tests, in one binary so they share one GPU device and
//! one link step (CI has two cores).

mod audio;
mod blend;
mod cli;
mod colony;
mod control;
mod floor_plan;
mod fluid;
mod forest;
mod fuzz;
mod golden;
mod hardening_net;
mod hardening_show;
mod install;
mod kernels;
mod live;
mod osc_rig;
mod raster;
mod show;
mod skinned;
mod support;
