//! Parameter names a mapping gets wrong. A mapping may name a parameter of
//! a layer the running preset lacks (a controller's file covers every
//! preset), which does nothing until a preset with that layer runs; or it
//! may misspell one, which never will. These tell the two apart and find
//! the name that was meant, for `sylva check` and for the log when a
//! message arrives.

pub use crate::base::nearest::nearest;
use crate::params::Registry;

/// The part of `name` before its last dot: the layer id of a layer's
/// parameter (`shader.aurora` of `shader.aurora.glow`), the section of a
/// show-wide one (`master`).
pub fn owner(name: &str) -> &str {
    name.rsplit_once('.').map_or("", |(owner, _)| owner)
}

/// Whether `name`'s owner has parameters in `registry` (its layer is on
/// stage, or it is show-wide), so that a name `registry` lacks is
/// misspelt rather than waiting for its layer.
pub fn owner_on_stage(name: &str, registry: &Registry) -> bool {
    let owner = owner(name);
    !owner.is_empty()
        && registry.iter().any(|(spec, _)| {
            spec.name
                .strip_prefix(owner)
                .is_some_and(|rest| rest.starts_with('.'))
        })
}

/// What to say of a mapping naming `name`, which `registry` lacks:
/// unknown (with the nearest name) when its owner is on stage, else that
/// its layer is not in this preset.
pub fn missing_param(name: &str, registry: &Registry) -> String {
    if !owner_on_stage(name, registry) {
        return format!(
            "parameter {name:?} is not on stage: this preset has no layer {:?}",
            owner(name)
        );
    }
    let names = registry.iter().map(|(spec, _)| spec.name.as_str());
    match nearest(name, names) {
        Some(meant) => format!("unknown parameter {name:?} (did you mean {meant:?}?)"),
        None => format!("unknown parameter {name:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamSpec;

    #[test]
    fn a_misspelt_name_is_unknown_and_an_absent_layer_not_on_stage() {
        let names = ["master.brightness", "master.bpm", "fluid.speed"];
        let mut registry = Registry::new();
        for name in names {
            registry.register(ParamSpec::float(name, 0.0, 0.0, 1.0));
        }
        let said = missing_param("master.brightnes", &registry);
        assert!(
            said.contains("unknown") && said.contains("\"master.brightness\""),
            "{said}"
        );
        let said = missing_param("shader.aurora.glow", &registry);
        assert!(said.contains("not on stage"), "{said}");
    }
}
