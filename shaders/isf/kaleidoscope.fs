/*{
    "ISFVSN": "2",
    "CREDIT": "sylva",
    "DESCRIPTION": "Folds the picture into mirrored segments turning around a centre",
    "CATEGORIES": ["Geometry"],
    "INPUTS": [
        { "NAME": "inputImage", "TYPE": "image" },
        { "NAME": "segments", "TYPE": "float", "MIN": 2.0, "MAX": 24.0, "DEFAULT": 8.0, "LABEL": "Mirrored segments" },
        { "NAME": "spin", "TYPE": "float", "MIN": -2.0, "MAX": 2.0, "DEFAULT": 0.08, "LABEL": "Turns a second" },
        { "NAME": "zoom", "TYPE": "float", "MIN": 0.2, "MAX": 4.0, "DEFAULT": 1.2, "LABEL": "Zoom" },
        { "NAME": "aim", "TYPE": "float", "MIN": 0.0, "MAX": 1.0, "DEFAULT": 0.5, "LABEL": "Where the mirrored wedge looks (turns from the right)" },
        { "NAME": "centre", "TYPE": "point2D", "DEFAULT": [0.5, 0.5], "MIN": [0.0, 0.0], "MAX": [1.0, 1.0], "LABEL": "Centre (0..1)" },
        { "NAME": "trails", "TYPE": "float", "MIN": 0.0, "MAX": 0.98, "DEFAULT": 0.6, "LABEL": "How long the last frames linger" }
    ],
    "PASSES": [
        { "TARGET": "echo", "PERSISTENT": true, "FLOAT": true },
        {}
    ]
}*/

const float TAU = 6.28318530718;

vec2 folded(vec2 uv) {
    float aspect = RENDERSIZE.x / RENDERSIZE.y;
    vec2 p = (uv - centre) * vec2(aspect, 1.0) / zoom;
    float angle = atan(p.y, p.x) + TIME * spin * TAU;
    float wedge = TAU / floor(segments);
    angle = abs(mod(angle, wedge) - wedge * 0.5) + aim * TAU;
    vec2 q = length(p) * vec2(cos(angle), sin(angle));
    return q / vec2(aspect, 1.0) + 0.5;
}

// A point past the picture's edge reflected back into it, as a mirror
// tiling would (clamping would smear the edge's pixels into a slab).
vec2 mirrored(vec2 uv) {
    return 1.0 - abs(1.0 - mod(uv, 2.0));
}

void main() {
    if (PASSINDEX == 0) {
        // The folded picture over what lingers of the last frames.
        vec4 now = IMG_NORM_PIXEL(inputImage, mirrored(folded(isf_FragNormCoord)));
        vec4 before = IMG_THIS_PIXEL(echo);
        gl_FragColor = max(now, before * trails);
    } else {
        gl_FragColor = IMG_THIS_PIXEL(echo);
    }
}
