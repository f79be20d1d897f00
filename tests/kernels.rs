//! Shared GPU kernels against CPU references at small sizes.

use sylva::gpu::compute::{read_buffer, storage_buffer};
use sylva::gpu::prefix_sum::PrefixSum;
use sylva::show::Assets;

use crate::support;

fn assets() -> Assets {
    Assets::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn prefix_sum_matches_the_cpu_at_every_level_count() {
    let gpu = support::gpu();
    for count in [1u32, 255, 256, 257, 5000, 70_000] {
        let values: Vec<u32> = (0..count)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 28) & 7)
            .collect();
        let buffer = storage_buffer(
            &gpu,
            "test.scan",
            u64::from(count) * 4,
            wgpu::BufferUsages::empty(),
        );
        gpu.queue
            .write_buffer(&buffer, 0, bytemuck::cast_slice(&values));
        let scan =
            PrefixSum::new(&gpu, &assets(), &buffer, count).unwrap_or_else(|e| panic!("{e}"));
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            scan.encode(&mut pass);
        }
        gpu.queue.submit([encoder.finish()]);
        let got: Vec<u32> =
            read_buffer(&gpu, &buffer, count as usize).unwrap_or_else(|e| panic!("{e}"));
        let mut running = 0u32;
        for (i, (value, scanned)) in values.iter().zip(&got).enumerate() {
            assert_eq!(*scanned, running, "count {count}: element {i}");
            running += value;
        }
    }
}
