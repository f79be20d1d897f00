//! The layer kinds this build knows, each a folder exporting one
//! [`LayerKind`] description: [`KINDS`] is the one list, and the show
//! builds a preset's layers from it. The engine only knows the trait.

pub mod colony;
pub mod fluid;
pub mod forest;
pub mod shader;
pub mod skinned;

use crate::base::Assets;
use crate::engine::{Layer, LayerEnv, LayerError, LayerKind, Preset, common_params, kind_in};
use crate::params::ParamSpec;

/// The layer kinds this build knows.
pub const KINDS: [&LayerKind; 5] = [
    &shader::KIND,
    &colony::KIND,
    &fluid::KIND,
    &skinned::KIND,
    &forest::KIND,
];

/// The kind of preset id `id` (`fluid.left` is a `fluid`).
pub fn kind_of(id: &str) -> Result<&'static LayerKind, LayerError> {
    kind_in(&KINDS, id)
}

/// Builds the layer for preset id `id`.
pub fn create(id: &str, env: &LayerEnv<'_>) -> Result<Box<dyn Layer>, LayerError> {
    Ok((kind_of(id)?.create)(id, env))
}

/// Every parameter layer `id` of `preset` would declare, found without a
/// GPU (for `sylva check`): the common three and the kind's own.
pub fn declared_params(
    id: &str,
    assets: &Assets,
    preset: &Preset,
) -> Result<Vec<ParamSpec>, LayerError> {
    let kind = kind_of(id)?;
    let mut specs = common_params(id);
    specs.extend((kind.params)(id, assets, preset)?);
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::KINDS;
    use crate::base::Assets;
    use crate::engine::ENGINE_LAYOUTS;
    use crate::gpu::{GPU_LAYOUTS, layout_mismatches};
    use crate::outputs::OUTPUT_LAYOUTS;

    #[test]
    fn every_uniform_struct_matches_its_wgsl_layout() {
        let assets = Assets::new(env!("CARGO_MANIFEST_DIR"));
        let layouts: Vec<_> = GPU_LAYOUTS
            .iter()
            .chain(ENGINE_LAYOUTS)
            .chain(OUTPUT_LAYOUTS)
            .chain(KINDS.iter().flat_map(|kind| kind.layouts))
            .copied()
            .collect();
        assert!(
            layouts.len() >= 19,
            "the table lost structs: {}",
            layouts.len()
        );
        let wrong = layout_mismatches(&assets, &layouts);
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn every_kinds_handles_name_its_own_parameters() {
        let clips = ["walk".to_string()];
        let kinds = [
            (
                "colony",
                super::colony::ColonyKnobs::new("colony")
                    .check(&super::colony::colony_params("colony")),
            ),
            (
                "fluid",
                super::fluid::knobs::FluidKnobs::new("fluid")
                    .check(&super::fluid::fluid_params("fluid")),
            ),
            (
                "forest",
                super::forest::knobs::ForestKnobs::new("forest")
                    .check(&super::forest::forest_params("forest")),
            ),
            (
                "skinned",
                super::skinned::SkinnedKnobs::new("skinned")
                    .check(&super::skinned::skinned_params("skinned", Some(&clips))),
            ),
            (
                "every layer",
                crate::engine::LayerSwitches::new("shader.sky")
                    .check(&crate::engine::common_params("shader.sky")),
            ),
        ];
        for (kind, wrong) in kinds {
            assert!(wrong.is_empty(), "{kind}: {wrong:?}");
        }
        let wrong =
            super::colony::ColonyKnobs::new("colony").check(&super::fluid::fluid_params("fluid"));
        assert!(
            wrong.len() > 20,
            "another layer's names are not its own: {wrong:?}"
        );
    }
}
