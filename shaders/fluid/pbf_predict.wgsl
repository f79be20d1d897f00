// The large-step solver's first stage each substep, before the grid sort
// (set A in the last substep's order): each particle's velocity takes
// gravity and the interaction points for the substep, and its position
// moves to where that velocity takes it, in place. The grid is then sorted
// and the lists built around the predicted positions, which the
// iterations walk and correct (fluid/density.wgsl, fluid/pbf_correct.wgsl),
// and which the lists' anchors are.

#include "fluid/substep.wgsl"

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(2) var<storage, read_write> position_a: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> velocity_a: array<vec4<f32>>;

@compute @workgroup_size(256)
fn pbf_predict(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let s = particle(global, groups);
    if s >= params.count {
        return;
    }
    let me = position_a[s];
    if me.w == 0.0 {
        return;
    }
    var a = params.gravity;
    a += interaction(me.xyz, params.point0, params.push.x) + interaction(me.xyz, params.point1, params.push.y);
    var v = velocity_a[s].xyz + a * params.dt;
    let kept = kept_off_walls(me.xyz + v * params.dt);
    // Its velocity is the move it makes: a particle held off a wall does
    // not keep the speed into it (water at rest on the floor would gain
    // g dt each substep).
    v = (kept - me.xyz) / params.dt;
    velocity_a[s] = vec4<f32>(v, 0.0);
    position_a[s] = vec4<f32>(kept, 1.0);
}
