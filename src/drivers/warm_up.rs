//! The GPU brought to its working clocks before a bench measures: an idle
//! GPU runs slow (an H200 drops to 345 of its 1,980 MHz within a second of
//! its last work, and its first ~200 ms of new work ran there), and a
//! layer's build leaves it idle while the CPU prepares the layer. The
//! warm-up runs its own kernel, not the layer's frames, so the measured
//! frames start where they would have. (Frames slowed for other reasons
//! are the bench's `disturbed_frames`.)

use std::time::{Duration, Instant};

use crate::base::Assets;
use crate::gpu::compute::{Kernel, storage_buffer};
use crate::gpu::{BuildError, Gpu};

/// How long the GPU is kept busy (its clocks rise within about 100 ms).
const WARM_UP: Duration = Duration::from_millis(400);

/// Threads of one warm-up dispatch.
const THREADS: u32 = 1 << 16;

/// Keeps the GPU busy for [`WARM_UP`], in submissions that double their
/// dispatches until each takes a few milliseconds (a software adapter
/// stays at one or two).
pub fn warm_clocks(gpu: &Gpu, assets: &Assets) -> Result<(), BuildError> {
    let kernel = Kernel::new(gpu, assets, "bench/warm_up.wgsl", "warm_up")?;
    let sink = storage_buffer(
        gpu,
        "bench.warm_up",
        u64::from(THREADS) * 4,
        wgpu::BufferUsages::empty(),
    );
    let binding = kernel.bind(gpu, &[(0, &sink)]);
    let started = Instant::now();
    let mut dispatches = 1;
    while started.elapsed() < WARM_UP {
        let submitted = Instant::now();
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            for _ in 0..dispatches {
                kernel.dispatch(&mut pass, &binding, THREADS, 256);
            }
        }
        gpu.queue.submit([encoder.finish()]);
        gpu.wait_idle();
        if submitted.elapsed() < Duration::from_millis(4) {
            dispatches = (dispatches * 2).min(4096);
        }
    }
    Ok(())
}
