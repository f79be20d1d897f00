// The start of every substep: whether it sorts the grid and builds the
// neighbour lists anew or reuses them (`ListPlan` in fluid.wgsl), and the
// grid sort's dispatches to match, all on the GPU (nothing is read back):
// a rebuild when a particle left its skin in the substep before, or when
// the lists have served REUSE substeps; the sort's workgroups zeroed
// otherwise, so its dispatches do nothing.

#include "fluid/fluid.wgsl"

@group(0) @binding(21) var<storage, read_write> plan: ListPlan;
// The sort's dispatches at full size, three words (x, y, z) each...
@group(0) @binding(22) var<storage, read> sort_groups: array<u32>;
// ...and as this substep runs them (indirect arguments). Set by the CPU
// too: a new smoothing length sets `displaced` (`FluidSim::set_params`).
@group(0) @binding(23) var<storage, read_write> sort_args: array<u32>;

@compute @workgroup_size(1)
fn plan_lists() {
    let rebuild = (plan.displaced != 0u) | (plan.since + 1u >= REUSE);
    plan.rebuild = select(0u, 1u, rebuild);
    plan.since = select(plan.since + 1u, 0u, rebuild);
    plan.rebuilds += plan.rebuild;
    plan.displaced = 0u;
    // (The buffer may hold padding past the last dispatch's three words.)
    for (var k = 0u; k + 2u < arrayLength(&sort_groups); k += 3u) {
        sort_args[k] = select(0u, sort_groups[k], rebuild);
        sort_args[k + 1u] = sort_groups[k + 1u];
        sort_args[k + 2u] = sort_groups[k + 2u];
    }
}
