//! The forest simulation on the GPU: trees as cones drawn
//! into horizontal space maps where the tallest owns each pixel, R = V /
//! Vmax from the density maps, growth, death and seeding, with counts kept
//! on the GPU (`shaders/forest/step.wgsl`).

use super::paint::DensityPainter;
use crate::engine::simulation::Simulation;
use bytemuck::{Pod, Zeroable};

use super::species::{MAX_SPECIES, Species, SpeciesGpu};
use crate::base::{Assets, ChangedFile};
use crate::gpu::bindings::uniform_buffer;
use crate::gpu::compute::{Binding, Kernel, KernelReload, read_buffer, storage_buffer};
use crate::gpu::prefix_sum::PrefixSum;
use crate::gpu::{BuildError, Gpu, GpuProfiler, ReadbackError};

const FILE: &str = "forest/step.wgsl";

/// Byte offset in `args` of the dispatch over every tree slot in use (in
/// workgroups of 256), which the drawing's culling runs too.
pub const TREE_DISPATCH: u64 = 3 * 4;

/// Most trees: ids take 20 bits of a space-map pixel (`MAX_TREES`).
pub const MAX_TREES: u32 = 0xffffe;

/// `struct ForestParams` in `shaders/forest/forest.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct ForestParams {
    /// Pixels per side of every map.
    pub map_size: u32,
    /// Space-map slices.
    pub slices: u32,
    /// Metres between slices (slice k at (k + 1) * spacing).
    pub slice_spacing: f32,
    /// Metres a pixel covers.
    pub metres_per_pixel: f32,
    /// Tree slots.
    pub capacity: u32,
    /// Random seed.
    pub seed: u32,
    /// Density maps.
    pub density_maps: u32,
    /// Slices each density map weights.
    pub slices_per_map: u32,
    /// Death below this R.
    pub r1: f32,
    /// No growth below this R.
    pub r2: f32,
    /// 4095 over the tallest species' height.
    pub height_scale: f32,
    /// Years per step.
    pub dt: f32,
    /// Species in use.
    pub species_count: u32,
    _pad: [u32; 3],
}

impl ForestParams {
    /// Parameters for a forest of `species`.
    pub fn new(
        map_size: u32,
        metres_per_pixel: f32,
        slices: u32,
        slice_spacing: f32,
        density_maps: u32,
        slices_per_map: u32,
        capacity: u32,
        r1: f32,
        r2: f32,
        dt: f32,
        seed: u32,
        species: &[Species],
    ) -> Self {
        let tallest = species.iter().map(|s| s.max_height).fold(1e-3, f32::max);
        Self {
            map_size,
            slices,
            slice_spacing,
            metres_per_pixel,
            capacity: capacity.clamp(1, MAX_TREES),
            seed,
            density_maps: density_maps.max(1),
            slices_per_map: slices_per_map.max(1),
            r1,
            r2,
            height_scale: 4095.0 / tallest,
            dt,
            species_count: species.len().min(MAX_SPECIES) as u32,
            _pad: [0; 3],
        }
    }

    /// Pixels of one map.
    pub fn area(&self) -> u64 {
        u64::from(self.map_size) * u64::from(self.map_size)
    }
}

/// `struct Tree` in WGSL.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct Tree {
    /// Ground position, metres.
    pub position: [f32; 2],
    /// Height, metres.
    pub height: f32,
    /// Species index.
    pub species: u32,
    /// Years.
    pub age: f32,
    /// R of the last step.
    pub vitality: f32,
    /// 1 alive, 0 a free slot.
    pub alive: u32,
    /// Seeds it scatters this step.
    pub seeds: u32,
}

impl Tree {
    /// A living tree.
    pub fn new(position: [f32; 2], height: f32, species: u32) -> Self {
        Self {
            position,
            height,
            species,
            vitality: 1.0,
            alive: 1,
            ..Self::default()
        }
    }
}

/// The kernels of a step, in order.
struct ForestKernels {
    draw: (Kernel, Binding),
    measure: (Kernel, Binding),
    update: (Kernel, Binding),
    tally: (Kernel, Binding),
    list_dead: (Kernel, Binding),
    sow: (Kernel, Binding),
    finish: (Kernel, Binding),
    mark_live: (Kernel, Binding),
    list_live: (Kernel, Binding),
}

/// The forest's GPU state.
pub struct ForestSim {
    kernels: ForestKernels,
    seed_scan: PrefixSum,
    dead_scan: PrefixSum,
    live_scan: PrefixSum,
    params: ForestParams,
    seed_scan_buffer: wgpu::Buffer,
    dead_scan_buffer: wgpu::Buffer,
    live_scan_buffer: wgpu::Buffer,
    /// The live trees' slots, what the drawing instances.
    pub draw_list: wgpu::Buffer,
    /// Every tree slot.
    pub trees: wgpu::Buffer,
    /// `ForestParams`.
    pub params_buffer: wgpu::Buffer,
    /// The species table.
    pub species: wgpu::Buffer,
    /// The space maps, slice after slice: packed (height, id + 1).
    pub maps: wgpu::Buffer,
    /// The density maps, map after map.
    pub density: wgpu::Buffer,
    /// Counts (`state[]` in WGSL).
    pub state: wgpu::Buffer,
    /// Dispatch sizes for the next step (and the drawing).
    pub args: wgpu::Buffer,
    /// Paints the density maps from a picture.
    pub painter: DensityPainter,
    /// The crowns the colony grew for its species: branches, leaves, the
    /// table of where each crown's are (`crowns::CrownSet`) and each
    /// crown's bounding radius (`CrownSet::reaches`).
    pub crowns: [wgpu::Buffer; 4],
    /// Crowns grown (the table's rows in use).
    pub crown_count: u32,
}

/// The crowns grown for `species`, on the GPU: branches, leaves, table,
/// reaches (each as large as the most species can need, so a forest's
/// draw binds them once), and how many there are.
fn upload_crowns(gpu: &Gpu, species: &[Species]) -> ([wgpu::Buffer; 4], u32) {
    use super::crowns::{CROWN_LEAVES, CROWN_SEGMENTS, CrownSegment, MAX_CROWNS, grow_all};
    let spreads: Vec<f32> = species
        .iter()
        .map(|s| s.spread.to_radians().tan())
        .collect();
    let set = grow_all(&spreads);
    let none = wgpu::BufferUsages::empty();
    let sizes = [
        MAX_CROWNS * CROWN_SEGMENTS * size_of::<CrownSegment>(),
        MAX_CROWNS * CROWN_LEAVES * 16,
        MAX_CROWNS * 16,
        MAX_CROWNS * 4,
    ];
    let labels = [
        "forest.crown_segments",
        "forest.crown_leaves",
        "forest.crown_table",
        "forest.crown_reaches",
    ];
    let buffers = [0, 1, 2, 3].map(|i| storage_buffer(gpu, labels[i], sizes[i] as u64, none));
    gpu.queue
        .write_buffer(&buffers[0], 0, bytemuck::cast_slice(&set.segments));
    gpu.queue
        .write_buffer(&buffers[1], 0, bytemuck::cast_slice(&set.leaves));
    gpu.queue
        .write_buffer(&buffers[2], 0, bytemuck::cast_slice(&set.table));
    gpu.queue
        .write_buffer(&buffers[3], 0, bytemuck::cast_slice(&set.reaches()));
    (buffers, set.table.len() as u32)
}

impl ForestSim {
    /// Uploads `trees` (at most the capacity), `density` (the maps' values
    /// 0..1, map after map) and `species`.
    pub fn new(
        gpu: &Gpu,
        assets: &Assets,
        params: &ForestParams,
        species: &[Species],
        trees: &[Tree],
        density: &[f32],
    ) -> Result<Self, BuildError> {
        let capacity = params.capacity;
        let maps_bytes = params.area() * u64::from(params.slices) * 4;
        gpu.check_storage(
            &format!(
                "forest space maps ({} slices of {} px)",
                params.slices, params.map_size
            ),
            maps_bytes,
        )?;
        let none = wgpu::BufferUsages::empty();
        let buffer = |label: &str, size: u64| storage_buffer(gpu, label, size, none);
        let tree_buffer = storage_buffer(
            gpu,
            "forest.trees",
            u64::from(capacity) * size_of::<Tree>() as u64,
            wgpu::BufferUsages::VERTEX,
        );
        let count = trees.len().min(capacity as usize);
        gpu.queue
            .write_buffer(&tree_buffer, 0, bytemuck::cast_slice(&trees[..count]));
        let maps = buffer("forest.space_maps", maps_bytes);
        let density_buffer = buffer("forest.density", (density.len() * 4) as u64);
        gpu.queue
            .write_buffer(&density_buffer, 0, bytemuck::cast_slice(density));
        let owned = buffer("forest.owned", u64::from(capacity) * 4);
        let covered = buffer("forest.covered", u64::from(capacity) * 4);
        let seed_scan = buffer("forest.seed_scan", u64::from(capacity) * 4);
        let dead_scan = buffer("forest.dead_scan", u64::from(capacity) * 4);
        let dead_list = buffer("forest.dead_list", u64::from(capacity) * 4);
        let live_scan = buffer("forest.live_scan", u64::from(capacity) * 4);
        let draw_list = buffer("forest.draw_list", u64::from(capacity) * 4);
        let slots: Vec<u32> = (0..count as u32).collect();
        gpu.queue
            .write_buffer(&draw_list, 0, bytemuck::cast_slice(&slots));
        let state = buffer("forest.state", 8 * 4);
        let live = count as u32;
        gpu.queue.write_buffer(
            &state,
            0,
            bytemuck::cast_slice(&[live, live, 0, 0, live, 0u32, 0, 0]),
        );
        let args = storage_buffer(gpu, "forest.args", 6 * 4, wgpu::BufferUsages::INDIRECT);
        let groups = live.div_ceil(256).max(1);
        gpu.queue.write_buffer(
            &args,
            0,
            bytemuck::cast_slice(&[groups, 1, params.slices, groups, 1, 1u32]),
        );
        let uniform = uniform_buffer(&gpu.device, "forest.params", size_of::<ForestParams>());
        gpu.queue
            .write_buffer(&uniform, 0, bytemuck::bytes_of(params));
        let mut table = [SpeciesGpu::default(); MAX_SPECIES];
        for (slot, s) in table.iter_mut().zip(species) {
            *slot = s.gpu();
        }
        let (crowns, crown_count) = upload_crowns(gpu, species);
        let species_buffer = uniform_buffer(&gpu.device, "forest.species", size_of_val(&table));
        gpu.queue
            .write_buffer(&species_buffer, 0, bytemuck::cast_slice(&table));
        let all: [(u32, &wgpu::Buffer); 14] = [
            (0, &uniform),
            (1, &species_buffer),
            (2, &tree_buffer),
            (3, &maps),
            (4, &density_buffer),
            (5, &owned),
            (6, &covered),
            (7, &seed_scan),
            (8, &dead_scan),
            (9, &dead_list),
            (10, &state),
            (11, &args),
            (12, &live_scan),
            (13, &draw_list),
        ];
        let kernel = |entry: &str, used: &[u32]| -> Result<(Kernel, Binding), BuildError> {
            let kernel = Kernel::new(gpu, assets, FILE, entry)?;
            let bindings: Vec<(u32, &wgpu::Buffer)> = all
                .iter()
                .filter(|(b, _)| used.contains(b))
                .copied()
                .collect();
            let binding = kernel.bind(gpu, &bindings);
            Ok((kernel, binding))
        };
        let kernels = ForestKernels {
            draw: kernel("draw", &[0, 1, 2, 3, 6, 10])?,
            measure: kernel("measure", &[0, 3, 4, 5])?,
            update: kernel("update", &[0, 1, 2, 3, 4, 5, 6, 7, 8, 10])?,
            tally: kernel("tally", &[0, 2, 7, 8, 10])?,
            list_dead: kernel("list_dead", &[2, 8, 9, 10])?,
            sow: kernel("sow", &[0, 1, 2, 7, 9, 10])?,
            finish: kernel("finish", &[0, 10, 11])?,
            mark_live: kernel("mark_live", &[2, 10, 12])?,
            list_live: kernel("list_live", &[2, 10, 12, 13])?,
        };
        let painter = DensityPainter::new(gpu, assets, &uniform, &density_buffer)?;
        Ok(Self {
            painter,
            crowns,
            crown_count,
            seed_scan: PrefixSum::new(gpu, assets, &seed_scan, capacity)?,
            dead_scan: PrefixSum::new(gpu, assets, &dead_scan, capacity)?,
            live_scan: PrefixSum::new(gpu, assets, &live_scan, capacity)?,
            kernels,
            params: *params,
            seed_scan_buffer: seed_scan,
            dead_scan_buffer: dead_scan,
            live_scan_buffer: live_scan,
            draw_list,
            trees: tree_buffer,
            params_buffer: uniform,
            species: species_buffer,
            maps,
            density: density_buffer,
            state,
            args,
        })
    }

    /// Records one step.
    pub fn step(&self, encoder: &mut wgpu::CommandEncoder, profiler: &mut GpuProfiler) {
        // The scans run over every slot: slots past the count must read 0,
        // not the sums the last step left there.
        encoder.clear_buffer(&self.maps, 0, None);
        encoder.clear_buffer(&self.seed_scan_buffer, 0, None);
        encoder.clear_buffer(&self.dead_scan_buffer, 0, None);
        encoder.clear_buffer(&self.live_scan_buffer, 0, None);
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("forest.step"),
            timestamp_writes: profiler.compute_pass("forest.step"),
        });
        let k = &self.kernels;
        let (draw, group) = &k.draw;
        draw.dispatch_indirect(&mut pass, group, &self.args, 0);
        let (measure, group) = &k.measure;
        let pixels = self.params.area() * u64::from(self.params.slices);
        measure.dispatch(
            &mut pass,
            group,
            pixels.min(u64::from(u32::MAX)) as u32,
            256,
        );
        let per_tree = |pass: &mut wgpu::ComputePass<'_>, (kernel, group): &(Kernel, Binding)| {
            kernel.dispatch_indirect(pass, group, &self.args, TREE_DISPATCH);
        };
        per_tree(&mut pass, &k.update);
        self.seed_scan.encode(&mut pass);
        self.dead_scan.encode(&mut pass);
        let (tally, group) = &k.tally;
        tally.dispatch(&mut pass, group, 1, 1);
        per_tree(&mut pass, &k.list_dead);
        per_tree(&mut pass, &k.sow);
        let (finish, group) = &k.finish;
        finish.dispatch(&mut pass, group, 1, 1);
        // The live trees listed for drawing (the dispatch covers the new count).
        per_tree(&mut pass, &k.mark_live);
        self.live_scan.encode(&mut pass);
        per_tree(&mut pass, &k.list_live);
    }

    /// Replaces the density maps (same size).
    pub fn set_density(&self, gpu: &Gpu, density: &[f32]) {
        gpu.queue
            .write_buffer(&self.density, 0, bytemuck::cast_slice(density));
    }

    /// Uploads rows `rows` (map rows counted across all maps) of `density`,
    /// what a brush stroke changed.
    pub fn set_density_rows(&self, gpu: &Gpu, density: &[f32], rows: std::ops::Range<usize>) {
        let size = self.params.map_size as usize;
        let span = rows.start * size..(rows.end * size).min(density.len());
        if span.is_empty() {
            return;
        }
        gpu.queue.write_buffer(
            &self.density,
            (span.start * 4) as u64,
            bytemuck::cast_slice(&density[span]),
        );
    }

    /// Writes the dynamics (thresholds, years per step) for the next steps;
    /// the structure stays as built.
    pub fn set_params(&mut self, gpu: &Gpu, params: &ForestParams) {
        let kept = ForestParams {
            r1: params.r1,
            r2: params.r2,
            dt: params.dt,
            ..self.params
        };
        if kept != self.params {
            self.params = kept;
            gpu.queue
                .write_buffer(&self.params_buffer, 0, bytemuck::bytes_of(&self.params));
        }
    }

    /// Memory one step moves with `trees` live trees: the maps cleared,
    /// written by atomics about once a pixel, read once by the measure; a
    /// tree read and written by each per-tree pass; the scans over every
    /// slot.
    pub fn bytes_per_step(&self, trees: u32) -> u64 {
        let maps = self.params.area() * u64::from(self.params.slices) * 4;
        let density = self.params.area() * u64::from(self.params.density_maps) * 4;
        let per_tree = u64::from(trees) * (32 * 6 + 4 * 8);
        let scans = u64::from(self.params.capacity) * 4 * 9;
        maps * 3 + density + per_tree + scans
    }

    /// Slots in use, live trees, dead slots, seeds of the last step
    /// (waits for the GPU).
    pub fn read_state(&self, gpu: &Gpu) -> Result<[u32; 4], ReadbackError> {
        let state: Vec<u32> = read_buffer(gpu, &self.state, 4)?;
        Ok([state[0], state[1], state[2], state[3]])
    }

    /// Every slot in use (waits for the GPU).
    pub fn read_trees(&self, gpu: &Gpu) -> Result<Vec<Tree>, ReadbackError> {
        let [count, ..] = self.read_state(gpu)?;
        read_buffer(gpu, &self.trees, count as usize)
    }

    /// The slots the drawing instances, one per live tree (waits for the GPU).
    pub fn read_draw_list(&self, gpu: &Gpu) -> Result<Vec<u32>, ReadbackError> {
        let [_, alive, ..] = self.read_state(gpu)?;
        read_buffer(gpu, &self.draw_list, alive as usize)
    }

    /// The space maps as the last step left them (waits for the GPU).
    pub fn read_maps(&self, gpu: &Gpu) -> Result<Vec<u32>, ReadbackError> {
        read_buffer(
            gpu,
            &self.maps,
            (self.params.area() * u64::from(self.params.slices)) as usize,
        )
    }

    /// The parameters it runs with.
    pub fn params(&self) -> &ForestParams {
        &self.params
    }
}

impl Simulation for ForestSim {
    /// Rebuilds the kernels saved files touch, keeping the forest.
    fn reload(&mut self, gpu: &Gpu, assets: &Assets, changed: &[ChangedFile]) -> KernelReload {
        let mut report = KernelReload::default();
        self.seed_scan.reload(gpu, assets, changed, &mut report);
        self.dead_scan.reload(gpu, assets, changed, &mut report);
        self.live_scan.reload(gpu, assets, changed, &mut report);
        let k = &mut self.kernels;
        for (kernel, binding) in [
            &mut k.draw,
            &mut k.measure,
            &mut k.update,
            &mut k.tally,
            &mut k.list_dead,
            &mut k.sow,
            &mut k.finish,
            &mut k.mark_live,
            &mut k.list_live,
        ] {
            report.kernel(gpu, assets, changed, kernel, &mut [binding]);
        }
        let (kernel, binding) = self.painter.kernel();
        report.kernel(gpu, assets, changed, kernel, &mut [binding]);
        report
    }
}
