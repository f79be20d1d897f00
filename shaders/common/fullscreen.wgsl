// One triangle that covers the whole target; uv runs 0..1 from the top left.
// Shared by the compositor and every `shader` layer.

struct FullscreenVertex {
    @builtin(position) position: vec4<f32>,
    @location(0) uv: vec2<f32>,
}

@vertex
fn vs_fullscreen(@builtin(vertex_index) index: u32) -> FullscreenVertex {
    return fullscreen_corner(index, 0.0);
}

// Corner `index` of the triangle, at clip depth `depth` (a backdrop drawn
// behind everything sits at the far end).
fn fullscreen_corner(index: u32, depth: f32) -> FullscreenVertex {
    let corner = vec2<f32>(f32((index << 1u) & 2u), f32(index & 2u));
    var out: FullscreenVertex;
    out.position = vec4<f32>(corner * 2.0 - 1.0, depth, 1.0);
    out.uv = vec2<f32>(corner.x, 1.0 - corner.y);
    return out;
}
