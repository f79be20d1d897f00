//! The fluid's white water: spray, foam and bubbles as particles of their
//! own (Ihmsen et al. 2012), thrown up once a frame where the liquid
//! traps air or breaks into a crest fast enough, kept in a ring of slots
//! (a full ring gives the oldest slots to the newest), moved by what their
//! neighbourhood makes them and drawn by the surface as foam
//! (`shaders/fluid/white_water.wgsl`, `splat_white_water` in
//! `shaders/fluid/splat.wgsl`). The slots a frame's particles take come
//! from a scan of what each fluid particle throws, so a render repeats.

use bytemuck::{Pod, Zeroable};

use crate::base::{Assets, ChangedFile};
use crate::gpu::bindings::uniform_buffer;
use crate::gpu::compute::{Binding, Kernel, KernelReload, read_buffer, storage_buffer};
use crate::gpu::prefix_sum::PrefixSum;
use crate::gpu::{BuildError, Gpu, GpuProfiler, ReadbackError};

const FILE: &str = "fluid/white_water.wgsl";

/// `struct WhiteWater` in white_water.wgsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, Pod, Zeroable)]
pub struct WhiteWaterParams {
    /// The frame's time step, seconds of simulated time.
    pub dt: f32,
    /// Slots in the ring.
    pub capacity: u32,
    /// Frames stepped since the fluid was built.
    pub frame: u32,
    /// Most white particles thrown up in a frame.
    pub budget: u32,
    /// Bounds of the trapped-air potential, m/s.
    pub trapped_air: [f32; 2],
    /// Bounds of the wave-crest potential.
    pub crest: [f32; 2],
    /// Bounds of the kinetic-energy potential, J/kg.
    pub energy: [f32; 2],
    /// White particles a second a fluid particle throws up at full trapped
    /// air and at a full crest.
    pub rates: [f32; 2],
    /// Mean seconds a white particle lives.
    pub life: f32,
    /// Bubbles' buoyancy, times gravity.
    pub buoyancy: f32,
    /// Bubbles' drag toward the water's velocity, 1/s.
    pub drag: f32,
    /// Below this share of a full neighbourhood a white particle is spray.
    pub spray_below: f32,
    /// Above this share, a bubble.
    pub bubble_above: f32,
    /// Keeps the block a multiple of 16 bytes.
    pub _pad: [u32; 3],
}

impl WhiteWaterParams {
    /// The paper's bounds for water moving a few metres a second: trapped
    /// air from 2 to 15 m/s of neighbours rushing together, crests of
    /// curvature 0.3 to 2, kinetic energy from 0.5 J/kg (1 m/s) to 8
    /// (4 m/s); `spray` scales the rates (40 a second at full potential),
    /// `life` the mean lifetime.
    pub fn new(capacity: u32, dt: f32, frame: u32, spray: f32, life: f32) -> Self {
        Self {
            dt,
            capacity,
            frame,
            // A frame never takes back slots it filled itself.
            budget: capacity / 8,
            trapped_air: [2.0, 15.0],
            crest: [0.3, 2.0],
            energy: [0.5, 8.0],
            rates: [40.0 * spray, 40.0 * spray],
            life,
            buoyancy: 2.0,
            drag: 10.0,
            spray_below: 0.18,
            bubble_above: 0.6,
            _pad: [0; 3],
        }
    }
}

/// The fluid's buffers white water reads: its parameters and grid
/// (uniforms), set A's positions and velocities, the densities and the
/// grid's cell starts.
pub struct FluidBuffers<'a> {
    /// `FluidParams`.
    pub params: &'a wgpu::Buffer,
    /// The grid sort's `Grid`.
    pub grid: &'a wgpu::Buffer,
    /// Set A's positions.
    pub positions: &'a wgpu::Buffer,
    /// Set A's velocities.
    pub velocities: &'a wgpu::Buffer,
    /// Densities.
    pub densities: &'a wgpu::Buffer,
    /// The grid's cell starts.
    pub starts: &'a wgpu::Buffer,
}

/// White water as read back ([`WhiteWater::read`]).
#[derive(Debug, Clone)]
pub struct WhiteState {
    /// Each fluid particle's colour-field gradient times h, and its
    /// neighbours (w).
    pub normals: Vec<[f32; 4]>,
    /// White particles each fluid particle threw up in the last frame.
    pub thrown: Vec<u32>,
    /// Each slot's position and life left (w; 0 or less: empty).
    pub positions: Vec<[f32; 4]>,
    /// Each slot's velocity and kind (w: 0 spray, 1 foam, 2 bubble).
    pub velocities: Vec<[f32; 4]>,
}

impl WhiteState {
    /// The slots holding a white particle.
    pub fn live(&self) -> impl Iterator<Item = (&[f32; 4], &[f32; 4])> {
        (self.positions.iter())
            .zip(&self.velocities)
            .filter(|(p, _)| p[3] > 0.0)
    }
}

/// One fluid's white water.
pub struct WhiteWater {
    find_normals: (Kernel, Binding),
    emit: (Kernel, Binding),
    scan: PrefixSum,
    place: (Kernel, Binding),
    head: (Kernel, Binding),
    advance: (Kernel, Binding),
    uniform: wgpu::Buffer,
    normals: wgpu::Buffer,
    thrown: wgpu::Buffer,
    /// Position and life left (w).
    pub positions: wgpu::Buffer,
    /// Velocity and kind (w: 0 spray, 1 foam, 2 bubble).
    pub velocities: wgpu::Buffer,
    particles: u32,
    capacity: u32,
    frame: std::cell::Cell<u32>,
}

impl WhiteWater {
    /// A ring of `capacity` white particles for a fluid of `particles`.
    pub fn new(
        gpu: &Gpu,
        assets: &Assets,
        fluid: &FluidBuffers<'_>,
        particles: u32,
        capacity: u32,
    ) -> Result<Self, BuildError> {
        let none = wgpu::BufferUsages::empty();
        let capacity = capacity.max(1);
        let normals = storage_buffer(gpu, "fluid.white.normals", u64::from(particles) * 16, none);
        let thrown = storage_buffer(
            gpu,
            "fluid.white.thrown",
            (u64::from(particles) + 1) * 4,
            none,
        );
        let slots = |label| storage_buffer(gpu, label, u64::from(capacity) * 16, none);
        let (positions, velocities) =
            (slots("fluid.white.position"), slots("fluid.white.velocity"));
        let head = storage_buffer(gpu, "fluid.white.head", 4, none);
        let uniform = uniform_buffer(&gpu.device, "fluid.white", size_of::<WhiteWaterParams>());
        let bound = |binding: u32| -> (u32, &wgpu::Buffer) {
            let buffer = match binding {
                0 => fluid.params,
                1 => fluid.grid,
                2 => fluid.positions,
                3 => fluid.velocities,
                6 => fluid.densities,
                8 => fluid.starts,
                24 => &uniform,
                25 => &normals,
                26 => &thrown,
                27 => &positions,
                28 => &velocities,
                _ => &head,
            };
            (binding, buffer)
        };
        // Each entry point's automatic layout holds only what it uses.
        let kernel = |entry: &str, used: &[u32]| -> Result<(Kernel, Binding), BuildError> {
            let kernel = Kernel::new(gpu, assets, FILE, entry)?;
            let buffers: Vec<_> = used.iter().map(|b| bound(*b)).collect();
            let binding = kernel.bind(gpu, &buffers);
            Ok((kernel, binding))
        };
        Ok(Self {
            find_normals: kernel("white_normals", &[0, 1, 2, 3, 6, 8, 24, 25])?,
            emit: kernel("white_emit", &[0, 1, 2, 3, 8, 24, 25, 26])?,
            scan: PrefixSum::new(gpu, assets, &thrown, particles + 1)?,
            place: kernel("white_place", &[0, 2, 3, 24, 26, 27, 28, 29])?,
            head: kernel("white_head", &[0, 24, 26, 29])?,
            advance: kernel("white_advance", &[0, 1, 2, 3, 8, 24, 27, 28])?,
            uniform,
            normals,
            thrown,
            positions,
            velocities,
            particles,
            capacity,
            frame: std::cell::Cell::new(0),
        })
    }

    /// Slots in the ring.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// What the last frame left (tests and the bench; waits for the GPU).
    pub fn read(&self, gpu: &Gpu) -> Result<WhiteState, ReadbackError> {
        let slots = self.capacity as usize;
        let scanned: Vec<u32> = read_buffer(gpu, &self.thrown, self.particles as usize + 1)?;
        Ok(WhiteState {
            normals: read_buffer(gpu, &self.normals, self.particles as usize)?,
            thrown: scanned.windows(2).map(|pair| pair[1] - pair[0]).collect(),
            positions: read_buffer(gpu, &self.positions, slots)?,
            velocities: read_buffer(gpu, &self.velocities, slots)?,
        })
    }

    /// White particles alive now (the bench; waits for the GPU).
    pub fn live(&self, gpu: &Gpu) -> Result<usize, ReadbackError> {
        let positions: Vec<[f32; 4]> = read_buffer(gpu, &self.positions, self.capacity as usize)?;
        Ok(positions.iter().filter(|p| p[3] > 0.0).count())
    }

    /// Writes white particles into the first slots (what a test starts
    /// from; the ring's head stays).
    pub fn write(&self, gpu: &Gpu, positions: &[[f32; 4]], velocities: &[[f32; 4]]) {
        let fits = positions
            .len()
            .min(velocities.len())
            .min(self.capacity as usize);
        gpu.queue
            .write_buffer(&self.positions, 0, bytemuck::cast_slice(&positions[..fits]));
        gpu.queue.write_buffer(
            &self.velocities,
            0,
            bytemuck::cast_slice(&velocities[..fits]),
        );
    }

    /// Writes the next frame's step: `dt` seconds of simulated time, the
    /// rates scaled by `spray`, lives of `life` seconds on average.
    pub fn set_step(&self, gpu: &Gpu, dt: f32, spray: f32, life: f32) {
        let frame = self.frame.get();
        let params = WhiteWaterParams::new(self.capacity, dt, frame, spray, life);
        gpu.queue
            .write_buffer(&self.uniform, 0, bytemuck::bytes_of(&params));
    }

    /// Records a frame: the white particles there are move, then the
    /// fluid throws up new ones.
    pub fn record(&self, encoder: &mut wgpu::CommandEncoder, profiler: &mut GpuProfiler) {
        let label = "fluid.white_water";
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: profiler.compute_pass(label),
        });
        let dispatch =
            |pass: &mut wgpu::ComputePass<'_>, (kernel, binding): &(Kernel, Binding), n| {
                kernel.dispatch(pass, binding, n, 256);
            };
        dispatch(&mut pass, &self.advance, self.capacity);
        dispatch(&mut pass, &self.find_normals, self.particles);
        dispatch(&mut pass, &self.emit, self.particles);
        self.scan.encode(&mut pass);
        dispatch(&mut pass, &self.place, self.particles);
        let (kernel, binding) = &self.head;
        kernel.dispatch(&mut pass, binding, 1, 1);
        self.frame.set(self.frame.get().wrapping_add(1));
    }

    /// Rebuilds the kernels a saved WGSL file touches.
    pub fn reload(
        &mut self,
        gpu: &Gpu,
        assets: &Assets,
        changed: &[ChangedFile],
        report: &mut KernelReload,
    ) {
        self.scan.reload(gpu, assets, changed, report);
        for (kernel, binding) in [
            &mut self.find_normals,
            &mut self.emit,
            &mut self.place,
            &mut self.head,
            &mut self.advance,
        ] {
            report.kernel(gpu, assets, changed, kernel, &mut [binding]);
        }
    }
}
