//! The show carrying out [`Command`]s: parameter writes at once, heavy
//! requests (preset loads, saves, reseeds) once at the start of the next
//! frame, and the commands a script queued after its call.

use super::*;
use crate::command::Command;
use crate::mapping;

impl Show {
    /// Passes an event to the script and applies what it asks.
    pub fn dispatch(&mut self, event: &ScriptEvent) {
        self.script
            .host
            .dispatch(event, &self.registry, &self.clock);
        self.apply_script_commands();
    }

    /// Carries out `command`, the one way Lua, MIDI, OSC, keys and the HUD
    /// change the show. Parameter writes apply now; presets, saves and
    /// reseeds are queued for the start of the next frame.
    pub fn apply(&mut self, command: Command) -> Result<(), CommandError> {
        match command {
            Command::Set(name, value, source) => {
                self.registry.set(&name, value, source)?;
                Ok(())
            }
            Command::Ramp(name, value, seconds, easing, source) => {
                self.registry.ramp(&name, value, seconds, easing, source)?;
                Ok(())
            }
            Command::LoadPreset(name, fade) => {
                self.requests.pending.load = Some((name, fade));
                Ok(())
            }
            Command::SavePreset(name) => {
                self.requests.pending.save = Some(name);
                Ok(())
            }
            Command::Reseed(layer) => {
                if self.rendering.stack.layers.iter().any(|l| l.id() == layer) {
                    self.requests.pending.reseed.insert(layer);
                    Ok(())
                } else {
                    Err(CommandError::NoLayer(layer))
                }
            }
            Command::ReseedAll => {
                self.requests.pending.reseed_all = true;
                Ok(())
            }
            Command::Learn(param) => {
                if !self.registry.contains(&param) {
                    return Err(CommandError::NoParam(param));
                }
                self.requests.pending.learn = Some(param);
                Ok(())
            }
            Command::RestartBeat => {
                self.clock.beats = 0.0;
                Ok(())
            }
            Command::Timeline(name) => self.play_timeline(name),
            Command::Timecode(source, timecode, at) => {
                self.timecode_heard(source, timecode, at);
                Ok(())
            }
            Command::StepPreset(forward) => {
                let next = mapping::files::step_preset(&self.ground.assets, self.preset(), forward)
                    .ok_or(CommandError::NoPresets)?;
                self.requests.pending.load = Some((next, None));
                Ok(())
            }
            Command::KeepLearned(mapping) => {
                let file = mapping::files::save_learned(&self.ground.assets, &mapping)
                    .map_err(CommandError::KeepLearned)?;
                tracing::info!(
                    "MIDI learn: {} bound to {} (kept in {file})",
                    mapping.param.as_deref().unwrap_or("?"),
                    mapping::files::control_name(&mapping),
                );
                Ok(())
            }
            Command::Script(event) => {
                self.dispatch(&event);
                Ok(())
            }
            Command::Release(name) => {
                if let Some(name) = name.as_deref().filter(|n| !self.registry.contains(n)) {
                    return Err(CommandError::NoParam(name.to_string()));
                }
                let released = self.registry.release(name.as_deref());
                tracing::info!(
                    "{released} parameter(s) handed back to the script ({})",
                    name.as_deref().unwrap_or("all")
                );
                Ok(())
            }
            Command::Playlist(command) => self.playlist_command(command),
            Command::KeepFavourites(list) => self.keep_favourites(&list),
            Command::SaveOutputs => {
                if self.outputs_name().is_none() {
                    return Err(CommandError::NoOutputs);
                }
                self.requests.pending.save_outputs = true;
                Ok(())
            }
        }
    }

    /// Carries out the queued requests: the save first (it keeps what was
    /// on stage when it was asked for), then the load, then reseeds.
    pub(super) fn carry_out_requests(&mut self) {
        if let Some(name) = self.requests.pending.save.take() {
            if !self.requests.save_due() {
                tracing::warn!("preset save {name:?} skipped: one save a second at most");
            } else if let Err(error) = self.save_show_preset(&name) {
                self.ground.errors.report("preset save", error);
            }
        }
        if std::mem::take(&mut self.requests.pending.save_outputs)
            && let Err(error) = self.save_outputs()
        {
            self.ground.errors.report("outputs", error);
        }
        if let Some((name, fade)) = self.requests.pending.load.take()
            && let Err(error) = self.load_show_preset_fading(&name, fade)
        {
            self.ground.errors.report("preset", error.to_string());
        }
        if std::mem::take(&mut self.requests.pending.reseed_all) {
            self.reseed(self.ground.seed);
        }
        for layer in std::mem::take(&mut self.requests.pending.reseed) {
            if self.rendering.stack.layers.iter().any(|l| l.id() == layer) {
                self.reseed_layer(&layer);
            }
        }
    }

    pub(super) fn apply_script_commands(&mut self) {
        let mut commands = self.script.host.take_commands();
        if commands.len() > MAX_SCRIPT_COMMANDS {
            self.ground.errors.report(
                format!("scripts/{}", self.script.host.file()),
                format!(
                    "{} requests in one call; only the first {MAX_SCRIPT_COMMANDS} were applied",
                    commands.len()
                ),
            );
            commands.truncate(MAX_SCRIPT_COMMANDS);
        }
        for command in commands {
            if let Err(error) = self.apply(command) {
                self.ground
                    .errors
                    .report(format!("scripts/{}", self.script.host.file()), error);
            }
        }
    }

    /// Restarts every layer from `seed` and clears feedback.
    pub fn reseed(&mut self, seed: u64) {
        self.ground.seed = seed;
        let ids: Vec<String> = self
            .rendering
            .stack
            .layers
            .iter()
            .map(|l| l.id().to_string())
            .collect();
        for id in ids {
            self.reseed_layer(&id);
        }
    }

    /// Restarts one layer and clears its feedback.
    pub fn reseed_layer(&mut self, id: &str) {
        let stack = &mut self.rendering.stack;
        match stack.layers.iter_mut().find(|l| l.id() == id) {
            Some(layer) => {
                layer.reseed(self.ground.seed);
                stack.compositor.forget(id);
            }
            None => self
                .ground
                .errors
                .report("reseed", format!("no layer {id:?} to reseed")),
        }
    }
}
