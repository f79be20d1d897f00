//! The SPH simulation on the GPU: particles in grid order,
//! a counting sort into cells of (1 + skin) h / 2 whose scatter moves the
//! particles into cell order (reorder), then density (listing each
//! particle's neighbours within (1 + skin) h), force over those lists and
//! integrate passes (the weakly compressible step), or a prediction before
//! the sort, iterations of density and correction, then XSPH and
//! vorticity confinement (Position Based Fluids, `Solving::Pbf`; its lists
//! are built every substep). A large fluid's lists serve the next substeps too
//! (Verlet lists, `lists.rs`): a substep sorts and lists anew only when a
//! particle has moved half the skin since or the lists have served their
//! substeps, which the GPU decides at the start of each substep
//! (`fluid/plan.wgsl`). Nothing is read back during a step.

use crate::engine::simulation::Simulation;

use super::bodies::BODIES_BYTES;
use super::lists::{LIST_HEAD, Lists, list_depth};
use super::white_water::{FluidBuffers, WhiteWater};
use crate::base::{Assets, ChangedFile};
use crate::engine::world::{Capsule, MAX_BRANCHES};
use crate::gpu::bindings::uniform_buffer;
use crate::gpu::compute::{Binding, Kernel, KernelReload, storage_buffer};
use crate::gpu::grid_sort::{GridBox, GridSort};
use crate::gpu::{BuildError, Gpu, GpuProfiler};

mod readback;

pub use super::physics::{
    FluidParams, MAX_ITERATIONS, Solver, calibrated_mass, coefficients, pbf_denominator,
};
pub use readback::Compression;

/// Cells of the branch bins and slots a cell (`BIN_CELLS`, `BIN_DEPTH` in
/// fluid.wgsl); the bins buffer holds the counts, then the slots.
const BIN_CELLS: u64 = 4096;
const BIN_DEPTH: u64 = 32;

/// The stages a solver runs after the density stage.
#[allow(
    clippy::large_enum_variant,
    reason = "one a fluid, built with it and never moved"
)]
enum Solving {
    /// Forces, then the integrate step, in one pass.
    Wcsph { force: (Kernel, Binding) },
    /// Prediction before the grid sort; each iteration the density
    /// stage's multipliers (the first listing the neighbours at the
    /// predicted positions, the later ones summing over those lists:
    /// `density_listed`), then the correction; then XSPH and the
    /// vorticity, then its confinement and the settling.
    Pbf {
        density_listed: (Kernel, Binding),
        predict: (Kernel, Binding),
        correct: (Kernel, Binding),
        velocity: (Kernel, Binding),
        finish: (Kernel, Binding),
    },
}

/// One dispatch of a substep: what the profiler calls it, its kernel and
/// threads.
type SubstepDispatch<'a> = (&'static str, &'a (Kernel, Binding), u32);

/// The GPU state of one fluid.
pub struct FluidSim {
    grid: GridSort,
    /// Bins the world's branches for the integrate stage, once a frame.
    bin_branches: (Kernel, Binding),
    /// Puts each bin's branches in index order (`order_bins`).
    order_bins: (Kernel, Binding),
    bins: wgpu::Buffer,
    /// Decides each substep whether to sort and list anew (plan.wgsl).
    plan_lists: (Kernel, Binding),
    /// `ListPlan`: what the plan decided and what the substep found.
    plan: wgpu::Buffer,
    /// The grid sort's dispatches as the plan runs them.
    sort_args: wgpu::Buffer,
    /// Substeps a list serves at most (1: no plan runs, every substep
    /// sorts and lists).
    reuse: u32,
    /// The smoothing length last written, which the lists were built for.
    listed_for: std::cell::Cell<f32>,
    /// The rest density last written, which density errors are against.
    rest_density: std::cell::Cell<f32>,
    reorder: (Kernel, Binding),
    density: (Kernel, Binding),
    /// The stages after density, the solver's own.
    solving: Solving,
    /// The large-step solver's iterations a substep.
    iterations: std::cell::Cell<u32>,
    /// Threads sharing each particle's neighbour walk (`LANES` in fluid.wgsl).
    lanes: u32,
    /// Each walker's neighbours, from the density stage to the force stage
    /// (`LISTED` in fluid.wgsl).
    listed: wgpu::Buffer,
    /// Neighbours a list holds (`LISTED`).
    depth: u32,
    params: wgpu::Buffer,
    /// Positions in grid order between substeps: xyz, w = 1 alive, 0 drained.
    pub positions: wgpu::Buffer,
    /// Velocities, same order.
    pub velocities: wgpu::Buffer,
    /// Density and pressure per particle, in the reordered (B) order.
    pub densities: wgpu::Buffer,
    /// Accelerations (the large-step solver's vorticity), B order.
    pub accelerations: wgpu::Buffer,
    substeps: wgpu::Buffer,
    /// The bodies the water meets (`Bodies` in `common/world.wgsl`).
    bodies: wgpu::Buffer,
    count: u32,
    /// Its spray, foam and bubbles, when it throws any.
    pub white_water: Option<WhiteWater>,
}

impl FluidSim {
    /// Uploads `positions` (xyz, w = 1) and `velocities` and prepares the
    /// passes of `solver` for a container of `params.container` with cells
    /// of `params.h`; landings on the floor are counted in `rain` (the
    /// world's rain map) and `branches` (the world's, a `Branches` block in
    /// the scene's frame) are met when the bodies block asks.
    pub fn new(
        gpu: &Gpu,
        assets: &Assets,
        positions: &[[f32; 4]],
        velocities: &[[f32; 4]],
        params: &FluidParams,
        solver: Solver,
        rain: &wgpu::Buffer,
        branches: &wgpu::Buffer,
    ) -> Result<Self, BuildError> {
        let lists = Lists::of(positions.len() as u32, solver);
        Self::with_lists(
            gpu, assets, positions, velocities, params, solver, rain, branches, lists,
        )
    }

    /// The same with neighbour lists kept as `lists` says (the tests' way
    /// to make the stages walk the grid for some particles or all, and to
    /// rebuild the lists every substep).
    pub fn with_lists(
        gpu: &Gpu,
        assets: &Assets,
        positions: &[[f32; 4]],
        velocities: &[[f32; 4]],
        params: &FluidParams,
        solver: Solver,
        rain: &wgpu::Buffer,
        branches: &wgpu::Buffer,
        lists: Lists,
    ) -> Result<Self, BuildError> {
        let count = positions.len().max(1) as u32;
        let none = wgpu::BufferUsages::empty();
        let vectors = |label: &str| storage_buffer(gpu, label, u64::from(count) * 16, none);
        let (position_a, velocity_a) = (vectors("fluid.position_a"), vectors("fluid.velocity_a"));
        let (position_b, velocity_b) = (vectors("fluid.position_b"), vectors("fluid.velocity_b"));
        let accelerations = vectors("fluid.acceleration");
        let densities = storage_buffer(gpu, "fluid.density", u64::from(count) * 8, none);
        gpu.queue
            .write_buffer(&position_a, 0, bytemuck::cast_slice(positions));
        gpu.queue
            .write_buffer(&velocity_a, 0, bytemuck::cast_slice(velocities));
        // Counts substeps on the GPU, so the emitter's random stream moves
        // on every substep although the parameters are written once a frame.
        let substeps = storage_buffer(gpu, "fluid.substeps", 4, none);
        let count_buffer = storage_buffer(gpu, "fluid.count", 4, none);
        let bodies = storage_buffer(gpu, "fluid.bodies", BODIES_BYTES, none);
        let tank_branches = storage_buffer(
            gpu,
            "fluid.tank_branches",
            (MAX_BRANCHES * size_of::<Capsule>()) as u64,
            none,
        );
        let bins = storage_buffer(
            gpu,
            "fluid.branch_bins",
            BIN_CELLS * (1 + BIN_DEPTH) * 4,
            none,
        );
        gpu.queue
            .write_buffer(&count_buffer, 0, bytemuck::bytes_of(&count));
        let uniform = uniform_buffer(&gpu.device, "fluid.params", size_of::<FluidParams>());
        gpu.queue
            .write_buffer(&uniform, 0, bytemuck::bytes_of(&params.with_kernel()));
        let lanes = lanes_for(count);
        let limits = gpu.device.limits();
        let limit = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        // (Walkers rounded up to a workgroup's: a layout may group them.)
        let walkers = (count * lanes).next_multiple_of(256);
        let depth = list_depth(walkers, limit, lists.depth.min(255));
        // Without lists a reuse would only walk a stale grid.
        let reuse = if depth == 0 { 1 } else { lists.reuse.max(1) };
        let skin = if reuse == 1 { 0.0 } else { lists.skin };
        let h = params.h.max(1e-6);
        // Cells of half the lists' reach: the kernels search 5 x 5 x 5 of
        // them (REACH in common/grid.wgsl).
        let cell = h * (1.0 + skin) * 0.5;
        let grid_box =
            GridBox::covering([0.0; 3], params.container, cell, 1 << 25).leaving_out_dead();
        let grid = GridSort::new(
            gpu,
            assets,
            "fluid",
            grid_box,
            &position_a,
            &count_buffer,
            count,
        )?;
        let list_words = u64::from(walkers) * (LIST_HEAD + u64::from(depth));
        let listed = storage_buffer(gpu, "fluid.listed", list_words * 4, none);
        let anchors = vectors("fluid.anchor");
        // `displaced` set: the first substep sorts and lists; and
        // `rebuild` set, as it stays where no plan runs (lists built every
        // substep).
        let plan = storage_buffer(gpu, "fluid.plan", 16, none);
        gpu.queue
            .write_buffer(&plan, 0, bytemuck::cast_slice(&[1u32, 1, 0, 0]));
        let (sort_groups, sort_args) = sort_dispatches(gpu, &grid);
        let kernel = |entry: &str,
                      bindings: &[(u32, &wgpu::Buffer)]|
         -> Result<(Kernel, Binding), BuildError> {
            // One WGSL file per stage, each declaring read-only what it only reads.
            let file = match entry {
                "compute_density" => "fluid/density.wgsl".to_string(),
                "compute_force" => "fluid/force.wgsl".to_string(),
                "pbf_predict" | "pbf_correct" | "pbf_velocity" | "pbf_finish" => {
                    format!("fluid/{entry}.wgsl")
                }
                "bin_branches" | "order_bins" => "fluid/branches.wgsl".to_string(),
                "plan_lists" => "fluid/plan.wgsl".to_string(),
                other => format!("fluid/{other}.wgsl"),
            };
            let constants = [
                ("LANES", f64::from(lanes)),
                ("LISTED", f64::from(depth)),
                ("SKIN", f64::from(skin)),
                ("REUSE", f64::from(reuse)),
                ("SOLVER", solver.constant()),
            ];
            let kernel = Kernel::with_constants(gpu, assets, &file, entry, &constants)?;
            let group = kernel.bind(gpu, bindings);
            Ok((kernel, group))
        };
        let binning = [
            (0, &uniform),
            (11, &bodies),
            (13, branches),
            (16, &tank_branches),
            (17, &bins),
        ];
        // The density stage reads set B; the large-step solver's copies
        // each position into A for its correction, which reads A and
        // writes B.
        let density_bindings = [
            (0, &uniform),
            (1, &grid.grid),
            (2, &position_a),
            (4, &position_b),
            (6, &densities),
            (8, &grid.starts),
            (18, &listed),
            (20, &anchors),
            (21, &plan),
        ];
        let walking = [
            (0, &uniform),
            (1, &grid.grid),
            (6, &densities),
            (8, &grid.starts),
            (18, &listed),
            (20, &anchors),
        ];
        let settling = [
            (2, &position_a),
            (3, &velocity_a),
            (10, &substeps),
            (11, &bodies),
            (12, rain),
            (16, &tank_branches),
            (17, &bins),
            (21, &plan),
        ];
        // The large-step solver's later iterations sum over the lists its
        // first built at the predicted positions: their density stage
        // reads a plan that never rebuilds.
        let listed_plan = storage_buffer(gpu, "fluid.listed_plan", 16, none);
        let mut listing_bindings = density_bindings;
        listing_bindings[8] = (21, &listed_plan);
        let solving = match solver {
            Solver::Wcsph => Solving::Wcsph {
                force: kernel(
                    "compute_force",
                    &[
                        &walking[..],
                        &[(4, &position_b), (5, &velocity_b), (7, &accelerations)],
                        &settling,
                    ]
                    .concat(),
                )?,
            },
            Solver::Pbf => Solving::Pbf {
                density_listed: kernel("compute_density", &listing_bindings)?,
                predict: kernel(
                    "pbf_predict",
                    &[(0, &uniform), (2, &position_a), (3, &velocity_a)],
                )?,
                correct: kernel(
                    "pbf_correct",
                    &[
                        &walking[..],
                        &[(2, &position_b), (4, &position_a), (5, &velocity_b)],
                    ]
                    .concat(),
                )?,
                velocity: kernel(
                    "pbf_velocity",
                    &[
                        &walking[..],
                        &[
                            (3, &velocity_a),
                            (4, &position_b),
                            (5, &velocity_b),
                            (7, &accelerations),
                        ],
                    ]
                    .concat(),
                )?,
                finish: kernel(
                    "pbf_finish",
                    &[
                        &walking[..],
                        &[(4, &position_b), (7, &accelerations)],
                        &settling,
                    ]
                    .concat(),
                )?,
            },
        };
        Ok(Self {
            plan_lists: kernel(
                "plan_lists",
                &[(21, &plan), (22, &sort_groups), (23, &sort_args)],
            )?,
            bin_branches: kernel("bin_branches", &binning)?,
            order_bins: kernel("order_bins", &binning)?,
            reorder: kernel(
                "reorder",
                &[
                    (0, &uniform),
                    (2, &position_a),
                    (3, &velocity_a),
                    (4, &position_b),
                    (5, &velocity_b),
                    (8, &grid.starts),
                    (9, &grid.sorted),
                    (10, &substeps),
                    (19, &grid.cell_of),
                    (20, &anchors),
                    (21, &plan),
                ],
            )?,
            density: kernel("compute_density", &density_bindings)?,
            solving,
            iterations: std::cell::Cell::new(1),
            plan,
            sort_args,
            reuse,
            listed_for: std::cell::Cell::new(params.h),
            rest_density: std::cell::Cell::new(params.rest_density),
            bins,
            lanes,
            listed,
            depth,
            grid,
            params: uniform,
            positions: position_a,
            velocities: velocity_a,
            densities,
            accelerations,
            substeps,
            bodies,
            count,
            white_water: None,
        })
    }

    /// Gives the fluid a ring of `capacity` white particles (0: none).
    pub fn throw_white_water(
        &mut self,
        gpu: &Gpu,
        assets: &Assets,
        capacity: u32,
    ) -> Result<(), BuildError> {
        let fluid = FluidBuffers {
            params: &self.params,
            grid: &self.grid.grid,
            positions: &self.positions,
            velocities: &self.velocities,
            densities: &self.densities,
            starts: &self.grid.starts,
        };
        self.white_water = (capacity > 0)
            .then(|| WhiteWater::new(gpu, assets, &fluid, self.count, capacity))
            .transpose()?;
        Ok(())
    }

    /// Sorts each substep's particles in an order that is the same on
    /// every run ([`GridSort::keep_order`]), for renders that must repeat.
    /// The sort then has more dispatches, which the plan runs or skips.
    pub fn keep_order(&mut self, gpu: &Gpu, assets: &Assets) -> Result<(), BuildError> {
        self.grid.keep_order(gpu, assets)?;
        let (sort_groups, sort_args) = sort_dispatches(gpu, &self.grid);
        let (kernel, binding) = &mut self.plan_lists;
        *binding = kernel.bind(
            gpu,
            &[(21, &self.plan), (22, &sort_groups), (23, &sort_args)],
        );
        self.sort_args = sort_args;
        Ok(())
    }

    /// Writes the bodies the next substeps meet (a [`super::bodies::block`]).
    pub fn set_bodies(&self, gpu: &Gpu, block: &[u8]) {
        let fits = block.len().min(BODIES_BYTES as usize) & !3;
        gpu.queue.write_buffer(&self.bodies, 0, &block[..fits]);
    }

    /// Writes the parameters for the next substeps. A new h (the knob is
    /// smoothed, so it moves a little every frame while turned) makes the
    /// next substep rebuild the lists: those built for a smaller h miss
    /// neighbours within the new one.
    pub fn set_params(&self, gpu: &Gpu, params: &FluidParams) {
        gpu.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&params.with_kernel()));
        self.rest_density.set(params.rest_density);
        if self.listed_for.replace(params.h) != params.h {
            // `ListPlan.displaced`.
            gpu.queue
                .write_buffer(&self.plan, 0, bytemuck::bytes_of(&1u32));
        }
    }

    /// Records `substeps` substeps after binning the branches: each stage
    /// in its own timed pass when the profiler times stages, else all in
    /// one pass `fluid.substeps` (the force stage integrates too).
    pub fn steps(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        substeps: u32,
    ) {
        if substeps == 0 {
            return;
        }
        encoder.clear_buffer(&self.bins, 0, Some(BIN_CELLS * 4));
        let bin = |pass: &mut wgpu::ComputePass<'_>| {
            let (kernel, group) = &self.bin_branches;
            kernel.dispatch(pass, group, MAX_BRANCHES as u32, 64);
            let (kernel, group) = &self.order_bins;
            kernel.dispatch(pass, group, BIN_CELLS as u32, 64);
        };
        if profiler.times_stages() {
            let label = "fluid.branches";
            bin(
                &mut encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some(label),
                    timestamp_writes: profiler.compute_pass(label),
                }),
            );
            for _ in 0..substeps {
                for (label, (kernel, group), threads) in self.before_sort() {
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some(label),
                        timestamp_writes: profiler.compute_pass(label),
                    });
                    kernel.dispatch(&mut pass, group, threads, 256);
                }
                self.plan_and_sort(&mut self.grid.timed_pass(encoder, profiler));
                for (label, (kernel, group), threads) in self.stages() {
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some(label),
                        timestamp_writes: profiler.compute_pass(label),
                    });
                    kernel.dispatch(&mut pass, group, threads, 256);
                }
            }
            return;
        }
        let label = "fluid.substeps";
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: profiler.compute_pass(label),
        });
        bin(&mut pass);
        let stages = self.stages();
        let before = self.before_sort();
        for _ in 0..substeps {
            for (_, (kernel, group), threads) in &before {
                kernel.dispatch(&mut pass, group, *threads, 256);
            }
            self.plan_and_sort(&mut pass);
            for (_, (kernel, group), threads) in &stages {
                kernel.dispatch(&mut pass, group, *threads, 256);
            }
        }
    }

    /// A substep's start: the grid sort up to its scatter, behind the plan
    /// where lists are reused (it runs only when the plan rebuilds them).
    fn plan_and_sort(&self, pass: &mut wgpu::ComputePass<'_>) {
        if self.reuse == 1 {
            self.grid.record_cells(pass, None);
            return;
        }
        let (kernel, group) = &self.plan_lists;
        kernel.dispatch(pass, group, 1, 1);
        self.grid.record_cells_from(pass, &self.sort_args);
    }

    /// The dispatches of a substep before its grid sort: the large-step
    /// solver's prediction, so that the grid is sorted and the lists built
    /// where the particles are predicted to be, which the iterations walk.
    fn before_sort(&self) -> Vec<SubstepDispatch<'_>> {
        match &self.solving {
            Solving::Wcsph { .. } => Vec::new(),
            Solving::Pbf { predict, .. } => vec![("fluid.predict", predict, self.count)],
        }
    }

    /// The dispatches of a substep after the grid sort, in order.
    fn stages(&self) -> Vec<SubstepDispatch<'_>> {
        let (particles, walkers) = (self.count, self.count * self.lanes);
        let mut stages = vec![("fluid.reorder", &self.reorder, particles)];
        match &self.solving {
            Solving::Wcsph { force } => stages.extend([
                ("fluid.density", &self.density, walkers),
                ("fluid.force", force, walkers),
            ]),
            Solving::Pbf {
                density_listed,
                correct,
                velocity,
                finish,
                ..
            } => {
                for iteration in 0..self.iterations.get().max(1) {
                    let density = if iteration == 0 {
                        &self.density
                    } else {
                        density_listed
                    };
                    stages.push(("fluid.density", density, walkers));
                    stages.push(("fluid.correct", correct, walkers));
                }
                stages.push(("fluid.velocity", velocity, walkers));
                stages.push(("fluid.finish", finish, walkers));
            }
        }
        stages
    }

    /// Sets the large-step solver's iterations a substep (the weakly
    /// compressible solver has none).
    pub fn set_iterations(&self, iterations: u32) {
        self.iterations.set(iterations.clamp(1, MAX_ITERATIONS));
    }

    /// The solver it steps with.
    pub fn solver(&self) -> Solver {
        match self.solving {
            Solving::Wcsph { .. } => Solver::Wcsph,
            Solving::Pbf { .. } => Solver::Pbf,
        }
    }

    /// Particles.
    pub fn count(&self) -> u32 {
        self.count
    }
}

/// Threads per particle's neighbour walk for a fluid of `count`: eight
/// below 65,536 particles (a small fluid's substep is one walk's latency,
/// not its work: 12k particles 0.142 ms a substep with one, 0.068 with
/// eight on the H200), one above (at 100k even, at 1M one is 1.4x faster
/// than eight: the sums' exchange costs more than the latency it hides).
/// A power of two dividing the workgroup, so a particle's lanes share one.
fn lanes_for(count: u32) -> u32 {
    if count < 1 << 16 { 8 } else { 1 }
}

impl Simulation for FluidSim {
    /// Rebuilds the kernels a saved WGSL file touches (a stage's own file,
    /// `fluid/fluid.wgsl`, or a `common/` file); the particles stay.
    fn reload(&mut self, gpu: &Gpu, assets: &Assets, changed: &[ChangedFile]) -> KernelReload {
        let mut report = KernelReload::default();
        self.grid.reload(gpu, assets, changed, &mut report);
        let mut kernels = vec![
            &mut self.plan_lists,
            &mut self.bin_branches,
            &mut self.order_bins,
            &mut self.reorder,
            &mut self.density,
        ];
        match &mut self.solving {
            Solving::Wcsph { force } => kernels.push(force),
            Solving::Pbf {
                density_listed,
                predict,
                correct,
                velocity,
                finish,
            } => kernels.extend([density_listed, predict, correct, velocity, finish]),
        }
        for (kernel, binding) in kernels {
            report.kernel(gpu, assets, changed, kernel, &mut [binding]);
        }
        if let Some(white_water) = self.white_water.as_mut() {
            white_water.reload(gpu, assets, changed, &mut report);
        }
        report
    }
}

/// The grid sort's dispatches at full size (`sort_groups`, which the plan
/// reads) and as a substep runs them (`sort_args`, indirect arguments the
/// plan writes).
fn sort_dispatches(gpu: &Gpu, grid: &GridSort) -> (wgpu::Buffer, wgpu::Buffer) {
    let groups: Vec<u32> = grid.cell_groups().concat();
    let bytes = groups.len() as u64 * 4;
    let none = wgpu::BufferUsages::empty();
    let sort_groups = storage_buffer(gpu, "fluid.sort_groups", bytes, none);
    gpu.queue
        .write_buffer(&sort_groups, 0, bytemuck::cast_slice(&groups));
    let sort_args = storage_buffer(gpu, "fluid.sort_args", bytes, wgpu::BufferUsages::INDIRECT);
    (sort_groups, sort_args)
}
