// The large-step solver's first stage each substep, after the reorder
// (set B holds the particles in grid order): each particle's velocity
// takes gravity and the interaction points for the substep, and its
// predicted position goes into set A, where the iterations start (the
// density stage lists neighbours around it and copies it back into B;
// fluid/pbf_correct.wgsl moves it). Where the lists are rebuilt this
// substep they are built around the predicted positions, so those are
// the anchors a particle's later moves are measured from.

#include "fluid/substep.wgsl"

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(2) var<storage, read_write> position_a: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> position_b: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> velocity_b: array<vec4<f32>>;
@group(0) @binding(20) var<storage, read_write> anchor: array<vec4<f32>>;
@group(0) @binding(21) var<storage, read> plan: ListPlan;

@compute @workgroup_size(256)
fn pbf_predict(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let s = particle(global, groups);
    if s >= params.count {
        return;
    }
    let me = position_b[s];
    var predicted = me;
    if me.w != 0.0 {
        var a = params.gravity;
        a += interaction(me.xyz, params.point0, params.push.x) + interaction(me.xyz, params.point1, params.push.y);
        var v = velocity_b[s].xyz + a * params.dt;
        v.z = select(v.z, 0.0, params.dimensions == 2u);
        velocity_b[s] = vec4<f32>(v, 0.0);
        predicted = vec4<f32>(kept_off_walls(me.xyz + v * params.dt), 1.0);
    }
    position_a[s] = predicted;
    if plan.rebuild != 0u {
        anchor[s] = predicted;
    }
}
