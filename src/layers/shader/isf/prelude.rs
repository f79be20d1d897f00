//! What every ISF and Shadertoy stage is given before its own text,
//! whichever dialect it is in: GLSL's texture calls of every era as
//! functions that sample as GL does, `isnan`/`isinf`, the step desktop
//! drivers make of `smoothstep` with equal edges, the colour an output
//! pass shows, and `gl_FragCoord` as GL counts it.

/// The corner of the one triangle that covers the render a vertex stage
/// is at (0..1 across the render as `isf_FragNormCoord` is; 2 past it):
/// the built-in vertex stages' and MadMapper's mesh.
pub(super) const CORNER: &str = "vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2))";

/// `isf_FragCoord`, GL's `gl_FragCoord` (counted from the bottom) in a
/// render of size `size`: the prelude's line for it and what the entry
/// point sets first. A macro, or a global the entry point sets where the
/// file writes it (`writable`), as GL lets a file do.
pub(super) fn frag_coord(size: &str, writable: bool) -> (String, String) {
    let value = format!("vec4(gl_FragCoord.x, {size}.y - gl_FragCoord.y, gl_FragCoord.zw)");
    match writable {
        true => (
            "vec4 isf_FragCoord;\n".into(),
            format!("    isf_FragCoord = {value};\n"),
        ),
        false => (format!("#define isf_FragCoord {value}\n"), String::new()),
    }
}

/// What ISF and Shadertoy stages both get after their textures and
/// `isf_sampler`: GLSL's texture calls on a `texture2D` (what [`super::rewrite`]
/// turns them into), sampling upright as GL does (row 0 at the bottom) a
/// texture wgpu keeps top row first; a direction (a cube map's lookup)
/// samples the texture as an equirectangular picture; `isnan` and
/// `isinf`, which WGSL has not, by their bits; `isf_smoothstep`, a step
/// where the edges are equal (as desktop drivers compute what GLSL leaves
/// undefined); `isf_linear`, which
/// takes the display-encoded colour an output pass writes to the linear
/// light sylva composites (the curve sign-mirrored and carried past 1, so
/// an input passed through comes back as it was: [`super::display_space`]);
/// and `isf_shown`, which first holds that colour where a GL host's 8-bit
/// target would (NaN 0, the colour from 0 to 100 for the light above 1
/// sylva keeps, alpha from 0 to 1), so no NaN, infinity or alpha of 78
/// reaches the composite, which would make the whole layer one colour.
pub(super) const TEXTURE_FUNCTIONS: &str = "\
vec2 isf_flip(vec2 c) { return vec2(c.x, 1.0 - c.y); }
vec3 isf_linear(vec3 c) {
    vec3 a = abs(c);
    vec3 high = pow((a + 0.055) / 1.055, vec3(2.4));
    return sign(c) * mix(high, a / 12.92, lessThanEqual(a, vec3(0.04045)));
}
vec4 isf_shown(vec4 c) {
    bvec4 nan = greaterThan(floatBitsToUint(c) & 0x7fffffffu, uvec4(0x7f800000u));
    c = clamp(mix(c, vec4(0.0), nan), vec4(0.0), vec4(100.0, 100.0, 100.0, 1.0));
    return vec4(isf_linear(c.rgb), c.a);
}
vec2 isf_equirect(vec3 d) {
    vec3 n = normalize(d);
    return vec2(atan(n.z, n.x) * 0.15915494 + 0.5, acos(clamp(n.y, -1.0, 1.0)) * 0.31830989);
}
vec4 isf_texture(texture2D t, vec2 c) { return texture(sampler2D(t, isf_sampler), isf_flip(c)); }
vec4 isf_texture(texture2D t, vec3 d) { return textureLod(sampler2D(t, isf_sampler), isf_equirect(d), 0.0); }
vec4 isf_textureLod(texture2D t, vec2 c, float lod) { return textureLod(sampler2D(t, isf_sampler), isf_flip(c), lod); }
vec4 isf_textureLod(texture2D t, vec3 d, float lod) { return textureLod(sampler2D(t, isf_sampler), isf_equirect(d), lod); }
vec4 isf_textureGrad(texture2D t, vec2 c, vec2 dx, vec2 dy) {
    return textureGrad(sampler2D(t, isf_sampler), isf_flip(c), vec2(dx.x, -dx.y), vec2(dy.x, -dy.y));
}
ivec2 isf_textureSize(texture2D t, int lod) { return textureSize(sampler2D(t, isf_sampler), lod); }
vec4 isf_texelFetch(texture2D t, ivec2 p, int lod) {
    return texelFetch(sampler2D(t, isf_sampler), ivec2(p.x, isf_textureSize(t, lod).y - 1 - p.y), lod);
}
vec4 isf_texture2DRect(texture2D t, vec2 c) { return isf_texture(t, c / vec2(isf_textureSize(t, 0))); }
bool isf_isnan(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }
bvec2 isf_isnan(vec2 x) { return greaterThan(floatBitsToUint(x) & 0x7fffffffu, uvec2(0x7f800000u)); }
bvec3 isf_isnan(vec3 x) { return greaterThan(floatBitsToUint(x) & 0x7fffffffu, uvec3(0x7f800000u)); }
bvec4 isf_isnan(vec4 x) { return greaterThan(floatBitsToUint(x) & 0x7fffffffu, uvec4(0x7f800000u)); }
bool isf_isinf(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0x7f800000u; }
bvec2 isf_isinf(vec2 x) { return equal(floatBitsToUint(x) & 0x7fffffffu, uvec2(0x7f800000u)); }
bvec3 isf_isinf(vec3 x) { return equal(floatBitsToUint(x) & 0x7fffffffu, uvec3(0x7f800000u)); }
bvec4 isf_isinf(vec4 x) { return equal(floatBitsToUint(x) & 0x7fffffffu, uvec4(0x7f800000u)); }
#define isnan isf_isnan
#define isinf isf_isinf
float isf_smoothstep(float a, float b, float x) { return a == b ? step(a, x) : smoothstep(a, b, x); }
vec2 isf_smoothstep(float a, float b, vec2 x) { return a == b ? step(a, x) : smoothstep(a, b, x); }
vec3 isf_smoothstep(float a, float b, vec3 x) { return a == b ? step(a, x) : smoothstep(a, b, x); }
vec4 isf_smoothstep(float a, float b, vec4 x) { return a == b ? step(a, x) : smoothstep(a, b, x); }
vec2 isf_smoothstep(vec2 a, vec2 b, vec2 x) { return mix(smoothstep(a, b, x), step(a, x), equal(a, b)); }
vec3 isf_smoothstep(vec3 a, vec3 b, vec3 x) { return mix(smoothstep(a, b, x), step(a, x), equal(a, b)); }
vec4 isf_smoothstep(vec4 a, vec4 b, vec4 x) { return mix(smoothstep(a, b, x), step(a, x), equal(a, b)); }
";

/// The texture calls with a bias, which only a fragment stage has.
pub(super) const BIAS_FUNCTIONS: &str = "\
vec4 isf_texture(texture2D t, vec2 c, float bias) { return texture(sampler2D(t, isf_sampler), isf_flip(c), bias); }
vec4 isf_texture(texture2D t, vec3 d, float bias) { return isf_texture(t, d); }
vec4 isf_texture2DRect(texture2D t, vec2 c, float bias) {
    return isf_texture(t, c / vec2(isf_textureSize(t, 0)), bias);
}
";
