//! WGSL validation with naga before anything reaches the device, so a
//! mistake is reported as `file:line:column` with the source line and a
//! caret, the way a compiler would, instead of as a device error.

/// Parses and validates `source`; `file` names it in the message.
pub fn validate(source: &str, file: &str) -> Result<naga::Module, String> {
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|e| e.emit_to_string_with_path(source, file))?;
    let mut validator = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    );
    validator
        .validate(&module)
        .map_err(|e| e.emit_to_string_with_path(source, file))?;
    Ok(module)
}

/// The size in bytes naga computes for struct `name` in `module`, for tests
/// that hold Rust uniform structs against their WGSL twins.
pub fn struct_size(module: &naga::Module, name: &str) -> Option<u32> {
    module
        .types
        .iter()
        .find(|(_, ty)| ty.name.as_deref() == Some(name))
        .map(|(_, ty)| ty.inner.size(module.to_ctx()))
}
