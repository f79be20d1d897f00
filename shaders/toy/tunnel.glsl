// A Shadertoy-style tunnel of light rings flying towards the viewer, its
// walls textured by iChannel0 when one is set (try "below" or a clip).

void mainImage(out vec4 fragColor, in vec2 fragCoord) {
    vec2 p = (2.0 * fragCoord - iResolution.xy) / iResolution.y;
    float r = length(p);
    float a = atan(p.y, p.x);
    vec2 uv = vec2(a / 6.2831853 + 0.5, 0.35 / max(r, 1e-3) + iTime * 0.4);
    float rings = 0.5 + 0.5 * cos(uv.y * 18.0);
    vec3 wall = texture(iChannel0, fract(uv)).rgb;
    vec3 glow = vec3(0.2, 0.5, 1.0) * pow(rings, 8.0) + wall * 0.8;
    fragColor = vec4(glow * smoothstep(0.0, 0.6, r), 1.0);
}
