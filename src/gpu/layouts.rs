//! Every `#[repr(C)]` struct the CPU uploads, held against the WGSL struct
//! that reads it, as naga lays it out: one table, so a field added on one
//! side only fails here rather than as garbage on screen.

use std::mem::size_of;

use super::wgsl::{Composer, struct_size};
use crate::show::Assets;

/// (Rust type, its size, the shader file that declares or includes the
/// WGSL struct, the struct's name).
fn table() -> Vec<(&'static str, usize, &'static str, &'static str)> {
    use crate::compositor::{BlendUniforms, MasterUniforms};
    use crate::frame::FrameUniforms;
    use crate::gpu::grid_sort::GridUniform;
    use crate::layers::camera::CameraUniform;
    use crate::layers::colony::draw::DrawParams;
    use crate::layers::colony::sim::{NodeInfo, StepParams};
    use crate::layers::fluid::draw::{ParticleDraw, SurfaceUniform};
    use crate::layers::fluid::sim::FluidParams;
    use crate::layers::forest::sim::{ForestParams, Tree};
    use crate::layers::forest::species::SpeciesGpu;
    use crate::layers::skinned::AttractionBones;
    use crate::layers::skinned::body::BodyParams;
    use crate::layers::skinned::pose::Bone;
    use crate::layers::skinned::skin_gpu::{BindVertex, SkinParams};
    vec![
        (
            "FrameUniforms",
            size_of::<FrameUniforms>(),
            "common/frame.wgsl",
            "Frame",
        ),
        (
            "CameraUniform",
            size_of::<CameraUniform>(),
            "common/camera.wgsl",
            "Camera",
        ),
        (
            "GridUniform",
            size_of::<GridUniform>(),
            "common/grid_sort.wgsl",
            "Grid",
        ),
        (
            "BlendUniforms",
            size_of::<BlendUniforms>(),
            "compositor/blend.wgsl",
            "Blend",
        ),
        (
            "MasterUniforms",
            size_of::<MasterUniforms>(),
            "compositor/master.wgsl",
            "Master",
        ),
        (
            "StepParams",
            size_of::<StepParams>(),
            "colony/step.wgsl",
            "ColonyParams",
        ),
        (
            "NodeInfo",
            size_of::<NodeInfo>(),
            "colony/step.wgsl",
            "NodeInfo",
        ),
        (
            "DrawParams",
            size_of::<DrawParams>(),
            "colony/draw.wgsl",
            "DrawParams",
        ),
        (
            "FluidParams",
            size_of::<FluidParams>(),
            "fluid/integrate.wgsl",
            "FluidParams",
        ),
        (
            "ParticleDraw",
            size_of::<ParticleDraw>(),
            "fluid/particles.wgsl",
            "ParticleDraw",
        ),
        (
            "SurfaceUniform",
            size_of::<SurfaceUniform>(),
            "fluid/surface.wgsl",
            "Surface",
        ),
        ("Bone", size_of::<Bone>(), "skinned/skin.wgsl", "Bone"),
        (
            "ForestParams",
            size_of::<ForestParams>(),
            "forest/step.wgsl",
            "ForestParams",
        ),
        (
            "SpeciesGpu",
            size_of::<SpeciesGpu>(),
            "forest/step.wgsl",
            "Species",
        ),
        ("Tree", size_of::<Tree>(), "forest/step.wgsl", "Tree"),
        (
            "SkinParams",
            size_of::<SkinParams>(),
            "skinned/skin.wgsl",
            "SkinParams",
        ),
        (
            "BindVertex",
            size_of::<BindVertex>(),
            "skinned/skin.wgsl",
            "BindVertex",
        ),
        (
            "AttractionBones",
            size_of::<AttractionBones>(),
            "skinned/skin.wgsl",
            "AttractionBones",
        ),
        (
            "BodyParams",
            size_of::<BodyParams>(),
            "skinned/body.wgsl",
            "BodyParams",
        ),
    ]
}

#[test]
fn every_uniform_struct_matches_its_wgsl_layout() {
    let assets = Assets::new(env!("CARGO_MANIFEST_DIR"));
    let mut wrong = Vec::new();
    for (rust, size, file, wgsl) in table() {
        let module = Composer::new(&assets)
            .file(file)
            .and_then(|c| c.finish())
            .and_then(|c| c.validate());
        let module = module.unwrap_or_else(|e| panic!("{file}: {e}"));
        let expected = struct_size(&module, wgsl);
        if expected != Some(size as u32) {
            wrong.push(format!(
                "{rust}: {size} bytes; {file} struct {wgsl}: {expected:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
