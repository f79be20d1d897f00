// Exclusive prefix sum of u32 in blocks of 1024, applied level by level
// (scan blocks, scan the block totals, add them back): no workgroup ever
// waits on another, so it runs on every adapter (WGSL promises no forward
// progress between workgroups). Shared by every grid sort.

struct ScanInfo {
    count: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> scan_info: ScanInfo;
@group(0) @binding(1) var<storage, read_write> scan_data: array<u32>;
@group(0) @binding(2) var<storage, read_write> scan_totals: array<u32>;

// A workgroup of 256 threads scans 1024 elements, four per thread: a
// quarter of the workgroups and barriers of one element per thread.
const THREADS: u32 = 256u;
const PER_THREAD: u32 = 4u;
const SCAN_BLOCK: u32 = 1024u;

var<workgroup> scan_shared: array<u32, 256>;

// Each block's elements become their exclusive prefix within the block; the
// block's total goes to scan_totals[block].
@compute @workgroup_size(256)
fn scan_blocks(
    @builtin(local_invocation_index) local: u32,
    @builtin(workgroup_id) block: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block_index = block.x + block.y * groups.x;
    let first = block_index * SCAN_BLOCK + local * PER_THREAD;
    var values: array<u32, 4>;
    var running = 0u;
    for (var k = 0u; k < PER_THREAD; k++) {
        var value = 0u;
        if first + k < scan_info.count {
            value = scan_data[first + k];
        }
        values[k] = running;
        running += value;
    }
    scan_shared[local] = running;
    workgroupBarrier();
    // Hillis-Steele inclusive scan of the threads' totals.
    for (var offset = 1u; offset < THREADS; offset = offset << 1u) {
        var add = 0u;
        if local >= offset {
            add = scan_shared[local - offset];
        }
        workgroupBarrier();
        scan_shared[local] += add;
        workgroupBarrier();
    }
    let before = scan_shared[local] - running;
    for (var k = 0u; k < PER_THREAD; k++) {
        if first + k < scan_info.count {
            scan_data[first + k] = before + values[k];
        }
    }
    if local == THREADS - 1u {
        scan_totals[block_index] = scan_shared[local];
    }
}

// Adds each block's scanned total to its elements.
@compute @workgroup_size(256)
fn add_totals(
    @builtin(local_invocation_index) local: u32,
    @builtin(workgroup_id) block: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block_index = block.x + block.y * groups.x;
    let total = scan_totals[block_index];
    for (var k = 0u; k < PER_THREAD; k++) {
        let index = block_index * SCAN_BLOCK + k * THREADS + local;
        if index < scan_info.count {
            scan_data[index] += total;
        }
    }
}
