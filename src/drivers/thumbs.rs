//! `sylva thumbs`: a picture of each preset, rendered headless as `sylva
//! render` renders (deterministic, the presets' pinned counts), a few
//! seconds into it, kept as `presets/thumbs/NAME.png`: the phone page
//! shows it on the preset's button.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::headless::{RenderOptions, render};
use crate::base::Folder;
use crate::show::ShowOptions;
use crate::show::THUMBS_FOLDER;

/// What to render.
#[derive(Debug, Clone)]
pub struct ThumbsOptions {
    /// The show (its folders, adapter and seed); its preset is replaced by
    /// each one in turn.
    pub show: ShowOptions,
    /// The presets to picture; empty: every preset in the presets folder.
    pub presets: Vec<String>,
    /// Seconds of show time before the picture is taken.
    pub at: f32,
    /// Frames a second played until then.
    pub fps: f32,
    /// The picture's size.
    pub size: [u32; 2],
}

/// Renders each preset's thumbnail and returns the files written; a
/// preset that fails to render is an error (after the others are done),
/// so a broken one never keeps a stale picture unnoticed.
pub fn thumbs(options: &ThumbsOptions) -> anyhow::Result<Vec<PathBuf>> {
    let folder = presets_folder(&options.show);
    let names = if options.presets.is_empty() {
        presets_in(&folder)?
    } else {
        options.presets.clone()
    };
    let out = folder.join(THUMBS_FOLDER);
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let frames = ((options.at * options.fps).round() as u32).max(1);
    let mut written = Vec::new();
    let mut failed = Vec::new();
    for name in names {
        match picture(options, &name, frames, &out) {
            Ok(file) => {
                println!("{}", file.display());
                written.push(file);
            }
            Err(error) => {
                eprintln!("{name}: {error:#}");
                failed.push(name);
            }
        }
    }
    anyhow::ensure!(failed.is_empty(), "no thumbnail for {}", failed.join(", "));
    Ok(written)
}

/// Renders `name` for `frames` frames and keeps the last as `out/NAME.png`.
fn picture(
    options: &ThumbsOptions,
    name: &str,
    frames: u32,
    out: &Path,
) -> anyhow::Result<PathBuf> {
    let scratch = std::env::temp_dir().join(format!("sylva-thumbs-{}-{name}", std::process::id()));
    let show = ShowOptions {
        preset: name.to_string(),
        playlist: None,
        script: None,
        default_show: false,
        ..options.show.clone()
    };
    let rendered = render(&RenderOptions {
        show,
        frames: Some(frames),
        size: options.size,
        out: Some(scratch.clone()),
        fps: options.fps,
        every: frames,
        video: None,
    });
    let last = scratch.join(format!("frame_{:05}.png", frames - 1));
    let file = out.join(format!("{name}.png"));
    let kept = rendered.and_then(|()| {
        std::fs::copy(&last, &file)
            .map(|_| ())
            .with_context(|| format!("keeping {} as {}", last.display(), file.display()))
    });
    std::fs::remove_dir_all(&scratch).ok();
    kept.map(|()| file)
}

/// The presets folder the show reads: a `--presets` folder, else the
/// show folder's own.
fn presets_folder(show: &ShowOptions) -> PathBuf {
    show.folders
        .iter()
        .find(|(folder, _)| *folder == Folder::Presets)
        .map(|(_, dir)| dir.clone())
        .unwrap_or_else(|| show.project.join("presets"))
}

/// The presets in `folder` (its `.toml` files, not its playlists or
/// mappings), by name.
fn presets_in(folder: &Path) -> anyhow::Result<Vec<String>> {
    let entries =
        std::fs::read_dir(folder).with_context(|| format!("listing {}", folder.display()))?;
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().to_string();
            name.strip_suffix(".toml").map(str::to_string)
        })
        .collect();
    names.sort();
    Ok(names)
}
