//! The control surface: MIDI controllers and OSC peers playing the show
//! (steps 1 and 2 of the frame). Input threads only send [`ControlEvent`]s;
//! at the start of each frame the main thread drains them and writes the
//! registry through mappings, aliases and soft takeover, sends feedback
//! (OSC to the configured targets, LEDs to MIDI outputs) for the changes of
//! the frame before, and publishes the OSCQuery snapshot.

pub mod mapping;
mod midi_io;
pub mod midi_map;
pub mod midi_parse;
pub mod osc;
pub mod oscquery;
mod tempo;

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use mapping::{Action, Mappings, OscAlias};
use midi_io::{MidiOutputs, MidiStatus, SharedStatus};
use midi_map::{MidiMapper, MidiOutcome};
use midi_parse::MidiMessage;
use osc::{Feedback, OscReceived, OscStats};
use oscquery::SharedNamespace;
use rosc::{OscMessage, OscType};
use tempo::{MidiClock, TapTempo};

use crate::params::{ParamKind, Source, Value};
use crate::renderer::Renderer;
use crate::script::{OscArg, ScriptEvent};
use crate::show::{Folder, inside_show};

/// Something a control thread received.
#[derive(Debug, Clone)]
pub enum ControlEvent {
    /// A MIDI message from input `port`.
    Midi {
        /// Port name.
        port: String,
        /// The message.
        message: MidiMessage,
        /// When it arrived.
        at: Instant,
    },
    /// An OSC message.
    Osc(OscReceived),
}

/// How the control surface listens and talks.
#[derive(Debug, Clone)]
pub struct ControlOptions {
    /// Open MIDI inputs at all.
    pub midi: bool,
    /// Only inputs whose name contains this.
    pub midi_filter: Option<String>,
    /// OSC bind address.
    pub osc_bind: String,
    /// OSC port; 0 picks a free one, `None` turns OSC off.
    pub osc_port: Option<u16>,
    /// Feedback targets.
    pub osc_out: Vec<SocketAddr>,
    /// OSCQuery HTTP port; 0 picks a free one, `None` turns it off.
    pub oscquery_port: Option<u16>,
}

impl Default for ControlOptions {
    fn default() -> Self {
        Self {
            midi: true,
            midi_filter: None,
            osc_bind: "0.0.0.0".into(),
            osc_port: Some(9000),
            osc_out: Vec::new(),
            oscquery_port: Some(9001),
        }
    }
}

/// Samples kept for the control latency figure.
const LATENCY_SAMPLES: usize = 100_000;

/// MIDI and OSC, applied on the main thread.
pub struct ControlSurface {
    events: Receiver<ControlEvent>,
    sender: Sender<ControlEvent>,
    stop: Arc<AtomicBool>,
    mapper: MidiMapper,
    aliases: Vec<OscAlias>,
    mapping_preset: Option<String>,
    midi_clock: MidiClock,
    tap: TapTempo,
    outputs: MidiOutputs,
    feedback: Feedback,
    namespace: SharedNamespace,
    scheduled: Vec<OscReceived>,
    midi_status: SharedStatus,
    osc_stats: Arc<OscStats>,
    osc_port: Option<u16>,
    oscquery_port: Option<u16>,
    latency: Vec<Duration>,
    last_osc_warning: Option<Instant>,
}

impl ControlSurface {
    /// Opens the MIDI inputs, the OSC socket and the OSCQuery server. A port
    /// that cannot be opened is reported and that part stays off.
    pub fn start(options: &ControlOptions, renderer: &Renderer) -> Self {
        let (sender, events) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let midi_status = SharedStatus::default();
        if options.midi {
            midi_io::spawn_inputs(
                options.midi_filter.clone(),
                sender.clone(),
                midi_status.clone(),
                stop.clone(),
            );
        }
        let osc_stats = Arc::new(OscStats::default());
        let osc_port = options.osc_port.and_then(|port| {
            let opened = UdpSocket::bind((options.osc_bind.as_str(), port)).and_then(|socket| {
                let port = socket.local_addr()?.port();
                osc::spawn_receiver(socket, sender.clone(), osc_stats.clone(), stop.clone())?;
                Ok(port)
            });
            match opened {
                Ok(port) => {
                    tracing::info!("OSC listening on {}:{port}", options.osc_bind);
                    Some(port)
                }
                Err(error) => {
                    renderer.errors.report(
                        "osc",
                        format!("cannot listen on {}:{port}: {error}", options.osc_bind),
                    );
                    None
                }
            }
        });
        let namespace = SharedNamespace::default();
        namespace.publish(&renderer.registry);
        let oscquery_port = options.oscquery_port.and_then(|port| {
            match oscquery::serve(
                &options.osc_bind,
                port,
                osc_port.unwrap_or(0),
                namespace.clone(),
            ) {
                Ok(port) => Some(port),
                Err(error) => {
                    renderer
                        .errors
                        .report("oscquery", format!("cannot serve on port {port}: {error}"));
                    None
                }
            }
        });
        Self {
            events,
            sender,
            stop,
            mapper: MidiMapper::default(),
            aliases: Vec::new(),
            mapping_preset: None,
            midi_clock: MidiClock::default(),
            tap: TapTempo::default(),
            outputs: MidiOutputs::default(),
            feedback: Feedback::new(options.osc_out.clone()),
            namespace,
            scheduled: Vec::new(),
            midi_status,
            osc_stats,
            osc_port,
            oscquery_port,
            latency: Vec::new(),
            last_osc_warning: None,
        }
    }

    /// The OSC port listened on.
    pub fn osc_port(&self) -> Option<u16> {
        self.osc_port
    }

    /// The OSCQuery port served.
    pub fn oscquery_port(&self) -> Option<u16> {
        self.oscquery_port
    }

    /// A sender for events made in process (tests, the HUD).
    pub fn sender(&self) -> Sender<ControlEvent> {
        self.sender.clone()
    }

    /// The MIDI mapper (for the HUD and tests).
    pub fn mapper(&mut self) -> &mut MidiMapper {
        &mut self.mapper
    }

    /// MIDI ports and problems.
    pub fn midi_status(&self) -> MidiStatus {
        self.midi_status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Lines for the HUD: MIDI ports, clock, OSC and OSCQuery.
    pub fn status_lines(&self) -> Vec<String> {
        let midi = self.midi_status();
        let mut lines = vec![match (&midi.problem, midi.inputs.is_empty()) {
            (Some(problem), _) => format!("MIDI: unavailable ({problem})"),
            (None, true) => "MIDI: no input ports (rescanning)".to_string(),
            (None, false) => format!("MIDI: {}", midi.inputs.join(", ")),
        }];
        if self.midi_clock.running() {
            lines.push("MIDI clock: playing".to_string());
        }
        if let Some(param) = self.mapper.learning() {
            lines.push(format!("MIDI learn: move a control for {param}"));
        }
        let (datagrams, malformed) = self.osc_counts();
        lines.push(match self.osc_port {
            Some(port) => format!("OSC: port {port}, {datagrams} datagrams, {malformed} malformed"),
            None => "OSC: off".to_string(),
        });
        if let Some(port) = self.oscquery_port {
            lines.push(format!("OSCQuery: http port {port}"));
        }
        lines
    }

    /// OSC datagrams received and malformed.
    pub fn osc_counts(&self) -> (u64, u64) {
        (
            self.osc_stats.datagrams.load(Ordering::Relaxed),
            self.osc_stats.malformed.load(Ordering::Relaxed),
        )
    }

    /// The `q` quantile (0..1) of the delay from receipt to applied, over
    /// the parameter writes so far.
    pub fn latency(&self, q: f64) -> Option<Duration> {
        let mut sorted = self.latency.clone();
        sorted.sort();
        let index = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1)) - 1;
        sorted.get(index).copied()
    }

    /// Number of latency samples.
    pub fn latency_samples(&self) -> usize {
        self.latency.len()
    }

    /// Steps 1 and 2 of a frame, plus feedback and the OSCQuery snapshot.
    pub fn apply(&mut self, renderer: &mut Renderer) {
        self.reload_mappings(renderer);
        if let Some(param) = renderer.take_learn_request() {
            tracing::info!("MIDI learn armed for {param}: move a control");
            self.mapper.learn(&param);
        }
        self.send_feedback(renderer);
        let now = Instant::now();
        let due: Vec<OscReceived>;
        (due, self.scheduled) = std::mem::take(&mut self.scheduled)
            .into_iter()
            .partition(|m| m.due.is_none_or(|d| d <= now));
        for message in due {
            self.handle_osc(message, renderer);
        }
        while let Ok(event) = self.events.try_recv() {
            match event {
                ControlEvent::Midi { port, message, at } => {
                    self.handle_midi(&port, message, at, renderer)
                }
                ControlEvent::Osc(received) if received.due.is_some_and(|d| d > now) => {
                    self.scheduled.push(received)
                }
                ControlEvent::Osc(received) => self.handle_osc(received, renderer),
            }
        }
        self.namespace.publish(&renderer.registry);
    }

    /// Mapping files: every `mappings/*.toml` of the show, the preset's own,
    /// and learned ones; read again when the preset changes.
    fn reload_mappings(&mut self, renderer: &Renderer) {
        let preset = renderer.preset().map(str::to_string);
        if preset == self.mapping_preset && self.mapping_preset.is_some() {
            return;
        }
        self.mapping_preset = preset;
        let mut files: Vec<String> = renderer
            .assets
            .list(Folder::Presets, "toml")
            .into_iter()
            .filter(|f| f.starts_with("mappings/"))
            .collect();
        files.extend(
            renderer
                .preset_mappings()
                .iter()
                .filter(|f| !files.contains(f))
                .cloned()
                .collect::<Vec<_>>(),
        );
        let mut midi = Vec::new();
        self.aliases.clear();
        for file in files {
            let parsed = renderer
                .assets
                .read(Folder::Presets, &file)
                .map_err(|e| e.to_string())
                .and_then(|asset| {
                    Mappings::parse(&asset.display, &asset.text).map_err(|e| e.to_string())
                });
            match parsed {
                Ok(mappings) => {
                    midi.extend(mappings.midi);
                    self.aliases.extend(mappings.osc);
                }
                Err(error) => renderer.errors.report(format!("presets/{file}"), error),
            }
        }
        let learning = self.mapper.learning().map(str::to_string);
        self.mapper = MidiMapper::new(midi);
        if let Some(param) = learning {
            self.mapper.learn(&param);
        }
    }

    fn send_feedback(&mut self, renderer: &mut Renderer) {
        for change in renderer.registry.drain_changes() {
            for (port, bytes) in self.mapper.feedback(&change.name, &renderer.registry) {
                self.outputs.send(&port, &bytes);
            }
            let Some(spec) = renderer.registry.spec(&change.name) else {
                continue;
            };
            let origin = match &change.source {
                Source::Osc(from) => from.parse::<SocketAddr>().ok(),
                _ => None,
            };
            self.feedback.send(spec, &change.value, origin.as_ref());
            self.namespace.notify(spec, &change.value);
        }
    }

    fn handle_midi(
        &mut self,
        port: &str,
        message: MidiMessage,
        at: Instant,
        renderer: &mut Renderer,
    ) {
        match message {
            MidiMessage::Clock => {
                if let Some(bpm) = self.midi_clock.pulse(at) {
                    let _ = renderer
                        .registry
                        .set("master.bpm", Value::Float(bpm), Source::Midi);
                }
                return;
            }
            MidiMessage::Start => {
                self.midi_clock.start();
                renderer.clock.beats = 0.0;
                return;
            }
            MidiMessage::Continue => {
                self.midi_clock.start();
                return;
            }
            MidiMessage::Stop => {
                self.midi_clock.stop();
                return;
            }
            _ => {}
        }
        let (number, value) = match message {
            MidiMessage::NoteOn { note, velocity, .. }
            | MidiMessage::NoteOff { note, velocity, .. } => (note, velocity),
            MidiMessage::ControlChange {
                controller, value, ..
            } => (controller, value),
            MidiMessage::ProgramChange { program, .. } => (program, 0),
            MidiMessage::PitchBend { value, .. } => (0, (value >> 7) as u8),
            _ => (0, 0),
        };
        let channel = match message {
            MidiMessage::NoteOn { channel, .. }
            | MidiMessage::NoteOff { channel, .. }
            | MidiMessage::ControlChange { channel, .. }
            | MidiMessage::ProgramChange { channel, .. }
            | MidiMessage::PitchBend { channel, .. } => channel,
            _ => 0,
        };
        renderer.dispatch(&ScriptEvent::Midi {
            kind: message.kind().to_string(),
            channel,
            number,
            value,
        });
        for outcome in self.mapper.handle(port, &message, &renderer.registry) {
            match outcome {
                MidiOutcome::Set(name, value) => {
                    let _ = renderer.registry.set(&name, value, Source::Midi);
                }
                MidiOutcome::Action(action) => self.act(action, at, renderer),
                MidiOutcome::Learned(mapping) => self.save_learned(mapping, renderer),
            }
        }
    }

    fn act(&mut self, action: Action, at: Instant, renderer: &mut Renderer) {
        match action {
            Action::Reseed(layer) => renderer.reseed_layer(&layer),
            Action::Toggle(layer) => {
                let name = format!("{layer}.enabled");
                let on = renderer.registry.flag(&name);
                let _ = renderer.registry.set(&name, Value::Bool(!on), Source::Midi);
            }
            Action::Tap => {
                if let Some(bpm) = self.tap.tap(at) {
                    let _ = renderer
                        .registry
                        .set("master.bpm", Value::Float(bpm), Source::Midi);
                }
            }
            Action::Blackout => {
                let dark = renderer
                    .registry
                    .target("master.blackout")
                    .and_then(Value::as_f32)
                    .unwrap_or(0.0)
                    >= 0.5;
                let _ = renderer.registry.set(
                    "master.blackout",
                    Value::Float(if dark { 0.0 } else { 1.0 }),
                    Source::Midi,
                );
            }
            Action::NextPreset | Action::PreviousPreset => {
                step_preset(renderer, matches!(action, Action::NextPreset))
            }
            Action::Preset(name) => {
                if let Err(error) = renderer.load_show_preset(&name) {
                    renderer.errors.report("preset", error.to_string());
                }
            }
        }
    }

    /// Adds a learned mapping to `presets/mappings/learned.toml` in the show folder.
    fn save_learned(&mut self, mapping: mapping::MidiMapping, renderer: &mut Renderer) {
        let path: PathBuf = renderer
            .assets
            .dir(Folder::Presets)
            .join("mappings/learned.toml");
        let mut learned = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| Mappings::parse("learned.toml", &text).ok())
            .unwrap_or_default();
        learned.midi.retain(|m| {
            !(m.cc == mapping.cc && m.note == mapping.note && m.channel == mapping.channel)
        });
        learned.midi.push(mapping.clone());
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, learned.to_toml()));
        match written {
            Ok(()) => tracing::info!(
                "MIDI learn: {} bound to {} (saved to {})",
                mapping.param.as_deref().unwrap_or("?"),
                control_name(&mapping),
                path.display()
            ),
            Err(error) => renderer.errors.report(
                "midi learn",
                format!("cannot save {}: {error}", path.display()),
            ),
        }
    }

    fn handle_osc(&mut self, received: OscReceived, renderer: &mut Renderer) {
        let OscReceived {
            from,
            message,
            received: at,
            ..
        } = received;
        let address = message.addr.as_str();
        let first_string = || match message.args.first() {
            Some(OscType::String(s)) => Some(s.clone()),
            _ => None,
        };
        match address {
            "/sylva/preset" => match first_string() {
                Some(name) => {
                    if let Err(error) = renderer.load_show_preset(&name) {
                        renderer.errors.report("preset", error.to_string());
                    }
                }
                None => self.warn_osc(&format!("{address} needs a preset name (s) from {from}")),
            },
            "/sylva/preset/save" => {
                match first_string().filter(|n| inside_show(&format!("{n}.toml")).is_ok()) {
                    Some(name) => {
                        if let Err(error) = renderer.save_preset(&name) {
                            renderer.errors.report("preset", error);
                        }
                    }
                    None => self.warn_osc(&format!(
                        "{address} needs a preset name inside the show (s) from {from}"
                    )),
                }
            }
            "/sylva/learn" => match first_string().filter(|p| renderer.registry.contains(p)) {
                Some(param) => {
                    tracing::info!("MIDI learn armed for {param}: move a control");
                    self.mapper.learn(&param);
                }
                None => self.warn_osc(&format!("{address} needs a parameter name (s) from {from}")),
            },
            "/sylva/status" => self.reply_status(from, renderer),
            _ if address.starts_with("/sylva/playlist/") => {
                self.warn_osc(&format!("{address}: no playlist is running"));
            }
            _ if address.starts_with(osc::PREFIX) && address.ends_with("/reseed") => {
                let layer =
                    address[osc::PREFIX.len()..address.len() - "/reseed".len()].replace('/', ".");
                renderer.reseed_layer(&layer);
            }
            _ => {
                if !self.set_from_osc(from, &message, at, renderer) {
                    let args = message.args.iter().filter_map(script_arg).collect();
                    renderer.dispatch(&ScriptEvent::Osc(message.addr.clone(), args));
                }
            }
        }
    }

    /// Writes a parameter from an alias or a `/sylva/...` address; false if
    /// the address names no parameter (it then goes to the script).
    fn set_from_osc(
        &mut self,
        from: SocketAddr,
        message: &OscMessage,
        at: Instant,
        renderer: &mut Renderer,
    ) -> bool {
        let alias = self
            .aliases
            .iter()
            .find(|a| a.address == message.addr)
            .cloned();
        let (name, value) = match alias {
            Some(alias) => {
                let value = renderer.registry.spec(&alias.param).and_then(|spec| {
                    let x = message.args.first().and_then(|a| {
                        osc::value_from_args(&mapping_input(), std::slice::from_ref(a))
                    })?;
                    aliased_value(spec, &alias, x.as_f32()?)
                });
                (alias.param, value)
            }
            None => {
                let Some(name) =
                    osc::param_of(&message.addr).filter(|n| renderer.registry.contains(n))
                else {
                    return false;
                };
                let value = renderer
                    .registry
                    .spec(&name)
                    .and_then(|spec| osc::value_from_args(spec, &message.args));
                (name, value)
            }
        };
        match value {
            Some(value) => {
                if renderer
                    .registry
                    .set(&name, value, Source::Osc(from.to_string()))
                    .is_ok()
                {
                    self.record_latency(at.elapsed());
                }
            }
            None => self.warn_osc(&format!(
                "{}: arguments {:?} from {from} do not fit {name}",
                message.addr, message.args
            )),
        }
        true
    }

    fn record_latency(&mut self, delay: Duration) {
        if self.latency.len() == LATENCY_SAMPLES {
            self.latency.remove(0);
        }
        self.latency.push(delay);
    }

    fn reply_status(&self, to: SocketAddr, renderer: &Renderer) {
        let errors = renderer.errors.snapshot();
        let (datagrams, malformed) = self.osc_counts();
        let last = errors
            .last()
            .map_or(String::new(), |e| format!("{}: {}", e.origin, e.message));
        self.feedback.reply(
            to,
            OscMessage {
                addr: "/sylva/status".into(),
                args: vec![
                    OscType::String(renderer.preset().unwrap_or("").to_string()),
                    OscType::Int(errors.len() as i32),
                    OscType::String(last),
                    OscType::Long(datagrams as i64),
                    OscType::Long(malformed as i64),
                ],
            },
        );
    }

    /// Logs a refused OSC message, at most once a second.
    fn warn_osc(&mut self, message: &str) {
        if self
            .last_osc_warning
            .is_none_or(|t| t.elapsed() > Duration::from_secs(1))
        {
            tracing::warn!("OSC: {message}");
            self.last_osc_warning = Some(Instant::now());
        }
    }
}

impl Drop for ControlSurface {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The spec an alias's incoming number is read with: any finite float.
fn mapping_input() -> crate::params::ParamSpec {
    crate::params::ParamSpec::float("alias.input", 0.0, f32::MIN, f32::MAX)
}

/// An aliased number mapped onto the parameter: through the alias's input
/// range onto the parameter's range, or as it is.
fn aliased_value(spec: &crate::params::ParamSpec, alias: &OscAlias, x: f32) -> Option<Value> {
    let Some([lo, hi]) = alias.range else {
        return spec.clamp(Value::Float(x));
    };
    let t = if hi != lo {
        ((x - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (min, max) = match &spec.kind {
        ParamKind::Float { min, max } => (*min, *max),
        ParamKind::Int { min, max } => (*min as f32, *max as f32),
        ParamKind::Bool => (0.0, 1.0),
        ParamKind::Enum { options } => (0.0, options.len().saturating_sub(1) as f32),
        _ => return None,
    };
    spec.clamp(Value::Float(min + t * (max - min)))
}

fn script_arg(arg: &OscType) -> Option<OscArg> {
    match arg {
        OscType::Float(v) => Some(OscArg::Number(f64::from(*v))),
        OscType::Double(v) => Some(OscArg::Number(*v)),
        OscType::Int(v) => Some(OscArg::Number(f64::from(*v))),
        OscType::Long(v) => Some(OscArg::Number(*v as f64)),
        OscType::Bool(v) => Some(OscArg::Bool(*v)),
        OscType::String(s) => Some(OscArg::Text(s.clone())),
        _ => None,
    }
}

fn control_name(mapping: &mapping::MidiMapping) -> String {
    let channel = mapping
        .channel
        .map_or(String::new(), |c| format!(" on channel {c}"));
    match (mapping.cc, mapping.note) {
        (Some(cc), _) => format!("CC {cc}{channel}"),
        (_, Some(note)) => format!("note {note}{channel}"),
        _ => "nothing".into(),
    }
}

/// Loads the preset after (or before) the running one, in name order.
fn step_preset(renderer: &mut Renderer, forward: bool) {
    let names: Vec<String> = renderer
        .assets
        .list(Folder::Presets, "toml")
        .into_iter()
        .filter(|f| !f.contains('/'))
        .map(|f| f.trim_end_matches(".toml").to_string())
        .collect();
    if names.is_empty() {
        return;
    }
    let current = renderer
        .preset()
        .and_then(|p| names.iter().position(|n| n == p))
        .unwrap_or(0);
    let next = if forward {
        (current + 1) % names.len()
    } else {
        (current + names.len() - 1) % names.len()
    };
    let name = names[next].clone();
    if let Err(error) = renderer.load_show_preset(&name) {
        renderer.errors.report("preset", error.to_string());
    }
}
