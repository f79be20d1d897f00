//! The compute form of a fullscreen fragment shader: the text of its entry
//! point made an ordinary function (its `@fragment` and output location
//! blanked, so every line and column stays where the author wrote it) and
//! a compute entry appended that calls it once per pixel with the vertex
//! the rasterizer would have given (pixel centre, uv from the top left)
//! and stores the colour. Whether it compiles decides whether it is used.

/// The appended compute entry point.
pub const OUTPUT_ENTRY: &str = "fullscreen_pixels";

/// Pixels per workgroup, across and down.
pub const WORKGROUP: [u32; 2] = [8, 8];

/// `source` with `fragment` callable and the compute entry storing to a
/// texture of `format` at bind group `group`; none when the entry point is
/// not found in the form `@fragment fn NAME(… ) -> @location(0) T {` or the
/// format has no WGSL storage name.
pub fn source(
    source: &str,
    fragment: &str,
    format: wgpu::TextureFormat,
    group: u32,
) -> Option<String> {
    let texel = storage_name(format)?;
    let mut text = source.to_string();
    let name = entry_start(&text, fragment)?;
    let attribute = text[..name].trim_end().strip_suffix("@fragment")?.len();
    blank(&mut text, attribute, attribute + "@fragment".len());
    let body = name + text[name..].find('{')?;
    let arrow = name + text[name..body].find("->")?;
    let location = arrow + text[arrow..body].find("@location")?;
    let close = location + text[location..body].find(')')? + 1;
    blank(&mut text, location, close);
    let vertex = "FullscreenVertex(vec4<f32>(centre, 0.0, 1.0), centre / vec2<f32>(size))";
    text.push_str(&storing_entry(
        group,
        texel,
        &format!("{fragment}({vertex})"),
    ));
    Some(text)
}

/// The compute entry point appended to a fragment stage made a function:
/// at each pixel of a `texel` target bound at `group` it stores `call`, an
/// expression of `centre` (the pixel's centre, as the rasterizer gives it)
/// and `size` (the target's).
pub fn storing_entry(group: u32, texel: &str, call: &str) -> String {
    let [x, y] = WORKGROUP;
    format!(
        "\n@group({group}) @binding(0) var fullscreen_target: texture_storage_2d<{texel}, write>;\n\
         @compute @workgroup_size({x}, {y})\n\
         fn {OUTPUT_ENTRY}(@builtin(global_invocation_id) id: vec3<u32>) {{\n\
         \x20   let size = textureDimensions(fullscreen_target);\n\
         \x20   if id.x >= size.x || id.y >= size.y {{\n\
         \x20       return;\n\
         \x20   }}\n\
         \x20   let centre = vec2<f32>(id.xy) + 0.5;\n\
         \x20   textureStore(fullscreen_target, id.xy, vec4<f32>({call}));\n\
         }}\n"
    )
}

/// Where `fn NAME(` begins (the `fn`), as a whole word.
fn entry_start(text: &str, name: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = text[from..].find("fn ") {
        let at = from + found;
        let rest = text[at + 3..].trim_start();
        let word_before = text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if !word_before
            && let Some(after) = rest.strip_prefix(name)
            && after.trim_start().starts_with('(')
        {
            return Some(at);
        }
        from = at + 3;
    }
    None
}

/// Replaces `text[from..to]` by spaces (line breaks kept).
fn blank(text: &mut String, from: usize, to: usize) {
    let spaces: String = text[from..to]
        .chars()
        .map(|c| if c == '\n' { '\n' } else { ' ' })
        .collect();
    text.replace_range(from..to, &spaces);
}

/// WGSL's name of a storage texel format the show's targets use.
pub fn storage_name(format: wgpu::TextureFormat) -> Option<&'static str> {
    use wgpu::TextureFormat as F;
    Some(match format {
        F::Rgba16Float => "rgba16float",
        F::Rgba32Float => "rgba32float",
        F::Rgba8Unorm => "rgba8unorm",
        // A window's picture (with `BGRA8UNORM_STORAGE`, which `Gpu` asks
        // for where the adapter has it; without it the pipeline fails to
        // build and the pass rasterizes).
        F::Bgra8Unorm => "bgra8unorm",
        F::R32Float => "r32float",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHADER: &str = "@fragment\nfn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {\n    return vec4<f32>(in.uv, 0.0, 1.0);\n}\n";

    #[test]
    fn the_entry_becomes_a_function_with_its_lines_kept() {
        let text =
            source(SHADER, "fs_main", wgpu::TextureFormat::Rgba16Float, 2).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0].trim(), "");
        assert_eq!(
            lines[1],
            "fn fs_main(in: FullscreenVertex) ->              vec4<f32> {"
        );
        assert!(text.contains(
            "@group(2) @binding(0) var fullscreen_target: texture_storage_2d<rgba16float, write>;"
        ));
        assert!(text.contains("fs_main(FullscreenVertex("));
    }

    #[test]
    fn the_pictures_linear_twins_can_be_stored_to() {
        for (format, name) in [
            (wgpu::TextureFormat::Rgba8Unorm, "rgba8unorm"),
            (wgpu::TextureFormat::Bgra8Unorm, "bgra8unorm"),
        ] {
            let text = source(SHADER, "fs_main", format, 1).unwrap_or_default();
            assert!(
                text.contains(&format!("texture_storage_2d<{name}, write>")),
                "{text}"
            );
        }
    }

    #[test]
    fn other_forms_and_formats_stay_with_the_rasterizer() {
        let srgb = wgpu::TextureFormat::Rgba8UnormSrgb;
        assert!(source(SHADER, "fs_main", srgb, 1).is_none());
        let f = wgpu::TextureFormat::Rgba16Float;
        assert!(source(SHADER, "fs_other", f, 1).is_none());
        assert!(
            source(
                "fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> { }",
                "fs_main",
                f,
                1
            )
            .is_none()
        );
        assert!(
            source(
                "@fragment fn fs_main_two(in: FullscreenVertex) -> @location(0) vec4<f32> { }",
                "fs_main",
                f,
                1
            )
            .is_none()
        );
    }
}
