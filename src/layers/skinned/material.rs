//! What a character's surface is made of: each vertex's glTF material,
//! its metal-rough factors, which the skin's drawing shades.

/// What a surface is made of: its glTF material's metal-rough factors
/// (textures are not read).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Material {
    /// Base colour, linear RGB.
    pub colour: [f32; 3],
    /// 0 a dielectric, 1 a metal.
    pub metallic: f32,
    /// 0 mirror-smooth, 1 rough.
    pub roughness: f32,
}

impl Material {
    /// A white, matte, non-metal surface (the built-in figure's, tinted by
    /// `body_colour`).
    pub const PLAIN: Material = Material {
        colour: [1.0; 3],
        metallic: 0.0,
        roughness: 0.5,
    };

    /// The factors of a glTF material.
    pub(super) fn of(material: &gltf::Material<'_>) -> Self {
        let pbr = material.pbr_metallic_roughness();
        let [r, g, b, _] = pbr.base_color_factor();
        Self {
            colour: [r, g, b],
            metallic: pbr.metallic_factor().clamp(0.0, 1.0),
            roughness: pbr.roughness_factor().clamp(0.0, 1.0),
        }
    }
}
