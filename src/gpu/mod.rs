//! Everything that talks to wgpu directly and is not a layer: the device
//! and adapter choice, offscreen targets, readback, the timestamp profiler
//! and the fullscreen-pass helper the compositor and the shader layer share.

pub mod bindings;
mod build_error;
pub mod compute;
pub mod compute_variant;
mod context;
mod fullscreen;
pub mod grid_sort;
pub mod image;
mod layouts;
pub mod prefix_sum;
mod profiler;
pub mod raster;
mod readback;
mod target;
pub mod wgsl;

pub use build_error::BuildError;
pub use context::{ADAPTER_ENV, AdapterChoice, Gpu, GpuError, WIDE_ATOMICS, skip_device_select};
pub use fullscreen::{DepthWriter, FullscreenPipeline, RASTERIZE_ENV};
pub use layouts::{GPU_LAYOUTS, UniformLayout, mismatches as layout_mismatches};
pub use profiler::{FrameTimes, GpuProfiler, PassTime};
pub use readback::{ReadbackError, read_rgba8, read_rgba16f, read_texture};
pub use target::{
    HDR_FORMAT, OUTPUT_FORMAT, RenderTarget, begin_cleared_pass, clear_view, plain_texture,
    storable,
};
