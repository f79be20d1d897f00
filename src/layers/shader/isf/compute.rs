//! The compute form of a translated ISF or Shadertoy fragment stage, so a
//! pass runs as compute where its target can be stored to, as the WGSL
//! layers' do (a fullscreen fragment pass at 4K took 2.4 ms on a GPU with
//! few graphics units; the same work as compute a tenth of that). The
//! translator's entry, `@fragment fn main(@location(0) isf_FragNormCoord:
//! vec2<f32>[, @builtin(position) gl_FragCoord: vec4<f32>]) ->
//! @location(0) vec4<f32>`, becomes a plain function called once per pixel
//! with what the built-in vertex stage would have given it; its samples
//! take level 0, which is what a fragment stage samples from the show's
//! textures, all of one level. Anything else (a file's own vertex stage,
//! more varyings, derivatives, `discard`) finds no compute form or fails
//! to build, and the pass stays with the rasterizer.

use crate::gpu::compute_variant::{storage_name, storing_entry};

/// `wgsl` (a translated fragment stage) with its entry made a function and
/// a compute entry storing it to a `format` target at bind group `group`;
/// none where its entry has another form or `format` cannot be stored to.
pub fn compute_form(wgsl: &str, format: wgpu::TextureFormat, group: u32) -> Option<String> {
    let texel = storage_name(format)?;
    let entry = wgsl.find("@fragment")?;
    let open = entry + wgsl[entry..].find("fn main(")? + "fn main(".len();
    let close = open + matching_paren(&wgsl[open..])?;
    let body = close + wgsl[close..].find('{')?;
    let returns = wgsl[close + 1..body].trim();
    if returns != "-> @location(0) vec4<f32>" {
        return None;
    }
    let mut parameters = Vec::new();
    let mut arguments = Vec::new();
    for parameter in wgsl[open..close].split(',').map(str::trim) {
        if parameter.is_empty() {
            continue;
        }
        let (attribute, declared) = parameter.split_once(' ')?;
        let argument = match (attribute, declared.split_once(':')?.1.trim()) {
            ("@location(0)", "vec2<f32>") if declared.starts_with("isf_FragNormCoord") => {
                "vec2<f32>(centre.x, f32(size.y) - centre.y) / vec2<f32>(size)"
            }
            ("@builtin(position)", "vec4<f32>") => "vec4<f32>(centre, 0.0, 1.0)",
            _ => return None,
        };
        parameters.push(declared.trim().to_string());
        arguments.push(argument);
    }
    let head = format!("fn main({}) -> vec4<f32> ", parameters.join(", "));
    let mut text = format!("{}{head}{}", &wgsl[..entry], &wgsl[body..]);
    text = level_zero(&text)?;
    text.push_str(&storing_entry(
        group,
        texel,
        &format!("main({})", arguments.join(", ")),
    ));
    Some(text)
}

/// Where the parenthesis closing the one opened just before `text` is.
fn matching_paren(text: &str) -> Option<usize> {
    let mut depth = 1;
    for (at, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
    None
}

/// `text` with every `textureSample(…)` and `textureSampleBias(…)` sampling
/// level 0 (`textureSampleLevel`), which compute allows; none where a
/// call's parentheses do not close.
fn level_zero(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 256);
    let mut rest = text;
    while let Some(at) = rest.find("textureSample") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "textureSample".len()..];
        let (bias, args) = if let Some(args) = after.strip_prefix("Bias(") {
            (true, args)
        } else if let Some(args) = after.strip_prefix('(') {
            (false, args)
        } else {
            out.push_str("textureSample");
            rest = after;
            continue;
        };
        let close = matching_paren(args)?;
        let inside = &args[..close];
        let inside = match bias {
            // The bias's own argument stands as the level: with one level,
            // any level samples level 0.
            true => inside.to_string(),
            false => format!("{inside}, 0.0"),
        };
        out.push_str(&format!("textureSampleLevel({inside})"));
        rest = &args[close + 1..];
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAGE: &str = "var<private> c: vec2<f32>;\n\
        fn main_1() {\n    let s = textureSample(t, isf_sampler, vec2<f32>(c.x, (c.y)));\n}\n\
        @fragment \n\
        fn main(@location(0) isf_FragNormCoord: vec2<f32>, @builtin(position) gl_FragCoord: vec4<f32>) -> @location(0) vec4<f32> {\n    main_1();\n    return vec4<f32>(0.0);\n}\n";

    #[test]
    fn the_entry_is_called_per_pixel_with_what_the_vertex_stage_gives() {
        let text = compute_form(STAGE, wgpu::TextureFormat::Rgba16Float, 1).unwrap_or_default();
        assert!(!text.contains("@fragment"), "{text}");
        assert!(
            text.contains(
                "fn main(isf_FragNormCoord: vec2<f32>, gl_FragCoord: vec4<f32>) -> vec4<f32> {"
            ),
            "{text}"
        );
        assert!(
            text.contains("textureSampleLevel(t, isf_sampler, vec2<f32>(c.x, (c.y)), 0.0)"),
            "{text}"
        );
        assert!(text.contains("main(vec2<f32>(centre.x, f32(size.y) - centre.y) / vec2<f32>(size), vec4<f32>(centre, 0.0, 1.0))"), "{text}");
        assert!(text.contains(
            "@group(1) @binding(0) var fullscreen_target: texture_storage_2d<rgba16float, write>;"
        ));
    }

    #[test]
    fn other_entries_and_formats_stay_with_the_rasterizer() {
        let varying = STAGE.replace(
            "@builtin(position) gl_FragCoord: vec4<f32>",
            "@location(1) v: vec3<f32>",
        );
        assert!(compute_form(&varying, wgpu::TextureFormat::Rgba16Float, 1).is_none());
        assert!(compute_form(STAGE, wgpu::TextureFormat::Rgba8UnormSrgb, 1).is_none());
    }
}
