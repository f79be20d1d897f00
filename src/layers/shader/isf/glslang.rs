//! One GLSL stage through glslang, the reference GLSL compiler (what VDMX
//! runs ISF through), to SPIR-V, then naga's SPIR-V front end to naga's
//! module: the path every platform takes where the `glslang` feature is
//! built (the default). Its C++ is built from source by the `glslang`
//! crate with the compiler every platform has. Callers measure the stage
//! against [`super::bounds`] first, on the deep stack: a stack overflow in
//! C++ cannot be caught either.

use ::glslang::error::GlslangError;
use ::glslang::{
    Compiler, CompilerOptions, Program, ShaderInput, ShaderSource, ShaderStage, SourceLanguage,
    Target,
};

/// Why a stage does not compile: its line in the source (0: none) and
/// the compiler's words.
pub type Failure = (usize, String);

/// Compiles `source`, a whole Vulkan GLSL stage, to naga's module.
pub fn compile(source: &str, stage: naga::ShaderStage) -> Result<naga::Module, Failure> {
    // glslang takes a C string: a NUL would cut it short (and the crate
    // panics on one).
    if let Some(at) = source.find('\0') {
        return Err((source[..at].matches('\n').count() + 1, "a NUL byte".into()));
    }
    let compiler = Compiler::acquire().ok_or((0, "glslang did not start".to_string()))?;
    let stage = match stage {
        naga::ShaderStage::Vertex => ShaderStage::Vertex,
        _ => ShaderStage::Fragment,
    };
    let text = ShaderSource::from(source);
    let options = CompilerOptions {
        source_language: SourceLanguage::GLSL,
        target: Target::Vulkan {
            version: ::glslang::VulkanVersion::Vulkan1_0,
            spirv_version: ::glslang::SpirvVersion::SPIRV1_0,
        },
        version_profile: None,
        ..CompilerOptions::default()
    };
    let input = ShaderInput::new(&text, stage, &options, None, None).map_err(failure)?;
    let shader = compiler.create_shader(input).map_err(failure)?;
    let mut program = Program::new(compiler);
    program.add_shader(&shader);
    let words = program.compile(stage).map_err(failure)?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let options = naga::front::spv::Options {
        // The stages write Vulkan's clip space as naga's GLSL front end
        // reads it, unflipped.
        adjust_coordinate_space: false,
        strict_capabilities: false,
        block_ctx_dump_prefix: None,
    };
    naga::front::spv::parse_u8_slice(&bytes, &options)
        .map_err(|e| (0, format!("glslang's SPIR-V does not read into naga: {e}")))
}

/// glslang's first error as a line and its words: its log says
/// `ERROR: 0:LINE: 'token' : what`.
fn failure(error: GlslangError) -> Failure {
    let log = match &error {
        GlslangError::PreprocessError(log)
        | GlslangError::ParseError(log)
        | GlslangError::MapIoError(log)
        | GlslangError::LinkError(log) => log.log.clone(),
        other => return (0, other.to_string()),
    };
    first_error(&log).unwrap_or((0, log.trim().to_string()))
}

/// The first `ERROR:` line of a glslang log.
fn first_error(log: &str) -> Option<Failure> {
    let line = log.lines().find_map(|l| l.trim().strip_prefix("ERROR:"))?;
    let mut parts = line.trim().splitn(3, ':');
    let (_, number, words) = (parts.next()?, parts.next()?, parts.next()?);
    let number = number.trim().parse().ok()?;
    Some((number, words.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_found_at_its_line() {
        let source = "#version 450\nlayout(location = 0) out vec4 c;\nvoid main() {\n    c = vec4(nothing);\n}\n";
        let (line, words) = compile(source, naga::ShaderStage::Fragment).unwrap_err();
        assert_eq!(line, 4);
        assert!(words.contains("nothing"), "{words}");
        assert_eq!(
            first_error("ERROR: 0:12: 'x' : undeclared identifier\nERROR: 1 compilation errors."),
            Some((12, "'x' : undeclared identifier".into()))
        );
    }
}
