//! The colony simulation on the GPU: attraction points, the node pool,
//! candidates and edges, and one growth iteration as
//! compute passes — grid sort of the nodes, search (with removal), attract,
//! prefix-sum allocation, connect, finalize, grow. Nothing is read back
//! during a step; counts drive indirect dispatches and draws.

use crate::engine::simulation::Simulation;
use bytemuck::{Pod, Zeroable};

use crate::base::rng::Rng;
use crate::base::{Assets, ChangedFile};
use crate::gpu::bindings::uniform_buffer;
use crate::gpu::compute::{Binding, Kernel, KernelReload, read_buffer, storage_buffer};
use crate::gpu::grid_sort::{GridBox, GridSort};
use crate::gpu::prefix_sum::PrefixSum;
use crate::gpu::{BuildError, Gpu, GpuProfiler, ReadbackError};

const FILE: &str = "colony/step.wgsl";

/// Vertices of one tube segment (`vs_tube`: six quads and a six-sided cap).
pub const TUBE_VERTICES: u32 = 54;

/// Per-node attributes beside the position (`struct NodeInfo` in WGSL).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct NodeInfo {
    /// Distance from the root in nodes.
    pub offset: u32,
    /// Growth rate factor.
    pub mass: f32,
    /// Parent node, -1 for roots.
    pub parent: i32,
    /// The attraction that pulled it into being (for roots, the one it
    /// was seeded at): where the skinned layer reads its bones.
    pub tag: u32,
}

/// The step's parameters (`struct ColonyParams` in WGSL).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct StepParams {
    /// Influence distance (world units).
    pub influence: f32,
    /// Growth distance.
    pub growth: f32,
    /// Kill distance.
    pub kill: f32,
    /// dt * growth speed for this iteration.
    pub grow_step: f32,
    /// Lowest node mass.
    pub mass_min: f32,
    /// Highest node mass.
    pub mass_max: f32,
    /// Seed of the masses.
    pub seed: u32,
    /// Attractions.
    pub attraction_count: u32,
    /// Node capacity.
    pub capacity: u32,
    /// Edge capacity (twice the nodes, as the seed has it).
    pub edge_capacity: u32,
    _pad: [u32; 2],
}

impl StepParams {
    /// Parameters for a colony of `attraction_count` points and `capacity` nodes.
    pub fn new(
        influence: f32,
        growth: f32,
        kill: f32,
        grow_step: f32,
        mass: (f32, f32),
        seed: u32,
        attraction_count: u32,
        capacity: u32,
    ) -> Self {
        Self {
            influence,
            growth,
            kill,
            grow_step,
            mass_min: mass.0,
            mass_max: mass.1,
            seed,
            attraction_count,
            capacity,
            edge_capacity: capacity * 2,
            _pad: [0; 2],
        }
    }
}

/// The first nodes: roots at `seed_count` distinct attraction points.
pub fn seed_nodes(
    attractors: &[[f32; 3]],
    seed_count: u32,
    params: &StepParams,
) -> (Vec<[f32; 4]>, Vec<NodeInfo>) {
    let mut rng = Rng::new(u64::from(params.seed) ^ 0x5eed);
    let mut picked: Vec<usize> = Vec::new();
    let wanted = (seed_count as usize)
        .min(attractors.len())
        .min(params.capacity as usize);
    while picked.len() < wanted {
        let index = rng.next_u32() as usize % attractors.len();
        if !picked.contains(&index) {
            picked.push(index);
        }
    }
    let nodes = picked
        .iter()
        .map(|&i| [attractors[i][0], attractors[i][1], attractors[i][2], 1.0])
        .collect();
    let info = (0..picked.len() as u32)
        .zip(&picked)
        .map(|(slot, &attraction)| NodeInfo {
            offset: 0,
            mass: params.mass_min
                + (params.mass_max - params.mass_min) * random01(params.seed, slot),
            parent: -1,
            tag: attraction as u32,
        })
        .collect();
    (nodes, info)
}

/// `pcg` of `shaders/common/random.wgsl`.
pub fn pcg(v: u32) -> u32 {
    let state = v.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
    let word = ((state >> ((state >> 28) + 4)) ^ state).wrapping_mul(277_803_737);
    (word >> 22) ^ word
}

/// `random01` of `shaders/common/random.wgsl`.
pub fn random01(a: u32, b: u32) -> f32 {
    (pcg(a ^ pcg(b)) >> 8) as f32 / 16_777_216.0
}

/// Nodes (xyz, t), their attributes, and the edges, read back.
pub type Graph = (Vec<[f32; 4]>, Vec<NodeInfo>, Vec<[u32; 2]>);

/// The colony's kernels with their bind groups.
struct ColonyKernels {
    gather_nodes: (Kernel, Binding),
    search: (Kernel, Binding),
    attract: (Kernel, Binding),
    connect: (Kernel, Binding),
    finalize: (Kernel, Binding),
    grow: (Kernel, Binding),
}

/// The GPU buffers and passes of one colony.
pub struct ColonySim {
    kernels: ColonyKernels,
    grid: GridSort,
    scan: PrefixSum,
    params: wgpu::Buffer,
    /// Attraction points: xyz, w = 1 active, 0 removed.
    pub attractors: wgpu::Buffer,
    /// For each slot of `attractors`, the attraction's index as given (they
    /// are kept in spatial order, order.rs).
    attraction_index: wgpu::Buffer,
    /// Node positions: xyz, w = growth t.
    pub nodes: wgpu::Buffer,
    /// Node attributes.
    pub info: wgpu::Buffer,
    /// Parent/child pairs.
    pub edges: wgpu::Buffer,
    /// Node count, edge count, seed count, deepest offset.
    pub state: wgpu::Buffer,
    /// Indirect dispatch and draw arguments.
    pub args: wgpu::Buffer,
    grow_scan: wgpu::Buffer,
    attraction_count: u32,
    capacity: u32,
}

impl ColonySim {
    /// Uploads `attractors` and the seed nodes.
    pub fn new(
        gpu: &Gpu,
        assets: &Assets,
        attractors: &[[f32; 3]],
        seed_count: u32,
        params: &StepParams,
    ) -> Result<Self, BuildError> {
        let capacity = params.capacity.max(1);
        let count = attractors.len() as u32;
        let none = wgpu::BufferUsages::empty();
        let buffer = |label: &str, size: u64, extra| storage_buffer(gpu, label, size, extra);
        let attractor_buffer = buffer("colony.attractors", u64::from(count.max(1)) * 16, none);
        let order = super::order::morton_order(attractors);
        let points: Vec<[f32; 4]> = (order.iter())
            .map(|&i| attractors[i as usize])
            .map(|p| [p[0], p[1], p[2], 1.0])
            .collect();
        gpu.queue
            .write_buffer(&attractor_buffer, 0, bytemuck::cast_slice(&points));
        let attraction_index = buffer("colony.attraction_index", u64::from(count.max(1)) * 4, none);
        gpu.queue
            .write_buffer(&attraction_index, 0, bytemuck::cast_slice(&order));
        let nodes = buffer(
            "colony.nodes",
            u64::from(capacity) * 16,
            wgpu::BufferUsages::VERTEX,
        );
        let info = buffer("colony.info", u64::from(capacity) * 16, none);
        let edges = buffer("colony.edges", u64::from(capacity) * 2 * 8, none);
        let accum = buffer("colony.accum", u64::from(capacity) * 16, none);
        let candidates = buffer("colony.candidates", u64::from(capacity) * 16, none);
        let grow_scan = buffer("colony.grow_scan", u64::from(capacity) * 4, none);
        let last_pull = buffer("colony.last_pull", u64::from(capacity) * 16, none);
        let pulled_by = buffer("colony.pulled_by", u64::from(capacity) * 4, none);
        let state = buffer("colony.state", 16 * 4, none);
        let args = buffer("colony.args", 8 * 4, wgpu::BufferUsages::INDIRECT);
        let (seed_positions, seed_info) = seed_nodes(attractors, seed_count, params);
        let seeds = seed_positions.len() as u32;
        gpu.queue
            .write_buffer(&nodes, 0, bytemuck::cast_slice(&seed_positions));
        gpu.queue
            .write_buffer(&info, 0, bytemuck::cast_slice(&seed_info));
        gpu.queue
            .write_buffer(&state, 0, bytemuck::cast_slice(&[seeds, 0, seeds, 0]));
        let initial_args = [seeds.div_ceil(256), 1, 1, TUBE_VERTICES, seeds, 0, 0, 0];
        gpu.queue
            .write_buffer(&args, 0, bytemuck::cast_slice(&initial_args));
        let uniform = uniform_buffer(&gpu.device, "colony.params", size_of::<StepParams>());
        gpu.queue
            .write_buffer(&uniform, 0, bytemuck::bytes_of(params));

        let (min, max) = bounds(attractors);
        let margin = params.influence + params.growth;
        // Cells half the influence wide: the search walks 5 x 5 rows of
        // them, each cut to the sphere of its nearest node so far
        // (`row_span` in common/grid.wgsl).
        let grid_box = GridBox::covering(
            min.map(|v| v - margin),
            max.map(|v| v + margin),
            params.influence * 0.5,
            1 << 22,
        );
        let sorted_nodes = buffer("colony.sorted_nodes", u64::from(capacity) * 16, none);
        let grid = GridSort::new(gpu, assets, "colony", grid_box, &nodes, &state, capacity)?;
        let scan = PrefixSum::new(gpu, assets, &grow_scan, capacity)?;
        let kernel = |entry: &str,
                      bindings: &[(u32, &wgpu::Buffer)]|
         -> Result<(Kernel, Binding), BuildError> {
            let kernel = Kernel::new(gpu, assets, FILE, entry)?;
            let group = kernel.bind(gpu, bindings);
            Ok((kernel, group))
        };
        let kernels = ColonyKernels {
            gather_nodes: kernel(
                "gather_nodes",
                &[
                    (3, &nodes),
                    (9, &state),
                    (12, &grid.sorted),
                    (16, &sorted_nodes),
                ],
            )?,
            search: kernel(
                "search",
                &[
                    (0, &uniform),
                    (1, &grid.grid),
                    (2, &attractor_buffer),
                    (3, &nodes),
                    (5, &accum),
                    (11, &grid.starts),
                    (14, &pulled_by),
                    (15, &attraction_index),
                    (16, &sorted_nodes),
                ],
            )?,
            attract: kernel(
                "attract",
                &[
                    (0, &uniform),
                    (3, &nodes),
                    (5, &accum),
                    (6, &candidates),
                    (7, &grow_scan),
                    (9, &state),
                    (13, &last_pull),
                ],
            )?,
            connect: kernel(
                "connect",
                &[
                    (0, &uniform),
                    (3, &nodes),
                    (4, &info),
                    (6, &candidates),
                    (7, &grow_scan),
                    (8, &edges),
                    (9, &state),
                    (14, &pulled_by),
                ],
            )?,
            finalize: kernel(
                "finalize",
                &[
                    (0, &uniform),
                    (6, &candidates),
                    (7, &grow_scan),
                    (9, &state),
                    (10, &args),
                ],
            )?,
            grow: kernel(
                "grow",
                &[
                    (0, &uniform),
                    (3, &nodes),
                    (4, &info),
                    (9, &state),
                    (14, &pulled_by),
                ],
            )?,
        };
        Ok(Self {
            kernels,
            grid,
            scan,
            params: uniform,
            attractors: attractor_buffer,
            attraction_index,
            nodes,
            info,
            edges,
            state,
            args,
            grow_scan,
            attraction_count: count,
            capacity,
        })
    }

    /// Writes the step parameters (once per frame, before the steps).
    pub fn set_params(&self, gpu: &Gpu, params: &StepParams) {
        gpu.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(params));
    }

    /// Records one growth iteration.
    pub fn step(&self, encoder: &mut wgpu::CommandEncoder, profiler: &mut GpuProfiler) {
        self.grid.encode(encoder, Some((&self.args, 0)), profiler);
        encoder.clear_buffer(&self.grow_scan, 0, None);
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("colony.search"),
            timestamp_writes: profiler.compute_pass("colony.search"),
        });
        let (gather, group) = &self.kernels.gather_nodes;
        gather.dispatch_indirect(&mut pass, group, &self.args, 0);
        let (search, group) = &self.kernels.search;
        search.dispatch(&mut pass, group, self.attraction_count, 256);
        drop(pass);
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("colony.connect"),
            timestamp_writes: profiler.compute_pass("colony.connect"),
        });
        let nodes = |pass: &mut wgpu::ComputePass<'_>, (kernel, group): &(Kernel, Binding)| {
            kernel.dispatch_indirect(pass, group, &self.args, 0);
        };
        nodes(&mut pass, &self.kernels.attract);
        self.scan.encode(&mut pass);
        nodes(&mut pass, &self.kernels.connect);
        let (finalize, group) = &self.kernels.finalize;
        finalize.dispatch(&mut pass, group, 1, 1);
        nodes(&mut pass, &self.kernels.grow);
    }

    /// Node capacity.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Memory one step moves with `nodes` nodes, counted per buffer touch
    /// (a lower bound: the search's reads of neighbouring nodes, about a
    /// cell's worth per attraction, are counted once per attraction; its
    /// 25 rows' starts as 25 pairs).
    pub fn bytes_per_step(&self, nodes: u32) -> u64 {
        let (a, n) = (u64::from(self.attraction_count), u64::from(nodes));
        let cells = u64::from(self.grid.cells() + 1);
        let grid = cells * 4 * 5 + n * (16 + 4 + 4 + 4 + 4 + 4);
        let gather = n * (4 + 16 + 16);
        let search = a * (16 + 16 + 25 * 8) + a * 20 + gather;
        let attract = n * (16 + 16 + 16 + 16 + 4);
        let allocate = u64::from(self.capacity) * 4 * 3;
        let connect = n * (16 + 4) + n / 4 * (16 + 16 + 8 + 4);
        let grow = n * (16 + 16 + 16 + 4);
        grid + search + attract + allocate + connect + grow
    }

    /// Reads the state (node count, edge count, seeds, deepest offset).
    /// Waits for the GPU: for tests, export and the bench only.
    pub fn read_state(&self, gpu: &Gpu) -> Result<[u32; 4], ReadbackError> {
        let state: Vec<u32> = read_buffer(gpu, &self.state, 4)?;
        Ok([state[0], state[1], state[2], state[3]])
    }

    /// Reads nodes, their attributes and the edges (waits for the GPU).
    pub fn read_graph(&self, gpu: &Gpu) -> Result<Graph, ReadbackError> {
        let [nodes, edges, ..] = self.read_state(gpu)?;
        Ok((
            read_buffer(gpu, &self.nodes, nodes as usize)?,
            read_buffer(gpu, &self.info, nodes as usize)?,
            read_buffer(gpu, &self.edges, edges as usize)?,
        ))
    }

    /// Reads the attraction points, in the order they were given (waits
    /// for the GPU).
    pub fn read_attractors(&self, gpu: &Gpu) -> Result<Vec<[f32; 4]>, ReadbackError> {
        let count = self.attraction_count as usize;
        let kept: Vec<[f32; 4]> = read_buffer(gpu, &self.attractors, count)?;
        let index: Vec<u32> = read_buffer(gpu, &self.attraction_index, count)?;
        let mut given = vec![[0.0; 4]; count];
        for (point, &i) in kept.into_iter().zip(&index) {
            if let Some(slot) = given.get_mut(i as usize) {
                *slot = point;
            }
        }
        Ok(given)
    }
}

/// The bounding box of `points`.
pub fn bounds(points: &[[f32; 3]]) -> ([f32; 3], [f32; 3]) {
    let mut min = [f32::MAX; 3];
    let mut max = [f32::MIN; 3];
    for p in points {
        for a in 0..3 {
            min[a] = min[a].min(p[a]);
            max[a] = max[a].max(p[a]);
        }
    }
    if points.is_empty() {
        return ([-1.0; 3], [1.0; 3]);
    }
    (min, max)
}

impl Simulation for ColonySim {
    /// Rebuilds the kernels a saved WGSL file touches (`colony/step.wgsl`,
    /// what it includes, the grid sort and the prefix sum); the grown nodes
    /// stay.
    fn reload(&mut self, gpu: &Gpu, assets: &Assets, changed: &[ChangedFile]) -> KernelReload {
        let mut report = KernelReload::default();
        self.grid.reload(gpu, assets, changed, &mut report);
        self.scan.reload(gpu, assets, changed, &mut report);
        let k = &mut self.kernels;
        for (kernel, binding) in [
            &mut k.gather_nodes,
            &mut k.search,
            &mut k.attract,
            &mut k.connect,
            &mut k.finalize,
            &mut k.grow,
        ] {
            report.kernel(gpu, assets, changed, kernel, &mut [binding]);
        }
        report
    }
}
