// A clip's frame from its planes (4:2:0: full-size luma, half-size
// chroma) to colour, on the GPU: the decoder hands over a third of the
// bytes of RGBA and skips its own colour conversion. BT.601 or BT.709,
// limited or full range, as the clip says (what ffmpeg itself assumes when
// it says nothing: 601, limited).

#include "common/fullscreen.wgsl"
#include "common/srgb.wgsl"

struct Yuv {
    // 0: BT.601, 1: BT.709.
    matrix: u32,
    // 0: limited range (16..235), 1: full range.
    full: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var luma: texture_2d<f32>;
@group(0) @binding(1) var blue: texture_2d<f32>;
@group(0) @binding(2) var red: texture_2d<f32>;
@group(0) @binding(3) var planes: sampler;
@group(0) @binding(4) var<uniform> yuv: Yuv;


@fragment
fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {
    var y = textureSampleLevel(luma, planes, in.uv, 0.0).r;
    var cb = textureSampleLevel(blue, planes, in.uv, 0.0).r - 0.5;
    var cr = textureSampleLevel(red, planes, in.uv, 0.0).r - 0.5;
    if yuv.full == 0u {
        y = (y - 16.0 / 255.0) * (255.0 / 219.0);
        cb = cb * (255.0 / 224.0);
        cr = cr * (255.0 / 224.0);
    }
    // Kr and Kb of the matrix.
    var k = vec2<f32>(0.299, 0.114);
    if yuv.matrix == 1u {
        k = vec2<f32>(0.2126, 0.0722);
    }
    let kg = 1.0 - k.x - k.y;
    let r = y + 2.0 * (1.0 - k.x) * cr;
    let b = y + 2.0 * (1.0 - k.y) * cb;
    let g = (y - k.x * r - k.y * b) / kg;
    return vec4<f32>(srgb_decode(clamp(vec3<f32>(r, g, b), vec3<f32>(0.0), vec3<f32>(1.0))), 1.0);
}
