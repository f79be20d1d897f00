//! Counting sort of points into a uniform grid on the GPU
//! (`shaders/common/grid_sort.wgsl`): clear, count per cell (each point
//! keeping its rank in its cell), prefix sum, scatter (the sort's own, or
//! the caller's, which may move the points' data as it places them).
//! Neighbour searches (the colony's nearest node, the fluid's neighbours)
//! then visit only the cells around a point. The point count
//! stays on the GPU; the dispatches over points are indirect.

use bytemuck::{Pod, Zeroable};

use super::bindings::uniform_buffer;
use super::compute::{Binding, Kernel, KernelReload, groups, storage_buffer};
use super::prefix_sum::PrefixSum;
use super::profiler::GpuProfiler;
use super::{BuildError, Gpu};
use crate::base::{Assets, ChangedFile};

const FILE: &str = "common/grid_sort.wgsl";

/// The box a grid covers and its cell size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridBox {
    /// Lowest corner.
    pub origin: [f32; 3],
    /// Edge of a cubic cell.
    pub cell_size: f32,
    /// Cells along each axis.
    pub dims: [u32; 3],
    /// Points whose w is 0 are dead: sorted after every cell, where no
    /// search walks (a fluid's drained particles, which otherwise pile up
    /// in the few cells of the sink that drained them, and every walk
    /// near it goes through the pile).
    pub dead_left_out: bool,
}

impl GridBox {
    /// A grid of cells of `cell_size` covering `min..max`, at most
    /// `max_cells` cells (the cells grow if the box would need more).
    pub fn covering(min: [f32; 3], max: [f32; 3], cell_size: f32, max_cells: u32) -> Self {
        let extent = [max[0] - min[0], max[1] - min[1], max[2] - min[2]];
        let mut cell_size = cell_size.max(1e-6);
        loop {
            let dims = extent.map(|e| ((e / cell_size).ceil() as u32).max(1));
            if dims.iter().map(|d| u64::from(*d)).product::<u64>() <= u64::from(max_cells) {
                return Self {
                    origin: min,
                    cell_size,
                    dims,
                    dead_left_out: false,
                };
            }
            cell_size *= 1.25;
        }
    }

    /// Number of cells.
    pub fn cells(&self) -> u32 {
        self.dims.iter().product()
    }

    /// This box, its sort leaving dead points (w = 0) out of the cells.
    pub fn leaving_out_dead(self) -> Self {
        Self {
            dead_left_out: true,
            ..self
        }
    }
}

/// `struct Grid` in `shaders/common/grid.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct GridUniform {
    origin: [f32; 3],
    cell_size: f32,
    dims: [u32; 3],
    cell_total: u32,
    dead_left_out: u32,
    inverse_cell_size: f32,
    _pad: [u32; 2],
}

/// The passes that rank each cell's points by index ([`GridSort::keep_order`]).
struct InOrder {
    /// Flags the dead points (`grid_mark_dead`).
    mark: (Kernel, Binding),
    /// Sums the flags: the dead before each point.
    dead_scan: PrefixSum,
    /// Ranks each point in its cell (`grid_rank_in_order`).
    rank: (Kernel, Binding),
    _dead_before: wgpu::Buffer,
}

/// Buffers and kernels of one grid sort.
pub struct GridSort {
    clear: (Kernel, Binding),
    count: (Kernel, Binding),
    scatter: (Kernel, Binding),
    scan: PrefixSum,
    /// The grid uniform (binding 0 of the searches).
    pub grid: wgpu::Buffer,
    /// After a sort: the first sorted slot of each cell, and the total last.
    pub starts: wgpu::Buffer,
    /// Each point's cell and its rank among the cell's points (vec2 of
    /// u32): its slot is the cell's start plus the rank.
    pub cell_of: wgpu::Buffer,
    /// Point indices, cell by cell.
    pub sorted: wgpu::Buffer,
    /// What ranks each cell's points by index ([`GridSort::keep_order`]).
    in_order: Option<InOrder>,
    /// The points and their count, kept for [`GridSort::keep_order`].
    points: wgpu::Buffer,
    point_count: wgpu::Buffer,
    cells: u32,
    capacity: u32,
    label: String,
}

impl GridSort {
    /// A sort of up to `capacity` points from `points` (vec4 per point,
    /// xyz used), whose count is `point_count[0]`.
    pub fn new(
        gpu: &Gpu,
        assets: &Assets,
        label: &str,
        grid: GridBox,
        points: &wgpu::Buffer,
        point_count: &wgpu::Buffer,
        capacity: u32,
    ) -> Result<Self, BuildError> {
        let cells = grid.cells();
        let uniform = uniform_buffer(
            &gpu.device,
            &format!("{label}.grid"),
            size_of::<GridUniform>(),
        );
        gpu.queue.write_buffer(
            &uniform,
            0,
            bytemuck::bytes_of(&GridUniform {
                origin: grid.origin,
                cell_size: grid.cell_size,
                dims: grid.dims,
                cell_total: cells,
                dead_left_out: u32::from(grid.dead_left_out),
                inverse_cell_size: 1.0 / grid.cell_size,
                _pad: [0; 2],
            }),
        );
        let none = wgpu::BufferUsages::empty();
        let starts = storage_buffer(
            gpu,
            &format!("{label}.starts"),
            u64::from(cells + 1) * 4,
            none,
        );
        let cell_of = storage_buffer(
            gpu,
            &format!("{label}.cell_of"),
            u64::from(capacity) * 8,
            none,
        );
        let sorted = storage_buffer(
            gpu,
            &format!("{label}.sorted"),
            u64::from(capacity) * 4,
            none,
        );
        let kernel = |entry: &str,
                      buffers: &[(u32, &wgpu::Buffer)]|
         -> Result<(Kernel, Binding), BuildError> {
            let kernel = Kernel::new(gpu, assets, FILE, entry)?;
            let bind_group = kernel.bind(gpu, buffers);
            Ok((kernel, bind_group))
        };
        Ok(Self {
            clear: kernel("grid_clear", &[(0, &uniform), (4, &starts)])?,
            count: kernel(
                "grid_count",
                &[
                    (0, &uniform),
                    (1, points),
                    (2, point_count),
                    (3, &cell_of),
                    (4, &starts),
                ],
            )?,
            scatter: kernel(
                "grid_scatter",
                &[(2, point_count), (3, &cell_of), (4, &starts), (5, &sorted)],
            )?,
            scan: PrefixSum::new(gpu, assets, &starts, cells + 1)?,
            grid: uniform,
            starts,
            cell_of,
            sorted,
            in_order: None,
            points: points.clone(),
            point_count: point_count.clone(),
            cells,
            capacity,
            label: label.to_string(),
        })
    }

    /// Ranks each point after the points of its cell with a lower index
    /// (`grid_rank_in_order`), so the order within a cell, and every sum a
    /// search makes in that order, is the same on every run (`sylva
    /// render`): the ranks the count's atomics hand out follow the order
    /// its threads happen to run in. It costs a scatter, a prefix sum over
    /// the points and a pass that walks each point's cell, so only renders
    /// ask for it. The sort's dispatches ([`GridSort::cell_groups`]) grow.
    pub fn keep_order(&mut self, gpu: &Gpu, assets: &Assets) -> Result<(), BuildError> {
        let dead_before = storage_buffer(
            gpu,
            &format!("{}.dead_before", self.label),
            u64::from(self.capacity + 1) * 4,
            wgpu::BufferUsages::empty(),
        );
        let mark = Kernel::new(gpu, assets, FILE, "grid_mark_dead")?;
        let rank = Kernel::new(gpu, assets, FILE, "grid_rank_in_order")?;
        let marking = [
            (0, &self.grid),
            (1, &self.points),
            (2, &self.point_count),
            (6, &dead_before),
        ];
        let ranking = [
            (0, &self.grid),
            (2, &self.point_count),
            (3, &self.cell_of),
            (4, &self.starts),
            (5, &self.sorted),
            (6, &dead_before),
        ];
        let (marks, ranks) = (mark.bind(gpu, &marking), rank.bind(gpu, &ranking));
        self.in_order = Some(InOrder {
            mark: (mark, marks),
            dead_scan: PrefixSum::new(gpu, assets, &dead_before, self.capacity + 1)?,
            rank: (rank, ranks),
            _dead_before: dead_before,
        });
        Ok(())
    }

    /// Records the sort in a pass of its own, timed as `<label>.grid`.
    /// `indirect` holds dispatch arguments sized for the point count
    /// (workgroups of 256); without it every slot up to the capacity is
    /// visited and those past the count return at once.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        indirect: Option<(&wgpu::Buffer, u64)>,
        profiler: &mut GpuProfiler,
    ) {
        self.record(&mut self.timed_pass(encoder, profiler), indirect);
    }

    /// Records the sort's dispatches into `pass` (the device orders them:
    /// each reads what the one before wrote).
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, indirect: Option<(&wgpu::Buffer, u64)>) {
        self.record_cells(pass, indirect);
        self.over_points(pass, indirect, &self.scatter);
    }

    /// Records the sort up to its scatter: `starts` and `cell_of` are then
    /// ready, for a caller whose own kernel places the points.
    pub fn record_cells(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        indirect: Option<(&wgpu::Buffer, u64)>,
    ) {
        self.clear
            .0
            .dispatch(pass, &self.clear.1, self.cells + 1, 256);
        self.over_points(pass, indirect, &self.count);
        self.scan.encode(pass);
        if let Some(in_order) = &self.in_order {
            let (kernel, binding) = &in_order.mark;
            kernel.dispatch(pass, binding, self.capacity + 1, 256);
            in_order.dead_scan.encode(pass);
            self.over_points(pass, indirect, &self.scatter);
            self.over_points(pass, indirect, &in_order.rank);
        }
    }

    /// The workgroups (x, y, z) of each dispatch [`GridSort::record_cells`]
    /// records without `indirect`, in order.
    pub fn cell_groups(&self) -> Vec<[u32; 3]> {
        let over = |count| {
            let (x, y) = groups(count, 256);
            [x, y, 1]
        };
        let mut all = vec![over(self.cells + 1), over(self.capacity)];
        all.extend(self.scan.groups());
        if let Some(in_order) = &self.in_order {
            all.push(over(self.capacity + 1));
            all.extend(in_order.dead_scan.groups());
            all.extend([over(self.capacity), over(self.capacity)]);
        }
        all
    }

    /// The same, each dispatch's workgroups read from `args`
    /// (twelve bytes a dispatch, in the order of [`GridSort::cell_groups`]):
    /// a kernel before it may skip the sort by zeroing them.
    pub fn record_cells_from(&self, pass: &mut wgpu::ComputePass<'_>, args: &wgpu::Buffer) {
        self.clear.0.dispatch_indirect(pass, &self.clear.1, args, 0);
        self.count
            .0
            .dispatch_indirect(pass, &self.count.1, args, 12);
        self.scan.encode_from(pass, args, 24);
        if let Some(in_order) = &self.in_order {
            let mut offset = 24 + 12 * self.scan.groups().len() as u64;
            let (kernel, binding) = &in_order.mark;
            kernel.dispatch_indirect(pass, binding, args, offset);
            offset += 12;
            in_order.dead_scan.encode_from(pass, args, offset);
            offset += 12 * in_order.dead_scan.groups().len() as u64;
            let (kernel, binding) = &self.scatter;
            kernel.dispatch_indirect(pass, binding, args, offset);
            let (kernel, binding) = &in_order.rank;
            kernel.dispatch_indirect(pass, binding, args, offset + 12);
        }
    }

    /// A pass timed as `<label>.grid`.
    pub fn timed_pass<'a>(
        &self,
        encoder: &'a mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) -> wgpu::ComputePass<'a> {
        let label = format!("{}.grid", self.label);
        encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(&label),
            timestamp_writes: profiler.compute_pass(&label),
        })
    }

    fn over_points(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        indirect: Option<(&wgpu::Buffer, u64)>,
        (kernel, group): &(Kernel, Binding),
    ) {
        match indirect {
            Some((args, offset)) => kernel.dispatch_indirect(pass, group, args, offset),
            None => kernel.dispatch(pass, group, self.capacity, 256),
        }
    }

    /// Rebuilds the kernels a saved file touches (the sort's and the
    /// prefix sum's); the buffers stay.
    pub fn reload(
        &mut self,
        gpu: &Gpu,
        assets: &Assets,
        changed: &[ChangedFile],
        report: &mut KernelReload,
    ) {
        for (kernel, binding) in [&mut self.clear, &mut self.count, &mut self.scatter] {
            report.kernel(gpu, assets, changed, kernel, &mut [binding]);
        }
        self.scan.reload(gpu, assets, changed, report);
        if let Some(in_order) = &mut self.in_order {
            for (kernel, binding) in [&mut in_order.mark, &mut in_order.rank] {
                report.kernel(gpu, assets, changed, kernel, &mut [binding]);
            }
            in_order.dead_scan.reload(gpu, assets, changed, report);
        }
    }

    /// Number of cells.
    pub fn cells(&self) -> u32 {
        self.cells
    }
}
