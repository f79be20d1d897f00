//! `sylva asset FILE.glb [--clip N] [--time T] [--obj OUT.obj]`: what a
//! glTF file holds (meshes, joints, clips, vertex counts), and with
//! `--obj` its mesh skinned at a time of a clip by the same GPU path the
//! layer draws with, written as OBJ in the model's world space.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use glam::{Mat4, Vec3};

use super::model::Model;
use super::player::pose;
use super::pose::skin_matrices;
use super::skin_gpu::SkinGpu;
use crate::base::Assets;
use crate::base::status::ErrorLog;
use crate::gpu::{AdapterChoice, Gpu, GpuProfiler};

/// Options of `sylva asset`.
#[derive(Args, Debug, Clone)]
pub struct AssetArgs {
    /// A .glb or .gltf file.
    pub file: PathBuf,
    /// Clip to pose the mesh with, by name or number (default: the first).
    #[arg(long)]
    pub clip: Option<String>,
    /// Seconds into the clip.
    #[arg(long, default_value_t = 0.0)]
    pub time: f32,
    /// Write the mesh skinned at that time as OBJ.
    #[arg(long, value_name = "OUT.obj")]
    pub obj: Option<PathBuf>,
    /// Skin with matrices instead of bone quaternions.
    #[arg(long)]
    pub matrices: bool,
    /// Pick the GPU adapter whose name contains this text.
    #[arg(long, value_name = "NAME")]
    pub adapter: Option<String>,
}

/// Prints the summary and writes the OBJ if asked.
pub fn run(args: &AssetArgs) -> anyhow::Result<()> {
    let model = Model::load(&args.file)?;
    print!("{}", summary(&model));
    let Some(out) = &args.obj else {
        return Ok(());
    };
    let clip = match &args.clip {
        Some(name) => Some(
            model
                .clip_index(name)
                .with_context(|| format!("no clip {name:?} in {}", model.source))?,
        ),
        None => (!model.clips.is_empty()).then_some(0),
    };
    let gpu = Gpu::new(
        Gpu::instance(),
        &AdapterChoice::from_cli(args.adapter.clone()),
        None,
        ErrorLog::default(),
    )?;
    let skinned = skin_on_gpu(&gpu, &model, clip, args.time, args.matrices)?;
    std::fs::write(out, obj(&model, &skinned))
        .with_context(|| format!("writing {}", out.display()))?;
    println!(
        "wrote {}: {} vertices at {} s of {}",
        out.display(),
        skinned.len(),
        args.time,
        clip.and_then(|c| model.clips.get(c))
            .map_or("the bind pose".to_string(), |c| format!(
                "clip {:?}",
                c.name
            ))
    );
    Ok(())
}

/// Meshes, joints and clips as text.
pub fn summary(model: &Model) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "{}", model.source);
    for mesh in &model.meshes {
        let _ = writeln!(
            text,
            "  mesh {:?}: {} vertices, {} triangles{}",
            mesh.name,
            mesh.vertices,
            mesh.triangles,
            if mesh.skinned { ", skinned" } else { "" }
        );
    }
    let names: Vec<&str> = model
        .joints
        .iter()
        .map(|j| model.nodes[j.node].name.as_str())
        .collect();
    let _ = writeln!(text, "  {} joints: {}", names.len(), names.join(", "));
    for (index, clip) in model.clips.iter().enumerate() {
        let _ = writeln!(
            text,
            "  clip {index} {:?}: {:.3} s, {} channels",
            clip.name,
            clip.duration,
            clip.channels.len()
        );
    }
    let _ = writeln!(
        text,
        "  {} vertices, {} triangles in all",
        model.vertices.len(),
        model.indices.len() / 3
    );
    text
}

/// The skin transforms of `model` at `time` of `clip` (none: the rest pose).
pub fn skin_at(model: &Model, clip: Option<usize>, time: f32) -> Vec<Mat4> {
    let local = pose(model, clip.and_then(|c| model.clips.get(c)), time);
    skin_matrices(model, &local)
}

/// Skins `model` at `time` of `clip` on the GPU and reads the positions
/// and normals back (waits for the GPU).
pub fn skin_on_gpu(
    gpu: &Gpu,
    model: &Model,
    clip: Option<usize>,
    time: f32,
    matrices: bool,
) -> anyhow::Result<Vec<(Vec3, Vec3)>> {
    let mut skin = SkinGpu::new(gpu, &Assets::new("."), model)?;
    skin.write_bones(gpu, &skin_at(model, clip, time), matrices);
    let mut profiler = GpuProfiler::new(&gpu.device, &gpu.queue, false);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    skin.encode(&mut encoder, &mut profiler);
    gpu.queue.submit([encoder.finish()]);
    Ok(skin.read_skinned(gpu)?)
}

/// The skinned mesh as Wavefront OBJ: positions, normals, faces.
pub fn obj(model: &Model, skinned: &[(Vec3, Vec3)]) -> String {
    let mut text = format!("# sylva asset: {}\n", model.source);
    for (p, _) in skinned {
        let _ = writeln!(text, "v {} {} {}", p.x, p.y, p.z);
    }
    for (_, n) in skinned {
        let _ = writeln!(text, "vn {} {} {}", n.x, n.y, n.z);
    }
    for t in model.indices.chunks_exact(3) {
        let [a, b, c] = [t[0] + 1, t[1] + 1, t[2] + 1];
        let _ = writeln!(text, "f {a}//{a} {b}//{b} {c}//{c}");
    }
    text
}
