//! The show's outputs file: chosen by name (`--outputs NAME`), its
//! parameters registered, read again within a second of being saved (a
//! malformed file is an error on screen and the outputs stay as they
//! were), drawn after every frame, and written back by `save`.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use super::Show;
use crate::base::{MAX_FILE_BYTES, inside_show};
use crate::engine::outputs::{MappedOutputs, OutputsPlan, output_params};
use crate::params::{Source, Value};

/// How often the outputs file is looked at for a save.
const RECHECK: Duration = Duration::from_secs(1);

/// The folder of outputs files in a show folder.
pub const OUTPUTS_FOLDER: &str = "outputs";

/// The outputs file in use and what was made of it.
pub(super) struct LiveOutputs {
    name: String,
    path: PathBuf,
    modified: Option<SystemTime>,
    checked: Instant,
    mapped: Option<MappedOutputs>,
    /// Parameters its last good plan registered.
    params: Vec<String>,
}

impl LiveOutputs {
    /// The file's name in `outputs/`, without `.toml`.
    pub(super) fn name(&self) -> &str {
        &self.name
    }
}

/// Reads and parses `path`, named `file` in messages.
pub fn read_outputs(path: &std::path::Path, file: &str) -> Result<OutputsPlan, String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("{file}: {e}"))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(format!(
            "{file}: {size} bytes, over the {MAX_FILE_BYTES} a show file may have"
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: {e}"))?;
    OutputsPlan::parse(file, &text).map_err(|e| e.to_string())
}

impl Show {
    /// Uses `outputs/NAME.toml` of the show folder from now on. A file
    /// that is missing or malformed is an error on screen (and the outputs
    /// it had stay); it is read again when saved.
    pub fn use_outputs(&mut self, name: &str) {
        let file = format!("{OUTPUTS_FOLDER}/{}.toml", name.trim_end_matches(".toml"));
        let path = match inside_show(&file) {
            Ok(relative) => self.assets.root().join(relative),
            Err(error) => {
                self.errors.report("outputs", error);
                return;
            }
        };
        self.outputs = Some(LiveOutputs {
            name: name.trim_end_matches(".toml").to_string(),
            path,
            modified: None,
            checked: Instant::now(),
            mapped: None,
            params: Vec::new(),
        });
        self.load_outputs();
    }

    /// The outputs in use, if an outputs file is.
    pub fn outputs(&self) -> Option<&MappedOutputs> {
        self.outputs.as_ref().and_then(|o| o.mapped.as_ref())
    }

    /// This frame's finished picture (the canvas), once a frame has run.
    pub fn picture(&self) -> Option<&crate::engine::outputs::Picture> {
        self.picture.as_ref()
    }

    /// The outputs in use, to select mapping handles.
    pub fn outputs_mut(&mut self) -> Option<&mut MappedOutputs> {
        self.outputs.as_mut().and_then(|o| o.mapped.as_mut())
    }

    /// The outputs file's name, if one is in use.
    pub fn outputs_name(&self) -> Option<&str> {
        self.outputs.as_ref().map(LiveOutputs::name)
    }

    /// Reads the outputs file again if it was saved since.
    pub(super) fn reload_saved_outputs(&mut self) {
        let Some(live) = self.outputs.as_mut() else {
            return;
        };
        if live.checked.elapsed() < RECHECK {
            return;
        }
        live.checked = Instant::now();
        let modified = std::fs::metadata(&live.path)
            .and_then(|m| m.modified())
            .ok();
        if modified != live.modified {
            self.load_outputs();
        }
    }

    /// Reads the outputs file and builds its outputs; on failure the error
    /// is on screen and the outputs it had stay.
    fn load_outputs(&mut self) {
        let Some(live) = self.outputs.as_mut() else {
            return;
        };
        live.modified = std::fs::metadata(&live.path)
            .and_then(|m| m.modified())
            .ok();
        let file = format!("{OUTPUTS_FOLDER}/{}.toml", live.name);
        let plan = match read_outputs(&live.path, &file) {
            Ok(plan) => plan,
            Err(error) => {
                self.errors.report("outputs", error);
                return;
            }
        };
        let mut warnings = Vec::new();
        let built = MappedOutputs::new(
            &self.gpu,
            &self.assets,
            (&live.name, &plan),
            self.output_format,
            &mut warnings,
        );
        let mapped = match built {
            Ok(mapped) => mapped,
            Err(error) => {
                self.errors.report("outputs", error);
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
            // The file, just read, is what the mapping is now.
            if name != crate::engine::outputs::PATTERN {
                self.registry.set_now(&name, value, Source::Show).ok();
            }
        }
        live.params = names;
        live.mapped = Some(mapped);
        self.errors.clear("outputs");
        for warning in warnings {
            self.errors.report("outputs", warning);
        }
        tracing::info!(
            "outputs {file}: {}",
            plan.outputs
                .iter()
                .map(|o| format!("{} {}x{}", o.name, o.size[0], o.size[1]))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }

    /// Draws every output from this frame's picture.
    pub(super) fn deliver_outputs(&mut self, encoder: &mut wgpu::CommandEncoder) {
        let (Some(live), Some(picture)) = (self.outputs.as_mut(), self.picture.as_ref()) else {
            return;
        };
        if let Some(mapped) = live.mapped.as_mut() {
            mapped.deliver(
                &self.gpu,
                encoder,
                &mut self.profiler,
                &self.registry,
                picture,
            );
        }
    }

    /// Writes the mapping as it is now back into the outputs file (and
    /// nothing else), keeping the file's comments and layout.
    pub fn save_outputs(&mut self) -> Result<String, String> {
        let live = self
            .outputs
            .as_mut()
            .ok_or("no outputs file in use (start with --outputs NAME)")?;
        let mapped = live
            .mapped
            .as_ref()
            .ok_or("the outputs file has not loaded")?;
        let file = format!("{OUTPUTS_FOLDER}/{}.toml", live.name);
        let text = std::fs::read_to_string(&live.path).map_err(|e| format!("{file}: {e}"))?;
        let plan = OutputsPlan {
            file: file.clone(),
            outputs: mapped.current(&self.registry),
        };
        let written = plan.write_back(&text).map_err(|e| format!("{file}: {e}"))?;
        OutputsPlan::parse(&file, &written)
            .map_err(|e| format!("not saved, it would not load: {e}"))?;
        let partial = live.path.with_extension("toml.partial");
        std::fs::write(&partial, &written)
            .and_then(|()| std::fs::rename(&partial, &live.path))
            .map_err(|e| format!("writing {file}: {e}"))?;
        live.modified = std::fs::metadata(&live.path)
            .and_then(|m| m.modified())
            .ok();
        tracing::info!("mapping saved to {file}");
        Ok(file)
    }

    /// Shows or hides the alignment pattern on every output.
    pub fn show_pattern(&mut self, on: bool) {
        self.registry
            .set(crate::engine::outputs::PATTERN, Value::Bool(on), Source::Ui)
            .ok();
    }
}
