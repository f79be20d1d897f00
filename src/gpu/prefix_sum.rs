//! Exclusive prefix sum of a u32 buffer on the GPU, level by level
//! (`shaders/common/prefix_sum.wgsl`): scan blocks of 1024, scan the block
//! totals the same way, add them back. Used by the grid sort and by the
//! colony's deterministic node allocation.

use super::bindings::uniform_buffer;
use super::compute::{Binding, Kernel, KernelReload, groups, storage_buffer};
use super::{BuildError, Gpu};
use crate::base::{Assets, ChangedFile};

/// Elements per workgroup (`SCAN_BLOCK` in prefix_sum.wgsl).
const BLOCK: u32 = 1024;
const FILE: &str = "common/prefix_sum.wgsl";

/// One level: scans `count` elements into block totals.
struct Level {
    count: u32,
    scan: Binding,
    add: Binding,
}

/// A prefix sum over the first `count` elements of one buffer.
pub struct PrefixSum {
    scan: Kernel,
    add: Kernel,
    levels: Vec<Level>,
    _buffers: Vec<wgpu::Buffer>,
}

impl PrefixSum {
    /// Prepares the scan of `count` u32s of `data`.
    pub fn new(
        gpu: &Gpu,
        assets: &Assets,
        data: &wgpu::Buffer,
        count: u32,
    ) -> Result<Self, BuildError> {
        let scan = Kernel::new(gpu, assets, FILE, "scan_blocks")?;
        let add = Kernel::new(gpu, assets, FILE, "add_totals")?;
        let mut levels = Vec::new();
        let mut buffers = Vec::new();
        let mut count = count.max(1);
        let mut input: Option<usize> = None;
        loop {
            let blocks = count.div_ceil(BLOCK);
            let info = uniform_buffer(&gpu.device, "prefix_sum.info", 16);
            gpu.queue
                .write_buffer(&info, 0, bytemuck::cast_slice(&[count, 0, 0, 0]));
            let totals = storage_buffer(
                gpu,
                "prefix_sum.totals",
                u64::from(blocks) * 4,
                wgpu::BufferUsages::empty(),
            );
            let data_buffer = input.map_or(data, |i| &buffers[i]);
            // Pipelines with automatic layouts need their own bind groups.
            let level = Level {
                count,
                scan: scan.bind(gpu, &[(0, &info), (1, data_buffer), (2, &totals)]),
                add: add.bind(gpu, &[(0, &info), (1, data_buffer), (2, &totals)]),
            };
            levels.push(level);
            buffers.push(info);
            buffers.push(totals);
            input = Some(buffers.len() - 1);
            if blocks == 1 {
                break;
            }
            count = blocks;
        }
        Ok(Self {
            scan,
            add,
            levels,
            _buffers: buffers,
        })
    }

    /// Rebuilds the scan kernels if a saved file touches them.
    pub fn reload(
        &mut self,
        gpu: &Gpu,
        assets: &Assets,
        changed: &[ChangedFile],
        report: &mut KernelReload,
    ) {
        let mut scans: Vec<&mut Binding> = Vec::new();
        let mut adds: Vec<&mut Binding> = Vec::new();
        for level in self.levels.iter_mut() {
            scans.push(&mut level.scan);
            adds.push(&mut level.add);
        }
        report.kernel(gpu, assets, changed, &mut self.scan, &mut scans);
        report.kernel(gpu, assets, changed, &mut self.add, &mut adds);
    }

    /// Records the scan.
    pub fn encode(&self, pass: &mut wgpu::ComputePass<'_>) {
        for (kernel, binding, count) in self.dispatches() {
            kernel.dispatch(pass, binding, count, BLOCK);
        }
    }

    /// The workgroups (x, y, z) of each dispatch [`PrefixSum::encode`]
    /// records, in order.
    pub fn groups(&self) -> Vec<[u32; 3]> {
        self.dispatches()
            .map(|(_, _, count)| {
                let (x, y) = groups(count, BLOCK);
                [x, y, 1]
            })
            .collect()
    }

    /// Records the scan with each dispatch's workgroups read from `args`,
    /// twelve bytes a dispatch from `offset`, in the order of
    /// [`PrefixSum::groups`].
    pub fn encode_from(&self, pass: &mut wgpu::ComputePass<'_>, args: &wgpu::Buffer, offset: u64) {
        for (k, (kernel, binding, _)) in self.dispatches().enumerate() {
            kernel.dispatch_indirect(pass, binding, args, offset + 12 * k as u64);
        }
    }

    /// Each dispatch's kernel, bind group and element count: the scans
    /// down the levels, then the adds back up.
    fn dispatches(&self) -> impl Iterator<Item = (&Kernel, &Binding, u32)> {
        let scans = self
            .levels
            .iter()
            .map(|level| (&self.scan, &level.scan, level.count));
        let adds = self
            .levels
            .iter()
            .rev()
            .skip(1)
            .map(|level| (&self.add, &level.add, level.count));
        scans.chain(adds)
    }
}
