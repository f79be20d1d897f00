//! The `params` uniform block of a `shader` layer: the WGSL struct generated
//! from the header and the bytes that fill it from the registry each frame.
//! Layout follows WGSL's uniform rules: scalars align to 4 bytes, vec3 and
//! vec4 to 16, the struct size rounds up to 16.

use super::header::HeaderParam;
use crate::params::{ParamKind, Registry, Value};

/// Field layout of the generated struct.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamsBlock {
    fields: Vec<Field>,
    size: u64,
}

#[derive(Debug, Clone, PartialEq)]
struct Field {
    name: String,
    wgsl_type: &'static str,
    offset: usize,
}

impl ParamsBlock {
    /// Lays out the header's parameters in declaration order.
    pub fn new(params: &[HeaderParam]) -> Self {
        let mut fields = Vec::new();
        let mut offset = 0usize;
        for param in params.iter().filter(|p| !p.is_texture()) {
            let (wgsl_type, align, size) = match param.spec.kind {
                ParamKind::Float { .. } => ("f32", 4, 4),
                ParamKind::Int { .. } => ("i32", 4, 4),
                ParamKind::Vec3 { .. } => ("vec3<f32>", 16, 12),
                ParamKind::Colour => ("vec4<f32>", 16, 16),
                _ => ("u32", 4, 4),
            };
            offset = offset.next_multiple_of(align);
            fields.push(Field {
                name: param.name.clone(),
                wgsl_type,
                offset,
            });
            offset += size;
        }
        // An empty struct is not valid WGSL, and uniform bindings need at
        // least 16 bytes on some backends.
        let size = offset.max(4).next_multiple_of(16) as u64;
        Self { fields, size }
    }

    /// `struct Params { ... }` for the prelude.
    pub fn wgsl(&self) -> String {
        let mut text = String::from("struct Params {\n");
        for field in &self.fields {
            text.push_str(&format!("    {}: {},\n", field.name, field.wgsl_type));
        }
        if self.fields.is_empty() {
            text.push_str("    _unused: f32,\n");
        }
        text.push_str("}\n");
        text
    }

    /// Size of the uniform buffer in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The block's bytes from the registry's current values of the
    /// parameters `names`, the fields' full names (`shader.sky.speed`) in
    /// declaration order, texture inputs left out.
    pub fn bytes<'a>(&self, names: impl Iterator<Item = &'a str>, registry: &Registry) -> Vec<u8> {
        let mut bytes = vec![0u8; self.size as usize];
        for (field, name) in self.fields.iter().zip(names) {
            let Some(value) = registry.get(name) else {
                continue;
            };
            let words: Vec<[u8; 4]> = match value {
                Value::Int(v) => vec![v.to_le_bytes()],
                Value::Bool(v) => vec![u32::from(*v).to_le_bytes()],
                Value::Enum(v) => vec![(*v as u32).to_le_bytes()],
                other => other.components().iter().map(|c| c.to_le_bytes()).collect(),
            };
            for (i, word) in words.iter().enumerate() {
                let at = field.offset + 4 * i;
                bytes[at..at + 4].copy_from_slice(word);
            }
        }
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layers::shader::header;

    #[test]
    fn layout_matches_naga() {
        let source = "// @param a float 1\n// @param tint colour 1,1,1,1\n// @param b int 2\n\
                      // @param c vec3 0,0,0\n// @param d bool true\n";
        let Ok(params) = header::parse(source) else {
            panic!("header parses");
        };
        let block = ParamsBlock::new(&params);
        let module = crate::gpu::wgsl::validate(&block.wgsl(), "params");
        let Ok(module) = module else {
            panic!("{module:?}");
        };
        let size = crate::gpu::wgsl::struct_size(&module, "Params");
        assert_eq!(size, Some(block.size() as u32));
        let offsets: Vec<usize> = block.fields.iter().map(|f| f.offset).collect();
        assert_eq!(offsets, vec![0, 16, 32, 48, 60]);
    }
}
