//! The particles' glow, splatted by compute (`glow.wgsl`), against its
//! shape on the CPU: a particle at rest is a soft disc of the look's
//! radius, a falling one a streak trailing above it, whitened by its
//! speed, and a drained one draws nothing.

use sylva::engine::camera::{OrbitCamera, camera_params};
use sylva::engine::simulation::Drawer;
use sylva::gpu::{GpuProfiler, HDR_FORMAT, RenderTarget};
use sylva::layers::fluid::draw::{FluidRenderer, Look, ParticleDraw};
use sylva::params::Registry;

use super::{small_block, upload};
use crate::support;

const SIZE: [u32; 2] = [128, 128];
/// The camera's distance from the particle, which it looks at.
const DISTANCE: f32 = 2.0;
const RADIUS: f32 = 0.1;
/// Seconds of motion the streak is drawn along.
const STREAK: f32 = 0.1;
const COLOUR: [f32; 3] = [0.2, 0.5, 1.0];
const BRIGHTNESS: f32 = 0.5;

/// The glow of a particle at the camera's target moving at `velocity`,
/// beside a drained one, read back a texel (rgba) a pixel; and pixels a
/// metre there.
fn glow(velocity: [f32; 3]) -> (Vec<[f32; 4]>, f32) {
    let gpu = support::gpu();
    let assets = sylva::base::Assets::new(env!("CARGO_MANIFEST_DIR"));
    let mut scene = small_block(false, 0.0);
    scene.positions.truncate(2);
    scene.velocities.truncate(2);
    scene.positions[0] = [0.5, 0.5, 0.5, 1.0];
    scene.velocities[0] = [velocity[0], velocity[1], velocity[2], 0.0];
    // Drained: a glow there would fall on the first's.
    scene.positions[1] = [0.5, 0.5, 0.5, 0.0];
    let sim = upload(&scene);
    let mut registry = Registry::new();
    for spec in camera_params("c", DISTANCE, 0.0) {
        registry.register(spec);
    }
    let camera = OrbitCamera::new("c").look(&registry, 0.0, glam::Vec3::splat(0.5), SIZE);
    let look = ParticleDraw {
        colour: [COLOUR[0], COLOUR[1], COLOUR[2], 1.0],
        radius: RADIUS,
        brightness: BRIGHTNESS,
        rest_density: 1000.0,
        streak: STREAK,
        ..ParticleDraw::default()
    };
    let mut renderer = FluidRenderer::build(&gpu, &assets).unwrap_or_else(|e| panic!("{e}"));
    renderer.attach(&gpu, &sim);
    renderer.prepare(&gpu, SIZE, &camera, &look, sim.count(), false);
    let target = RenderTarget::new(&gpu.device, "test.glow", SIZE, HDR_FORMAT);
    let below = RenderTarget::new(&gpu.device, "test.below", SIZE, HDR_FORMAT);
    let depth = sylva::gpu::raster::scene_depth_view(&gpu.device, SIZE);
    let mut profiler = GpuProfiler::new(&gpu.device, &gpu.queue, false);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    renderer.draw(
        &gpu,
        &mut encoder,
        &mut profiler,
        &sim,
        &target.view,
        &below.view,
        &depth,
        false,
        Look::Particles,
    );
    gpu.queue.submit([encoder.finish()]);
    let texels = sylva::gpu::read_rgba16f(&gpu, &target.texture).unwrap_or_else(|e| panic!("{e}"));
    let per_metre = SIZE[1] as f32 / (2.0 * camera.tan_half_fov() * DISTANCE);
    (texels, per_metre)
}

/// The summed weight (alpha) and its centroid, in pixels.
fn weight_and_centre(texels: &[[f32; 4]]) -> (f32, [f32; 2]) {
    let (mut sum, mut x, mut y) = (0.0, 0.0, 0.0);
    for (i, t) in texels.iter().enumerate() {
        let (px, py) = (
            (i as u32 % SIZE[0]) as f32 + 0.5,
            (i as u32 / SIZE[0]) as f32 + 0.5,
        );
        sum += t[3];
        x += t[3] * px;
        y += t[3] * py;
    }
    (sum, [x / sum, y / sum])
}

/// Each texel's colour is the look's, whitened by `white`, times its weight.
fn assert_coloured(texels: &[[f32; 4]], white: f32) {
    for t in texels.iter().filter(|t| t[3] > 0.05) {
        for (c, base) in COLOUR.iter().enumerate() {
            let expected = BRIGHTNESS * (base * (1.0 - white) + white) * t[3];
            assert!(
                (t[c] - expected).abs() < 0.01 * t[3] + 2e-3,
                "channel {c}: {} against {expected}",
                t[c]
            );
        }
    }
}

#[test]
fn a_still_particle_glows_as_a_soft_disc_of_its_radius() {
    let (texels, per_metre) = glow([0.0; 3]);
    let (weight, [x, y]) = weight_and_centre(&texels);
    let r = RADIUS * per_metre;
    // The integral of (1 - r^2)^2 over the unit disc is pi / 3.
    let expected = std::f32::consts::PI * r * r / 3.0;
    assert!(
        (weight / expected - 1.0).abs() < 0.05,
        "weight {weight} against {expected}"
    );
    assert!(
        (x - 64.0).abs() < 0.3 && (y - 64.0).abs() < 0.3,
        "centre ({x}, {y})"
    );
    // Nothing past its radius.
    for (i, t) in texels.iter().enumerate() {
        let (px, py) = (
            (i as u32 % SIZE[0]) as f32 + 0.5 - 64.0,
            (i as u32 / SIZE[0]) as f32 + 0.5 - 64.0,
        );
        if (px * px + py * py).sqrt() > r + 1.0 {
            assert_eq!(t[3], 0.0, "glow at ({px}, {py}) past the radius {r}");
        }
    }
    assert_coloured(&texels, 0.0);
}

#[test]
fn a_falling_particle_glows_as_a_streak_trailing_above_it() {
    let speed = 2.0;
    let (texels, per_metre) = glow([0.0, -speed, 0.0]);
    let (weight, [x, y]) = weight_and_centre(&texels);
    let trail = 0.5 * STREAK * speed;
    let (along, across) = ((RADIUS + trail) * per_metre, RADIUS * per_metre);
    let expected = std::f32::consts::PI * along * across / 3.0;
    assert!(
        (weight / expected - 1.0).abs() < 0.05,
        "weight {weight} against {expected}"
    );
    assert!((x - 64.0).abs() < 0.3, "centred across: {x}");
    let above = 64.0 - trail * per_metre;
    assert!(
        (y - above).abs() < 0.5,
        "centre {y}, expected {above}: half its trail above"
    );
    let rows = texels
        .chunks(SIZE[0] as usize)
        .filter(|row| row.iter().any(|t| t[3] > 0.0))
        .count() as f32;
    let columns = (0..SIZE[0] as usize)
        .filter(|&c| texels.chunks(SIZE[0] as usize).any(|row| row[c][3] > 0.0))
        .count() as f32;
    assert!(
        (rows - 2.0 * along).abs() <= 2.0,
        "{rows} rows for a streak {along} px long each way"
    );
    assert!(
        (columns - 2.0 * across).abs() <= 2.0,
        "{columns} columns for {across} px across"
    );
    // Whitened by its speed: (speed / 4)^2.
    assert_coloured(&texels, (speed / 4.0) * (speed / 4.0));
}
