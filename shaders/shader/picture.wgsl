// Picture: a still, a clip or a camera, fitted to the frame. The layer a
// VJ puts a clip on: `shader.NAME.file = "shader/picture.wgsl"`,
// `shader.NAME.picture = "media/clip.mp4"`.
//
// @param picture texture media/clip.mp4 "What it shows: media/…, camera, layer:ID, below"
// @param fit enum fill options=fill|fit|stretch "Fill the frame (cropping), fit inside it, or stretch"
// @param zoom float 1 min=0.1 max=8 smooth=0.2 "Zoom around the centre"
// @param gain float 1 min=0 max=8 smooth=0.1 "Brightness (HDR)"

@fragment
fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {
    let size = vec2<f32>(textureDimensions(picture));
    let frame = max(sylva.resolution.xy, vec2<f32>(1.0));
    // How much of the picture's width and height the frame shows.
    let ratio = (frame.x / frame.y) / max(size.x / max(size.y, 1.0), 1e-3);
    // Filling, the picture's longer side is cropped; fitting, the frame
    // shows past its shorter one (black there).
    let fill = select(vec2<f32>(ratio, 1.0), vec2<f32>(1.0, 1.0 / ratio), ratio > 1.0);
    var span = vec2<f32>(1.0);
    if params.fit == 0u {
        span = fill;
    } else if params.fit == 1u {
        span = fill / min(fill.x, fill.y);
    }
    let uv = (in.uv - 0.5) * span / params.zoom + 0.5;
    let inside = all(uv >= vec2<f32>(0.0)) && all(uv <= vec2<f32>(1.0));
    let colour = sample_picture(clamp(uv, vec2<f32>(0.0), vec2<f32>(1.0)));
    return select(vec4<f32>(0.0), vec4<f32>(colour.rgb * params.gain, colour.a), inside);
}
