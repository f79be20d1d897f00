// What the compositor's passes over the scene's picture by compute share
// (compositor/occlusion.wgsl, antialias.wgsl, lens.wgsl): the pixel a
// thread covers, the eye depth the scene's depth buffer holds, and how far
// the point seen at a pixel has moved across the picture since the last
// frame.

#include "common/camera.wgsl"

// The pixel a thread covers of a picture `size` pixels across and down
// (workgroups of 64 wrapped into a second dimension); x is -1 past the
// last.
fn thread_pixel(global: vec3<u32>, groups: vec3<u32>, size: vec2<u32>) -> vec2<i32> {
    let index = global.x + global.y * groups.x * 64u;
    let past = index >= size.x * size.y;
    return select(vec2<i32>(i32(index % size.x), i32(index / size.x)), vec2<i32>(-1), past);
}

// The eye depth of depth-buffer value `d` drawn by a camera whose near
// plane is `near` (the inverse of `depth_of`): the far plane where nothing
// drew.
fn eye_depth_of(d: f32, near: f32) -> f32 {
    let far = near * CLIP_RANGE;
    return far * near / (far - d * (far - near));
}

// How far, in clip units (x right, y up), the point seen at `uv` (0..1
// from the top left) with depth-buffer value `d` moved from where the last
// frame's unshifted camera `before` saw it to where this frame's `steady`
// sees it; `unproject` takes this frame's clip space (its shift included)
// to the scene. z is 1 where both cameras see the point in front of them.
fn moved_since(uv: vec2<f32>, d: f32, unproject: mat4x4<f32>, steady: mat4x4<f32>, before: mat4x4<f32>) -> vec3<f32> {
    let ndc = vec2<f32>(uv.x * 2.0 - 1.0, 1.0 - uv.y * 2.0);
    let point = unproject * vec4<f32>(ndc, d, 1.0);
    let scene = vec4<f32>(point.xyz / point.w, 1.0);
    let then = before * scene;
    let now = steady * scene;
    let seen = (then.w > 0.0) & (now.w > 0.0);
    return select(vec3<f32>(0.0), vec3<f32>(now.xy / now.w - then.xy / then.w, 1.0), seen);
}
