//! Shared GPU kernels against CPU references at small sizes.

use sylva::base::Assets;
use sylva::gpu::compute::{read_buffer, storage_buffer};
use sylva::gpu::prefix_sum::PrefixSum;

use crate::support;

fn assets() -> Assets {
    Assets::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn prefix_sum_matches_the_cpu_at_every_level_count() {
    let gpu = support::gpu();
    for count in [1u32, 255, 256, 1023, 1024, 1025, 5000, 70_000, 1_100_000] {
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

#[test]
fn grid_sort_is_a_permutation_with_each_cell_contiguous() {
    use sylva::gpu::GpuProfiler;
    use sylva::gpu::grid_sort::{GridBox, GridSort};
    let gpu = support::gpu();
    let count = 3000u32;
    let capacity = 4096u32;
    let points: Vec<[f32; 4]> = (0..capacity)
        .map(|i| {
            let h = |k: u32| {
                ((i.wrapping_mul(2_654_435_761).wrapping_add(k * 40_503)) % 10_007) as f32
                    / 10_007.0
            };
            [h(1) * 10.0 - 5.0, h(2) * 4.0, h(3) * 7.0 + 1.0, 0.0]
        })
        .collect();
    let grid = GridBox::covering([-5.0, 0.0, 1.0], [5.0, 4.0, 8.0], 0.7, 1 << 16);
    let point_buffer = storage_buffer(
        &gpu,
        "test.points",
        u64::from(capacity) * 16,
        wgpu::BufferUsages::empty(),
    );
    gpu.queue
        .write_buffer(&point_buffer, 0, bytemuck::cast_slice(&points));
    let count_buffer = storage_buffer(&gpu, "test.count", 4, wgpu::BufferUsages::empty());
    gpu.queue
        .write_buffer(&count_buffer, 0, bytemuck::bytes_of(&count));
    let sort = GridSort::new(
        &gpu,
        &assets(),
        "test",
        grid,
        &point_buffer,
        &count_buffer,
        capacity,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut profiler = GpuProfiler::new(&gpu.device, &gpu.queue, false);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    sort.encode(&mut encoder, None, &mut profiler);
    gpu.queue.submit([encoder.finish()]);
    let starts: Vec<u32> = read_buffer(&gpu, &sort.starts, sort.cells() as usize + 1)
        .unwrap_or_else(|e| panic!("{e}"));
    let sorted: Vec<u32> =
        read_buffer(&gpu, &sort.sorted, count as usize).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        starts[sort.cells() as usize],
        count,
        "the last start is the total"
    );
    let mut seen = vec![false; count as usize];
    for &index in &sorted {
        assert!(
            index < count && !seen[index as usize],
            "index {index} out of range or repeated"
        );
        seen[index as usize] = true;
    }
    let cell_of = |p: &[f32; 4]| -> u32 {
        let c: Vec<u32> = (0..3)
            .map(|a| {
                (((p[a] - grid.origin[a]) / grid.cell_size).floor() as i64)
                    .clamp(0, i64::from(grid.dims[a]) - 1) as u32
            })
            .collect();
        c[0] + grid.dims[0] * (c[1] + grid.dims[1] * c[2])
    };
    for cell in 0..sort.cells() as usize {
        for slot in starts[cell]..starts[cell + 1] {
            let point = &points[sorted[slot as usize] as usize];
            assert_eq!(
                cell_of(point),
                cell as u32,
                "slot {slot} holds a point of another cell"
            );
        }
    }
}

/// `GridSort::keep_order` (renders) sorts as a stable counting sort does:
/// cell by cell, dead points last, each cell's points by index, whatever
/// order the threads run in; in crowded cells, and past 65,535 points (a
/// single workgroup walking them in order stopped there on lavapipe, whose
/// loops are bounded so, and every point after shared slot 0).
#[test]
fn grid_sort_in_order_is_the_stable_counting_sort() {
    for count in [3000, 70_000] {
        sorts_in_order(count);
    }
}

fn sorts_in_order(count: u32) {
    use sylva::gpu::GpuProfiler;
    use sylva::gpu::grid_sort::{GridBox, GridSort};
    let gpu = support::gpu();
    let points: Vec<[f32; 4]> = (0..count)
        .map(|i| {
            let h = |k: u32| {
                ((i.wrapping_mul(2_654_435_761).wrapping_add(k * 40_503)) % 10_007) as f32
                    / 10_007.0
            };
            let alive = if i % 7 == 3 { 0.0 } else { 1.0 };
            [h(1) * 10.0 - 5.0, h(2) * 4.0, h(3) * 7.0 + 1.0, alive]
        })
        .collect();
    // Fewer than a hundred cells, each spanning many workgroups; and at
    // the larger count, a grid fine enough for tens of points a cell.
    let cell_size = if count > 65_535 { 0.3 } else { 2.0 };
    let grid =
        GridBox::covering([-5.0, 0.0, 1.0], [5.0, 4.0, 8.0], cell_size, 1 << 16).leaving_out_dead();
    let none = wgpu::BufferUsages::empty();
    let point_buffer = storage_buffer(&gpu, "test.points", u64::from(count) * 16, none);
    gpu.queue
        .write_buffer(&point_buffer, 0, bytemuck::cast_slice(&points));
    let count_buffer = storage_buffer(&gpu, "test.count", 4, none);
    gpu.queue
        .write_buffer(&count_buffer, 0, bytemuck::bytes_of(&count));
    let mut sort = GridSort::new(
        &gpu,
        &assets(),
        "test",
        grid,
        &point_buffer,
        &count_buffer,
        count,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    sort.keep_order(&gpu, &assets())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut profiler = GpuProfiler::new(&gpu.device, &gpu.queue, false);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    sort.encode(&mut encoder, None, &mut profiler);
    gpu.queue.submit([encoder.finish()]);
    let sorted: Vec<u32> =
        read_buffer(&gpu, &sort.sorted, count as usize).unwrap_or_else(|e| panic!("{e}"));
    let cell_of = |p: &[f32; 4]| -> u32 {
        if p[3] == 0.0 {
            return sort.cells();
        }
        let c: Vec<u32> = (0..3)
            .map(|a| {
                (((p[a] - grid.origin[a]) / grid.cell_size).floor() as i64)
                    .clamp(0, i64::from(grid.dims[a]) - 1) as u32
            })
            .collect();
        c[0] + grid.dims[0] * (c[1] + grid.dims[1] * c[2])
    };
    let mut expected: Vec<u32> = (0..count).collect();
    expected.sort_by_key(|&i| (cell_of(&points[i as usize]), i));
    assert!(
        count > 65_535 || sort.cells() < 100,
        "crowded cells: {} of them for {count} points",
        sort.cells()
    );
    let first_wrong = sorted.iter().zip(&expected).position(|(a, b)| a != b);
    assert_eq!(
        first_wrong, None,
        "{count} points: the first slot out of order"
    );
}

#[test]
fn the_profiler_times_every_pass_however_many() {
    let gpu = support::gpu();
    assert!(gpu.timestamps, "the test adapter offers timestamp queries");
    let mut profiler = sylva::gpu::GpuProfiler::new(&gpu.device, &gpu.queue, true);
    let mut longest = 0;
    let mut last_seen = false;
    for _ in 0..6 {
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        for index in 0..150 {
            let label = if index == 149 { "last" } else { "many" };
            let _pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: profiler.compute_pass(label),
            });
        }
        profiler.resolve(&mut encoder);
        gpu.queue.submit([encoder.finish()]);
        profiler.after_submit();
        gpu.wait_idle();
        for frame in profiler.collect() {
            longest = longest.max(frame.passes.len());
            last_seen |= frame.passes.iter().any(|p| p.label == "last");
        }
    }
    assert_eq!(longest, 150, "every pass of a frame is timed");
    assert!(last_seen, "the frame's last pass is not dropped");
}

#[test]
fn the_profiler_numbers_each_frame_it_times_even_when_others_go_untimed() {
    let gpu = support::gpu();
    let mut profiler = sylva::gpu::GpuProfiler::new(&gpu.device, &gpu.queue, true);
    let mut seen = Vec::new();
    for frame in 0..12u64 {
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        let label = format!("frame{frame}");
        drop(encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(&label),
            timestamp_writes: profiler.compute_pass(&label),
        }));
        profiler.resolve(&mut encoder);
        gpu.queue.submit([encoder.finish()]);
        profiler.after_submit();
        // Reading only every fourth frame lets the ring of three fill, so
        // the frame before each read finds no staging buffer.
        if frame % 4 == 3 {
            gpu.wait_idle();
            seen.extend(profiler.collect());
        }
    }
    gpu.wait_idle();
    seen.extend(profiler.collect());
    assert_eq!(profiler.next_frame(), 12);
    let numbers: Vec<u64> = seen.iter().map(|f| f.frame).collect();
    assert_eq!(numbers, [0, 1, 2, 4, 5, 6, 8, 9, 10], "{seen:?}");
    for frame in &seen {
        let labels: Vec<&str> = frame.passes.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, [format!("frame{}", frame.frame)], "{seen:?}");
    }
}
