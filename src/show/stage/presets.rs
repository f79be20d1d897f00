//! The show loading presets (staged off the registry while their layers
//! read their files off the frame thread, validated, then swapped in with
//! a crossfade) and saving the running show as one.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use super::*;
use crate::base::MAX_FILE_BYTES;
use crate::base::opener;
use crate::engine::Preset;
use crate::layers;
use crate::params::Source;
use crate::show::save_name;

/// A preset on its way to the stage: its layers read and translate their
/// files off the frame thread (a shader importing an 8192² picture took
/// 1.5 s) while the running show plays on; it comes on stage with the
/// first frame that finds every layer's files in.
pub(super) struct Staging {
    name: String,
    preset: Preset,
    layers: Vec<Box<dyn Layer>>,
    registry: Registry,
    layer_params: HashMap<String, Vec<String>>,
    fade: Option<f32>,
    since: Instant,
}

/// Whether a load waits for its preset's layers or lets the show play on.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Arrival {
    /// Before this call returns (a start, a render, a resume, a person's
    /// command line): the next frame is the preset's.
    Now,
    /// With a later frame (the network, a script, a playlist, a save).
    WhenReady,
}

impl Show {
    /// Loads preset `name` (`presets/<name>.toml`) from the show folder or
    /// the binary, or a `.toml` file at any path a person typed.
    pub fn load_preset(&mut self, name: &str) -> Result<(), PresetError> {
        let (file, text) = read_preset(&self.ground.assets, name, true)?;
        let preset = Preset::parse(&file, &text)?;
        self.apply_preset(name, &preset)
    }

    /// Loads a preset named by a script or the network: only names inside
    /// the show folder's presets. It comes on stage once its files are
    /// read (a render's, at once).
    pub fn load_show_preset(&mut self, name: &str) -> Result<(), PresetError> {
        self.load_show_preset_fading(name, None)
    }

    /// The same, crossfading over `fade` seconds (else `master.crossfade`).
    pub fn load_show_preset_fading(
        &mut self,
        name: &str,
        fade: Option<f32>,
    ) -> Result<(), PresetError> {
        // A render waits, to stay the same frame for frame; so does a show
        // with nothing on stage, which has nothing to play meanwhile.
        let arrival = if self.ground.world.exact() || self.rendering.stack.layers.is_empty() {
            Arrival::Now
        } else {
            Arrival::WhenReady
        };
        self.load_show_preset_arriving(name, fade, arrival)
    }

    /// The same, arriving as `arrival` says.
    pub(crate) fn load_show_preset_arriving(
        &mut self,
        name: &str,
        fade: Option<f32>,
        arrival: Arrival,
    ) -> Result<(), PresetError> {
        let (file, text) = read_preset(&self.ground.assets, name, false)?;
        let preset = Preset::parse(&file, &text)?;
        self.stage(name, &preset, fade)?;
        match arrival {
            Arrival::Now => self.arrive_now(),
            Arrival::WhenReady => Ok(()),
        }
    }

    /// Builds the preset's layers and parameter values aside and swaps them
    /// in only if all of it holds; on any error the running show is
    /// untouched. With `master.crossfade` above 0 the stack on stage keeps
    /// running and fades out over that many seconds while the new one
    /// takes the stage (and every control); else the new one cuts in.
    pub fn apply_preset(&mut self, name: &str, preset: &Preset) -> Result<(), PresetError> {
        self.apply_preset_fading(name, preset, None)
    }

    /// The same, crossfading over `fade` seconds (else `master.crossfade`).
    /// During a fade every continuous parameter the two presets share
    /// glides from its value on stage to the new preset's, in step with
    /// the pictures.
    pub fn apply_preset_fading(
        &mut self,
        name: &str,
        preset: &Preset,
        fade: Option<f32>,
    ) -> Result<(), PresetError> {
        self.stage(name, preset, fade)?;
        self.arrive_now()
    }

    /// Starts staging `preset`, in place of one still on its way.
    fn stage(&mut self, name: &str, preset: &Preset, fade: Option<f32>) -> Result<(), PresetError> {
        let (layers, registry, layer_params) = self.stage_preset(preset)?;
        if let Some(overtaken) = self.presets.staging.take() {
            tracing::info!(
                "preset {} overtaken by {name} before it came on",
                overtaken.name
            );
        }
        self.presets.staging = Some(Staging {
            name: name.to_string(),
            preset: preset.clone(),
            layers,
            registry,
            layer_params,
            fade,
            since: Instant::now(),
        });
        Ok(())
    }

    /// Waits for the staged preset's layers and brings it on.
    fn arrive_now(&mut self) -> Result<(), PresetError> {
        while !self.staged_ready() {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.bring_on_staged()
    }

    /// Each frame: brings the staged preset on once its layers are ready;
    /// a preset that fails then is reported, and the show plays on.
    pub(super) fn advance_staging(&mut self) {
        if self.staged_ready()
            && let Err(error) = self.bring_on_staged()
        {
            self.ground.errors.report("preset", error.to_string());
        }
    }

    /// Whether every layer of the staged preset has its files in (false
    /// with nothing staged).
    fn staged_ready(&mut self) -> bool {
        let env = self.ground.env();
        let clock = &self.clock;
        self.presets.staging.as_mut().is_some_and(|staging| {
            // Every layer takes in what it has, not only up to the first
            // that is still waiting.
            let registry = &staging.registry;
            let settled: Vec<bool> = (staging.layers.iter_mut())
                .map(|l| l.settled(&env, registry, clock))
                .collect();
            settled.iter().all(|one| *one)
        })
    }

    /// Puts the staged preset on stage, its values applied to the
    /// parameters its layers declared, cutting or crossfading.
    fn bring_on_staged(&mut self) -> Result<(), PresetError> {
        let Some(staging) = self.presets.staging.take() else {
            return Ok(());
        };
        let Staging {
            name,
            preset,
            layers,
            mut registry,
            mut layer_params,
            fade,
            since,
        } = staging;
        for layer in &layers {
            sync_params(layer.as_ref(), &mut registry, &mut layer_params);
        }
        // What the performer did to the show's own section while the
        // preset was on its way, unless the preset sets it.
        carry_show_wide(&self.registry, &mut registry);
        preset.apply(&mut registry)?;
        let seconds = fade
            .unwrap_or_else(|| self.registry.float("master.crossfade"))
            .clamp(0.0, 600.0);
        let rendering = &mut self.rendering;
        let fading = seconds > 0.0 && !rendering.stack.layers.is_empty();
        let compositor = if fading {
            rendering.fresh_compositor(&self.ground)
        } else {
            None
        };
        rendering.end_crossfade();
        let fading = match compositor {
            Some(compositor) => {
                glide_shared(&self.registry, &mut registry, seconds);
                let staged = Stack::with_layers(layers, layer_params, compositor);
                rendering.outgoing = Some(Outgoing {
                    stack: std::mem::replace(&mut rendering.stack, staged),
                    registry: std::mem::replace(&mut self.registry, registry),
                    seconds,
                    elapsed: 0.0,
                });
                true
            }
            None => {
                rendering.stack.replace_layers(layers, layer_params);
                self.registry = registry;
                false
            }
        };
        self.presets.running = Some(name.clone());
        self.presets.loaded += 1;
        self.presets.own_mappings = preset.mappings.clone();
        self.presets.load_mappings(&self.ground);
        tracing::info!(
            "preset {name} loaded in {:.0} ms: {} layers{}",
            since.elapsed().as_secs_f64() * 1e3,
            self.rendering.stack.layers.len(),
            if fading {
                format!(", crossfading over {seconds} s")
            } else {
                String::new()
            }
        );
        self.start_script(preset.script.as_deref());
        self.dispatch(&ScriptEvent::Preset(name));
        Ok(())
    }

    #[allow(clippy::type_complexity, reason = "the three parts of a staged show")]
    pub(super) fn stage_preset(
        &self,
        preset: &Preset,
    ) -> Result<(Vec<Box<dyn Layer>>, Registry, HashMap<String, Vec<String>>), PresetError> {
        let env = self.ground.env();
        // The master section belongs to the performer, not the preset: it
        // keeps its values unless the preset sets them; the audio section
        // belongs to the sound.
        let mut registry = Registry::new();
        carry_show_wide(&self.registry, &mut registry);
        // The scene's camera belongs to the preset (and glides from the
        // last one's in a crossfade, as layer parameters do).
        for spec in crate::engine::world::scene_params() {
            registry.register(spec);
        }
        let mut layers = Vec::new();
        for (id, line) in &preset.layers {
            let layer = layers::create(id, &env).map_err(|e| PresetError {
                file: preset.file.clone(),
                line: *line,
                message: e.to_string(),
            })?;
            layers.push(layer);
        }
        let mut layer_params = HashMap::new();
        // Values first reach parameters that exist before the layers load
        // their files (`shader.x.file`), then the ones those files declare.
        for layer in &layers {
            sync_params(layer.as_ref(), &mut registry, &mut layer_params);
        }
        apply_known(preset, &mut registry)?;
        for layer in layers.iter_mut() {
            layer.declare(&env, &registry, &self.clock);
            sync_params(layer.as_ref(), &mut registry, &mut layer_params);
        }
        Ok((layers, registry, layer_params))
    }

    /// Saves the running show under a name that came from the network, a
    /// controller or a script: a plain name (no folders, so never a mapping
    /// file), a bounded number of presets in the folder, and only text
    /// that loads back into this show (so a save can never leave a preset,
    /// `default` included, that fails at the next start).
    pub(super) fn save_show_preset(&mut self, name: &str) -> Result<(), SaveError> {
        save_name::check(name)?;
        let exists = self
            .ground
            .assets
            .dir(Folder::Presets)
            .join(format!("{name}.toml"))
            .is_file();
        let saved = self
            .ground
            .assets
            .list(Folder::Presets, "toml")
            .iter()
            .filter(|f| !f.contains('/'))
            .count();
        if !exists && saved >= MAX_SAVED_PRESETS {
            return Err(SaveError::Full {
                name: name.to_string(),
                saved,
            });
        }
        let text = self.preset_text()?;
        let preset = Preset::parse(&format!("presets/{name}.toml"), &text)?;
        crate::show::check::preset_holds(&self.ground.assets, &preset)?;
        self.write_preset(name, &text)
    }

    /// Writes the running layers and every parameter's value (but the
    /// master section's) as `presets/<name>.toml` in the show folder; the
    /// name is the performer's own (the HUD, tests), checked to stay inside.
    pub fn save_preset(&mut self, name: &str) -> Result<(), SaveError> {
        let file = format!("{name}.toml");
        crate::base::inside_show(&file)?;
        let text = self.preset_text()?;
        self.write_preset(name, &text)
    }

    /// The running show as preset text.
    pub(super) fn preset_text(&self) -> Result<String, SaveError> {
        let mut table = toml::Table::new();
        let layers = self
            .rendering
            .stack
            .layers
            .iter()
            .map(|l| toml::Value::String(l.id().to_string()))
            .collect();
        table.insert("layers".into(), toml::Value::Array(layers));
        if let Some(script) = self.script.host.file().strip_suffix(".lua") {
            table.insert(
                "script".into(),
                toml::Value::String(format!("scripts/{script}.lua")),
            );
        }
        let mut params = toml::Table::new();
        for (spec, _) in self.registry.iter().filter(|(s, _)| !show_wide(&s.name)) {
            if let Some(value) = self.registry.target(&spec.name) {
                params.insert(spec.name.clone(), crate::engine::toml_of(spec, value));
            }
        }
        table.insert("params".into(), toml::Value::Table(params));
        Ok(toml::to_string_pretty(&table)?)
    }

    pub(super) fn write_preset(&self, name: &str, text: &str) -> Result<(), SaveError> {
        // Through the opener: a link planted as the preset (or a folder on
        // its way) is refused, never written through.
        let file = format!("{name}.toml");
        let (dir, relative) = self.ground.assets.place(Folder::Presets, Path::new(&file));
        let path = opener::write(&dir, &relative, text.as_bytes(), false)?;
        tracing::info!("preset saved to {}", path.display());
        Ok(())
    }

    /// How many presets have been loaded since the show started.
    pub fn presets_loaded(&self) -> u64 {
        self.presets.loaded
    }

    /// The preset now running.
    pub fn preset(&self) -> Option<&str> {
        self.presets.running.as_deref()
    }

    /// The preset on its way to the stage, its layers still reading their
    /// files, if any.
    pub fn arriving(&self) -> Option<&str> {
        (self.presets.staging.as_ref()).map(|staging| staging.name.as_str())
    }
}

/// Starts every continuous parameter `incoming` shares with `outgoing` (but
/// the master section, which carries over) at the outgoing value and
/// glides it to its own over `seconds`.
fn glide_shared(outgoing: &Registry, incoming: &mut Registry, seconds: f32) {
    let shared: Vec<(String, crate::params::Value, crate::params::Value)> = incoming
        .iter()
        .filter(|(spec, _)| spec.kind.is_continuous() && !show_wide(&spec.name))
        .filter_map(|(spec, _)| {
            let from = outgoing.get(&spec.name)?.clone();
            let to = incoming.target(&spec.name)?.clone();
            (from != to).then(|| (spec.name.clone(), from, to))
        })
        .collect();
    for (name, from, to) in shared {
        // A value the new spec refuses (another range) just cuts.
        let glides = incoming.set_now(&name, from, Source::Show).is_ok()
            && incoming
                .ramp(
                    &name,
                    to.clone(),
                    seconds,
                    crate::params::Easing::Smooth,
                    Source::Show,
                )
                .is_ok();
        if !glides {
            tracing::debug!("{name} cuts to {to} instead of gliding");
        }
    }
}

/// Registers `from`'s show-wide parameters (see [`show_wide`]) in `to`
/// at their values now.
fn carry_show_wide(from: &Registry, to: &mut Registry) {
    for (spec, value) in from.iter().filter(|(s, _)| show_wide(&s.name)) {
        if !to.contains(&spec.name) {
            to.register(spec.clone());
        }
        to.set_now(&spec.name, value.clone(), Source::Show).ok();
    }
}

/// Whether a parameter belongs to the show rather than its preset: the
/// master and audio sections, the outputs' mapping and the recording
/// switch carry over from preset to preset and are not saved in one.
fn show_wide(name: &str) -> bool {
    ["master.", "audio.", "output.", "outputs.", "record."]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// Applies the preset values whose parameters exist already; the others
/// are checked once the layers have declared theirs.
fn apply_known(preset: &Preset, registry: &mut Registry) -> Result<(), PresetError> {
    let known = Preset {
        params: preset
            .params
            .iter()
            .filter(|p| registry.contains(&p.name))
            .cloned()
            .collect(),
        ..preset.clone()
    };
    known.apply(registry)
}

/// Reads a preset by name from the show, or, when `typed_by_person`, by
/// path when it ends in `.toml` and exists on disk.
fn read_preset(
    assets: &Assets,
    name: &str,
    typed_by_person: bool,
) -> Result<(String, String), PresetError> {
    let fail = |message: String| PresetError {
        file: name.to_string(),
        line: 1,
        message,
    };
    let path = std::path::Path::new(name);
    if typed_by_person && name.ends_with(".toml") && path.is_file() {
        let bytes = opener::read_typed(path, MAX_FILE_BYTES).map_err(|e| fail(e.to_string()))?;
        let text = String::from_utf8(bytes).map_err(|_| fail("not UTF-8 text".into()))?;
        return Ok((name.to_string(), text));
    }
    let file = if name.ends_with(".toml") {
        name.to_string()
    } else {
        format!("{name}.toml")
    };
    let asset = assets
        .read(Folder::Presets, &file)
        .map_err(|e| fail(e.to_string()))?;
    Ok((asset.display, asset.text))
}
