//! Parameter names a mapping gets wrong. A mapping may name a parameter of
//! a layer the running preset lacks (a controller's file covers every
//! preset), which does nothing until a preset with that layer runs; or it
//! may misspell one, which never will. These tell the two apart and find
//! the name that was meant, for `sylva check` and for the log when a
//! message arrives.

use crate::params::Registry;

/// The edit distance (insertions, deletions, substitutions) between `a`
/// and `b`, by character.
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The name among `names` nearest to `name`, if near enough to be a slip
/// of the fingers: a third of its length at most, and at least 2 edits.
pub fn nearest<'a>(name: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let reach = (name.chars().count() / 3).max(2);
    names
        .into_iter()
        .map(|candidate| (distance(name, candidate), candidate))
        .filter(|(d, _)| *d <= reach)
        .min_by_key(|(d, _)| *d)
        .map(|(_, candidate)| candidate)
}

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
    fn a_slip_finds_the_name_meant_and_a_stranger_finds_none() {
        assert_eq!(distance("master.brightnes", "master.brightness"), 1);
        assert_eq!(distance("kitten", "sitting"), 3);
        let names = ["master.brightness", "master.bpm", "fluid.speed"];
        assert_eq!(
            nearest("master.brightnes", names),
            Some("master.brightness")
        );
        assert_eq!(nearest("colony.growth", names), None);
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
