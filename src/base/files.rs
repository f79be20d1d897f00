//! The show folder and the files embedded in the binary. A file is looked up
//! first in the show folder (the current directory or `--project DIR`), so
//! a performer's own copy wins, then among the copies of `shaders/`,
//! `scripts/` and `presets/` compiled into the binary, so `sylva` runs from
//! anywhere.

use std::path::{Component, Path, PathBuf};

use include_dir::{Dir, include_dir};

use super::opener::{self, OpenError};

static SHADERS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/shaders");
static SCRIPTS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/scripts");
static PRESETS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/presets");

/// What the outputs and media folders have built in: nothing.
static NOTHING: Dir<'static> = Dir::new("", &[]);

/// The folders of a show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Folder {
    /// `shaders/`: WGSL.
    Shaders,
    /// `scripts/`: Lua.
    Scripts,
    /// `presets/`: TOML presets, playlists, mappings.
    Presets,
    /// `outputs/`: outputs files and their masks (none built in).
    Outputs,
    /// `media/`: pictures and clips (none built in).
    Media,
}

impl Folder {
    /// Every folder the show watches for saved files: one mechanism for
    /// everything a show folder holds.
    pub const WATCHED: [Folder; 5] = [
        Folder::Shaders,
        Folder::Scripts,
        Folder::Presets,
        Folder::Outputs,
        Folder::Media,
    ];

    /// The folder's name inside a show folder.
    pub fn name(self) -> &'static str {
        match self {
            Folder::Shaders => "shaders",
            Folder::Scripts => "scripts",
            Folder::Presets => "presets",
            Folder::Outputs => "outputs",
            Folder::Media => "media",
        }
    }

    fn embedded(self) -> &'static Dir<'static> {
        match self {
            Folder::Shaders => &SHADERS,
            Folder::Scripts => &SCRIPTS,
            Folder::Presets => &PRESETS,
            Folder::Outputs | Folder::Media => &NOTHING,
        }
    }
}

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum AssetError {
    /// The name tried to leave the show folder.
    #[error("{0:?} is not a name inside the show folder (no absolute paths, no `..`)")]
    OutsideShow(String),
    /// Neither the show folder nor the binary has the file.
    #[error("no file {folder}/{name} in the show folder or built in")]
    Missing {
        /// Folder name.
        folder: &'static str,
        /// File name asked for.
        name: String,
    },
    /// The file is larger than any show file should be.
    #[error("{path} is {bytes} bytes; show files may be at most {MAX_FILE_BYTES}")]
    TooLarge {
        /// Path on disk.
        path: String,
        /// Its size.
        bytes: u64,
    },
    /// The file could not be read: the system refused, or it is a link,
    /// a FIFO, a device, not text.
    #[error(transparent)]
    Refused(#[from] OpenError),
}

/// The largest shader, script, preset or mapping file read: far above any
/// hand-written file, far below what would stall a frame or fill memory.
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// A file's text and where it came from.
#[derive(Debug, Clone)]
pub struct Asset {
    /// The contents.
    pub text: String,
    /// Path on disk, or `None` for the embedded copy.
    pub path: Option<PathBuf>,
    /// The name to show in messages, e.g. `shaders/shader/sky.wgsl`.
    pub display: String,
}

/// Resolves show files: disk first, then embedded.
#[derive(Debug, Clone)]
pub struct Assets {
    root: PathBuf,
    overrides: Vec<(Folder, PathBuf)>,
}

impl Assets {
    /// Files under `root` override the embedded ones.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            overrides: Vec::new(),
        }
    }

    /// Reads `folder` from `dir` instead of `<root>/<folder>` (the
    /// `--shaders`, `--scripts` and `--presets` options).
    pub fn with_folder(mut self, folder: Folder, dir: impl Into<PathBuf>) -> Self {
        self.overrides.retain(|(f, _)| *f != folder);
        self.overrides.push((folder, dir.into()));
        self
    }

    /// The show folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory on disk whose files override `folder`'s embedded ones.
    pub fn dir(&self, folder: Folder) -> PathBuf {
        self.overrides
            .iter()
            .find(|(f, _)| *f == folder)
            .map_or_else(|| self.root.join(folder.name()), |(_, dir)| dir.clone())
    }

    /// Where [the opener](super::opener) finds `relative` of `folder`:
    /// from the show folder, as `<folder>/<relative>`, so the folder itself
    /// may not be a link either; or from a folder given on the command
    /// line (the person's own choice, opened as given).
    pub fn place(&self, folder: Folder, relative: &Path) -> (PathBuf, PathBuf) {
        match self.overrides.iter().find(|(f, _)| *f == folder) {
            Some((_, dir)) => (dir.clone(), relative.to_path_buf()),
            None => (self.root.clone(), Path::new(folder.name()).join(relative)),
        }
    }

    /// Reads `name` (relative, inside `folder`): the show's own plain file
    /// through [the opener](super::opener), else the embedded copy when the
    /// show has none. A link, a FIFO or a device in its place is an error,
    /// not a fall back.
    pub fn read(&self, folder: Folder, name: &str) -> Result<Asset, AssetError> {
        let relative = inside_show(name)?;
        let display = format!("{}/{}", folder.name(), name);
        let (dir, relative) = self.place(folder, relative);
        match opener::read_text(&dir, &relative, MAX_FILE_BYTES) {
            Ok(text) => Ok(Asset {
                text,
                path: Some(dir.join(&relative)),
                display,
            }),
            Err(error) if error.is_missing() => Self::read_embedded(folder, name),
            Err(OpenError::TooLarge { path, bytes, .. }) => {
                Err(AssetError::TooLarge { path, bytes })
            }
            Err(error) => Err(AssetError::Refused(error)),
        }
    }

    /// Reads `name` from the copies built into the binary only, whatever
    /// the show folder holds (the fallback when a show's own file fails).
    pub fn read_embedded(folder: Folder, name: &str) -> Result<Asset, AssetError> {
        let relative = inside_show(name)?;
        let display = format!("{}/{}", folder.name(), name);
        let embedded = folder
            .embedded()
            .get_file(relative)
            .and_then(|f| f.contents_utf8())
            .ok_or_else(|| AssetError::Missing {
                folder: folder.name(),
                name: name.to_string(),
            })?;
        Ok(Asset {
            text: embedded.to_string(),
            path: None,
            display,
        })
    }

    /// Names (relative to `folder`) of every file ending in `extension`,
    /// from the show folder and the binary, sorted and without repeats.
    pub fn list(&self, folder: Folder, extension: &str) -> Vec<String> {
        let mut names = Vec::new();
        collect_embedded(folder.embedded(), extension, &mut names);
        collect_disk(
            &self.root.join(folder.name()),
            Path::new(""),
            extension,
            &mut names,
        );
        names.sort();
        names.dedup();
        names
    }
}

/// Checks that `name` stays inside the show folder: relative, with no `..`,
/// root or drive component. Names from presets and the network go through
/// this before touching the disk.
pub fn inside_show(name: &str) -> Result<&Path, AssetError> {
    let path = Path::new(name);
    let plain = !name.is_empty() && path.components().all(|c| matches!(c, Component::Normal(_)));
    if plain {
        Ok(path)
    } else {
        Err(AssetError::OutsideShow(name.to_string()))
    }
}

fn collect_embedded(dir: &Dir<'_>, extension: &str, names: &mut Vec<String>) {
    for file in dir.files() {
        if file.path().extension().is_some_and(|e| e == extension) {
            names.push(file.path().to_string_lossy().replace('\\', "/"));
        }
    }
    for sub in dir.dirs() {
        collect_embedded(sub, extension, names);
    }
}

fn collect_disk(base: &Path, relative: &Path, extension: &str, names: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(base.join(relative)) else {
        return;
    };
    for entry in entries.flatten() {
        let path = relative.join(entry.file_name());
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            collect_disk(base, &path, extension, names);
        } else if path.extension().is_some_and(|e| e == extension) {
            names.push(path.to_string_lossy().replace('\\', "/"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_outside_the_show_are_refused() {
        for bad in ["../etc/passwd", "/etc/passwd", "a/../../b", "", "./x/../.."] {
            assert!(inside_show(bad).is_err(), "{bad} must be refused");
        }
        assert!(inside_show("shader/sky.wgsl").is_ok());
    }

    #[test]
    fn embedded_files_are_found_and_disk_overrides_them() {
        let dir = std::env::temp_dir().join(format!("sylva-assets-{}", std::process::id()));
        let assets = Assets::new(&dir);
        let embedded = assets.read(Folder::Presets, "default.toml");
        assert!(embedded.is_ok_and(|a| a.path.is_none()));
        std::fs::create_dir_all(dir.join("presets")).ok();
        std::fs::write(dir.join("presets/default.toml"), "layers = []").ok();
        let on_disk = assets.read(Folder::Presets, "default.toml");
        assert!(on_disk.is_ok_and(|a| a.text == "layers = []" && a.path.is_some()));
        std::fs::remove_dir_all(&dir).ok();
    }
}
