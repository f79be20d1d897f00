//! The show's outputs file: chosen by name (`--outputs NAME`), its
//! parameters registered, read again when the show's watcher says it or a
//! mask beside it was saved (a malformed file is an error on screen and the outputs stay as they
//! were), drawn after every frame, and written back by `save`. The file
//! and its masks are read through the show folder's opener (no link, FIFO
//! or device), and once the show runs on a thread of their own: a frame
//! only builds what was read.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, TryRecvError, sync_channel};
use std::time::SystemTime;

use super::Show;
use super::rendering::Rendering;
use crate::base::opener::OpenError;
use crate::base::{ChangedFile, Folder, opener};
use crate::base::{MAX_FILE_BYTES, inside_show};
use crate::outputs::dmx::DmxOut;
use crate::outputs::plan::WriteBackError;
use crate::outputs::{
    MappedOutputs, Mask, OutputsError, OutputsPlan, Pictures, output_params, read_masks,
};
use crate::params::{Source, Value};

/// The folder of outputs files in a show folder.
pub const OUTPUTS_FOLDER: &str = "outputs";

/// The outputs file in use and what was made of it.
pub(super) struct LiveOutputs {
    name: String,
    /// Where it is: the show folder and the name in it.
    root: PathBuf,
    relative: PathBuf,
    modified: Option<SystemTime>,
    /// The saved file being read.
    reading: Option<Receiver<Loaded>>,
    pub(super) mapped: Option<MappedOutputs>,
    /// Its lighting fixtures, sending.
    dmx: Option<DmxOut>,
    /// Parameters its last good plan registered.
    params: Vec<String>,
}

impl LiveOutputs {
    /// The file's name in `outputs/`, without `.toml`.
    pub(super) fn name(&self) -> &str {
        &self.name
    }
}

/// Why the outputs file could not be read, or the mapping not saved.
#[derive(Debug, thiserror::Error)]
pub enum OutputsFileError {
    /// The file could not be read.
    #[error("{file}: {error}")]
    Read {
        /// The file, as messages name it.
        file: String,
        /// Why.
        error: OpenError,
    },
    /// The file is malformed.
    #[error(transparent)]
    Plan(#[from] OutputsError),
    /// Reading it panicked.
    #[error("{0}: reading it failed")]
    Panicked(String),
    /// No thread to read it on.
    #[error("no thread to read the outputs file: {0}")]
    NoThread(std::io::Error),
    /// The thread reading it went without an answer.
    #[error("the outputs file's reader stopped")]
    ReaderStopped,
    /// A save with no outputs file in use.
    #[error("no outputs file in use (start with --outputs NAME)")]
    NoneInUse,
    /// A save before the file loaded.
    #[error("the outputs file has not loaded")]
    NotLoaded,
    /// The mapping could not be put into the file's text.
    #[error("{file}: {error}")]
    WriteBack {
        /// The file.
        file: String,
        /// Why.
        error: WriteBackError,
    },
    /// The text saved would not parse back.
    #[error("not saved, it would not load: {0}")]
    WouldNotLoad(OutputsError),
    /// The file could not be written.
    #[error("writing {file}: {error}")]
    Write {
        /// The file.
        file: String,
        /// Why.
        error: OpenError,
    },
}

/// An outputs file read and the masks it names decoded: what a frame
/// builds the outputs from.
pub(super) struct Loaded {
    plan: Result<OutputsPlan, OutputsFileError>,
    masks: Vec<Mask>,
}

/// Reads and parses `relative` under the show folder `root` (named
/// `file` in messages), through the opener.
pub fn read_outputs(
    root: &Path,
    relative: &Path,
    file: &str,
) -> Result<OutputsPlan, OutputsFileError> {
    let text = opener::read_text(root, relative, MAX_FILE_BYTES).map_err(|error| {
        OutputsFileError::Read {
            file: file.to_string(),
            error,
        }
    })?;
    Ok(OutputsPlan::parse(file, &text)?)
}

/// Reads the outputs file and decodes its masks (slow for a large mask).
fn read_loaded(root: &Path, relative: &Path, file: &str) -> Loaded {
    let read = || {
        let plan = read_outputs(root, relative, file);
        let masks = plan.as_ref().map_or(Vec::new(), |p| read_masks(root, p));
        Loaded { plan, masks }
    };
    std::panic::catch_unwind(read).unwrap_or_else(|_| Loaded {
        plan: Err(OutputsFileError::Panicked(file.to_string())),
        masks: Vec::new(),
    })
}

/// Starts [`read_loaded`] on a thread of its own.
fn read_behind(root: PathBuf, relative: PathBuf, file: String) -> Receiver<Loaded> {
    let (send, loaded) = sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("sylva outputs".into())
        .spawn(move || {
            send.send(read_loaded(&root, &relative, &file)).ok();
        });
    if let Err(error) = spawned {
        let (send, failed) = sync_channel(1);
        let plan = Err(OutputsFileError::NoThread(error));
        send.send(Loaded {
            plan,
            masks: Vec::new(),
        })
        .ok();
        return failed;
    }
    loaded
}

impl Show {
    /// Uses `outputs/NAME.toml` of the show folder from now on. A file
    /// that is missing or malformed is an error on screen (and the outputs
    /// it had stay); it is read again when saved.
    pub fn use_outputs(&mut self, name: &str) {
        let file = format!("{OUTPUTS_FOLDER}/{}.toml", name.trim_end_matches(".toml"));
        let relative = match inside_show(&file) {
            Ok(relative) => relative.to_path_buf(),
            Err(error) => {
                self.ground.errors.report("outputs", error);
                return;
            }
        };
        self.rendering.outputs = Some(LiveOutputs {
            name: name.trim_end_matches(".toml").to_string(),
            root: self.ground.assets.root().to_path_buf(),
            relative,
            modified: None,
            reading: None,
            mapped: None,
            dmx: None,
            params: Vec::new(),
        });
        self.load_outputs();
    }

    /// The outputs in use, if an outputs file is.
    pub fn outputs(&self) -> Option<&MappedOutputs> {
        self.rendering.mapped()
    }

    /// This frame's finished picture (the canvas), once a frame has run.
    pub fn picture(&self) -> Option<&crate::engine::picture::Picture> {
        self.rendering.picture.as_ref()
    }

    /// The outputs in use, to select mapping handles.
    pub fn outputs_mut(&mut self) -> Option<&mut MappedOutputs> {
        (self.rendering.outputs.as_mut()).and_then(|o| o.mapped.as_mut())
    }

    /// The outputs file's name, if one is in use.
    pub fn outputs_name(&self) -> Option<&str> {
        self.rendering.outputs.as_ref().map(LiveOutputs::name)
    }

    /// Starts reading the outputs file again, on a thread of its own,
    /// when the watcher's `changed` says it was saved and it changed since
    /// it was read or saved here (the show's own save is not read back),
    /// or that one of its masks was. A read under way is dropped for the
    /// newer one.
    pub(super) fn outputs_saved(&mut self, changed: &[ChangedFile]) {
        let Some(live) = self.rendering.outputs.as_mut() else {
            return;
        };
        let own = format!("{}.toml", live.name);
        let masks: Vec<&str> = live
            .mapped
            .iter()
            .flat_map(|m| m.outputs())
            .filter_map(|o| o.plan.mask.as_deref())
            .collect();
        let mask_saved = changed
            .iter()
            .any(|c| masks.contains(&format!("{}/{}", c.folder.name(), c.name).as_str()));
        let file_saved = changed
            .iter()
            .any(|c| c.folder == Folder::Outputs && c.name == own);
        let modified = modified(&live.root.join(&live.relative));
        if !(mask_saved || file_saved && modified != live.modified) {
            return;
        }
        live.modified = modified;
        let file = format!("{OUTPUTS_FOLDER}/{own}");
        let (root, relative) = (live.root.clone(), live.relative.clone());
        live.reading = Some(read_behind(root, relative, file));
    }

    /// Builds the outputs file once its reading thread has read it.
    pub(super) fn build_read_outputs(&mut self) {
        let Some(live) = self.rendering.outputs.as_mut() else {
            return;
        };
        let Some(reading) = &live.reading else {
            return;
        };
        let loaded = match reading.try_recv() {
            Ok(loaded) => loaded,
            Err(TryRecvError::Empty) => return,
            Err(TryRecvError::Disconnected) => Loaded {
                plan: Err(OutputsFileError::ReaderStopped),
                masks: Vec::new(),
            },
        };
        live.reading = None;
        self.build_outputs(loaded);
    }

    /// Reads the outputs file and builds its outputs at once (as the show
    /// starts).
    fn load_outputs(&mut self) {
        let Some(live) = self.rendering.outputs.as_mut() else {
            return;
        };
        live.modified = modified(&live.root.join(&live.relative));
        let file = format!("{OUTPUTS_FOLDER}/{}.toml", live.name);
        let loaded = read_loaded(&live.root, &live.relative, &file);
        self.build_outputs(loaded);
    }

    /// Builds the outputs of a file read; on failure the error is on
    /// screen and the outputs it had stay.
    fn build_outputs(&mut self, loaded: Loaded) {
        let Some(live) = self.rendering.outputs.as_mut() else {
            return;
        };
        let file = format!("{OUTPUTS_FOLDER}/{}.toml", live.name);
        let max_side = self.ground.gpu.device.limits().max_texture_dimension_2d;
        let plan = match loaded.plan.and_then(|plan| {
            plan.fit_device(max_side)?;
            Ok(plan)
        }) {
            Ok(plan) => plan,
            Err(error) => {
                self.ground.errors.report("outputs", error);
                return;
            }
        };
        let mut warnings = Vec::new();
        let built = MappedOutputs::new(
            &self.ground.gpu,
            &self.ground.assets,
            (&live.name, &plan, &loaded.masks),
            self.rendering.output_format,
            &mut warnings,
        );
        let mapped = match built {
            Ok(mapped) => mapped,
            Err(error) => {
                self.ground.errors.report("outputs", error);
                return;
            }
        };
        // The fixtures that were sending stop (without a black frame) as
        // the new ones start.
        let dmx = match DmxOut::start(
            &self.ground.gpu,
            &self.ground.assets,
            &plan.dmx,
            self.ground.errors.clone(),
        ) {
            Ok(dmx) => dmx,
            Err(error) => {
                self.ground.errors.report("outputs", error);
                return;
            }
        };
        let specs = output_params(&plan);
        let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
        let gone: Vec<String> = live
            .params
            .iter()
            .filter(|n| !names.contains(n))
            .cloned()
            .collect();
        self.registry.retain(|name| !gone.iter().any(|g| g == name));
        for spec in specs {
            let value = spec.default.clone();
            let name = spec.name.clone();
            self.registry.register(spec);
            // The file, just read, is what the mapping is now; the pattern
            // and the scale the pace guard chose are the show's, not the
            // file's.
            if name != crate::outputs::PATTERN && name != crate::outputs::SCALE {
                self.registry.set_now(&name, value, Source::Show).ok();
            }
        }
        live.params = names;
        live.mapped = Some(mapped);
        live.dmx = dmx;
        self.ground.errors.clear("outputs");
        for warning in warnings {
            self.ground.errors.report("outputs", warning);
        }
        tracing::info!(
            "outputs {file}: {}",
            (plan.outputs.iter())
                .map(|o| format!("{} {}x{}", o.name, o.size[0], o.size[1]))
                .chain(plan.dmx.iter().map(|f| format!(
                    "{} ({} pixels over {} from universe {})",
                    f.name,
                    f.layout.pixels(),
                    f.protocol.name(),
                    f.universe
                )))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }

    /// Draws each output of the outputs file from this frame's picture
    /// (before the frame's [`Output`](crate::outputs::Output)s take them).
    pub(super) fn draw_outputs(&mut self, encoder: &mut wgpu::CommandEncoder) {
        let rendering = &mut self.rendering;
        let (Some(live), Some(picture)) = (rendering.outputs.as_mut(), rendering.picture.as_ref())
        else {
            return;
        };
        if let Some(mapped) = live.mapped.as_mut() {
            mapped.deliver(
                &self.ground.gpu,
                encoder,
                &mut self.profiler,
                &self.registry,
                picture,
            );
        }
        if let Some(dmx) = live.dmx.as_mut() {
            let mapped = live.mapped.as_ref();
            let compositor = &rendering.stack.compositor;
            let view = |source: Option<&str>| match source {
                None => Some(picture.view().clone()),
                Some(name) => match name.strip_prefix(crate::outputs::dmx::LAYER) {
                    Some(layer) => (compositor.layer_target(layer))
                        .map(|texture| texture.create_view(&Default::default())),
                    None => (mapped?.outputs().iter())
                        .find(|o| o.plan.name == name)
                        .map(|o| o.target.view.clone()),
                },
            };
            dmx.record(
                &self.ground.gpu,
                encoder,
                &mut self.profiler,
                &view,
                self.clock.time,
            );
        }
    }

    /// After the frame's submit: the lighting's colours go to its sender.
    pub(super) fn lighting_submitted(&mut self) {
        if let Some(dmx) = (self.rendering.outputs.as_mut()).and_then(|o| o.dmx.as_mut()) {
            dmx.submitted();
        }
    }

    /// What the outputs file's lighting sends, for the HUD.
    pub fn lighting_status(&self) -> Option<String> {
        let live = self.rendering.outputs.as_ref()?;
        live.dmx.as_ref().map(DmxOut::status)
    }

    /// The end of the show: the fixtures sent black; what was sent.
    pub fn finish_lighting(&mut self) -> Option<String> {
        let live = self.rendering.outputs.as_mut()?;
        live.dmx.as_mut()?.finish()
    }

    /// Writes the mapping as it is now back into the outputs file (and
    /// nothing else), keeping the file's comments and layout.
    pub fn save_outputs(&mut self) -> Result<String, OutputsFileError> {
        let live = (self.rendering.outputs.as_mut()).ok_or(OutputsFileError::NoneInUse)?;
        let mapped = live.mapped.as_ref().ok_or(OutputsFileError::NotLoaded)?;
        let file = format!("{OUTPUTS_FOLDER}/{}.toml", live.name);
        let text =
            opener::read_text(&live.root, &live.relative, MAX_FILE_BYTES).map_err(|error| {
                OutputsFileError::Read {
                    file: file.clone(),
                    error,
                }
            })?;
        let plan = OutputsPlan {
            file: file.clone(),
            outputs: mapped.current(&self.registry),
            dmx: Vec::new(),
            canvas: mapped.canvas(),
        };
        let written = plan
            .write_back(&text)
            .map_err(|error| OutputsFileError::WriteBack {
                file: file.clone(),
                error,
            })?;
        OutputsPlan::parse(&file, &written).map_err(OutputsFileError::WouldNotLoad)?;
        // A new temporary file renamed over it, no link followed: a planted
        // `.partial` or a link in the file's place cannot aim the write
        // outside the show folder.
        let path = opener::write(&live.root, &live.relative, written.as_bytes(), false).map_err(
            |error| OutputsFileError::Write {
                file: file.clone(),
                error,
            },
        )?;
        live.modified = modified(&path);
        tracing::info!("mapping saved to {file}");
        Ok(file)
    }

    /// Shows or hides the alignment pattern on every output.
    pub fn show_pattern(&mut self, on: bool) {
        self.registry
            .set(crate::outputs::PATTERN, Value::Bool(on), Source::Ui)
            .ok();
    }
}

/// When the file at `path` was last written (not following a link).
fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
}

impl Rendering {
    /// The outputs in use, if an outputs file is and has loaded.
    pub(super) fn mapped(&self) -> Option<&MappedOutputs> {
        self.outputs.as_ref().and_then(|o| o.mapped.as_ref())
    }

    /// The pictures of a frame, once one has run: the canvas and each
    /// output of the outputs file, at show time `time`.
    pub(super) fn pictures(&self, time: f64) -> Option<Pictures<'_>> {
        let outputs = self
            .mapped()
            .map(MappedOutputs::outputs)
            .unwrap_or_default()
            .iter()
            .map(|o| (o.plan.name.as_str(), &o.target))
            .collect();
        Some(Pictures {
            canvas: self.picture.as_ref()?,
            outputs,
            time,
        })
    }
}
