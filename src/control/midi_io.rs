//! MIDI ports through midir. A thread opens every input port (or those
//! whose name contains `--midi NAME`) and rescans every two seconds, so a
//! controller unplugged and plugged back mid-show returns without a
//! restart. Its callbacks only parse bytes and send messages to the main
//! thread. Outputs (LED feedback) are opened on demand from the main thread
//! and retried at the same pace. A machine without a MIDI subsystem gets one
//! warning; the show goes on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use midir::{Ignore, MidiInput, MidiInputConnection, MidiOutput, MidiOutputConnection};

use super::ControlEvent;
use super::midi_apply::MidiReceived;
use super::midi_parse::MidiParser;
use crate::base::status::ErrorLog;

/// How often ports are rescanned.
const RESCAN: Duration = Duration::from_secs(2);

/// What the HUD shows about MIDI.
#[derive(Debug, Clone, Default)]
pub struct MidiStatus {
    /// Input ports open now.
    pub inputs: Vec<String>,
    /// Why MIDI is unavailable, if it is.
    pub problem: Option<String>,
}

/// Shared MIDI status.
pub type SharedStatus = Arc<Mutex<MidiStatus>>;

/// Starts the input thread (restarted if it panics).
pub fn spawn_inputs(
    filter: Option<String>,
    events: SyncSender<ControlEvent>,
    status: SharedStatus,
    stop: Arc<AtomicBool>,
    errors: ErrorLog,
) {
    let mut warned = false;
    let spawned = crate::base::supervise::spawn("sylva-midi", errors, move || {
        let mut open: HashMap<String, MidiInputConnection<()>> = HashMap::new();
        while !stop.load(Ordering::Relaxed) {
            match scan(&filter, &events, &mut open) {
                Ok(()) => {
                    let mut s = status.lock().unwrap_or_else(PoisonError::into_inner);
                    s.inputs = open.keys().cloned().collect();
                    s.inputs.sort();
                    s.problem = None;
                }
                Err(problem) => {
                    if !warned {
                        tracing::warn!("MIDI unavailable ({problem}); the show goes on without it");
                        warned = true;
                    }
                    status
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .problem = Some(problem.to_string());
                }
            }
            std::thread::sleep(RESCAN);
        }
    });
    if let Err(error) = spawned {
        tracing::warn!("cannot start the MIDI thread: {error}");
    }
}

/// Opens new matching ports and closes vanished ones.
fn scan(
    filter: &Option<String>,
    events: &SyncSender<ControlEvent>,
    open: &mut HashMap<String, MidiInputConnection<()>>,
) -> Result<(), MidiError> {
    no_sequencer()?;
    let probe = MidiInput::new("sylva")?;
    let ports = probe.ports();
    let present: Vec<(String, midir::MidiInputPort)> = ports
        .into_iter()
        .filter_map(|p| probe.port_name(&p).ok().map(|n| (n, p)))
        .filter(|(name, _)| !name.contains("sylva"))
        .filter(|(name, _)| {
            filter
                .as_ref()
                .is_none_or(|f| name.to_lowercase().contains(&f.to_lowercase()))
        })
        .collect();
    open.retain(|name, _| {
        let still = present.iter().any(|(n, _)| n == name);
        if !still {
            tracing::warn!("MIDI input {name} disconnected; waiting for it to return");
        }
        still
    });
    for (name, port) in present {
        if open.contains_key(&name) {
            continue;
        }
        let mut input = MidiInput::new("sylva")?;
        input.ignore(Ignore::None);
        let sender = events.clone();
        let port_name = name.clone();
        let mut parser = MidiParser::new();
        let connected = input.connect(
            &port,
            "sylva-in",
            move |_, bytes, _| {
                let at = Instant::now();
                // A full queue drops the message: the main thread is
                // behind, and the next knob position follows at once.
                for message in parser.feed(bytes) {
                    let _ = sender.try_send(Box::new(MidiReceived {
                        port: port_name.clone(),
                        message,
                        at,
                    }));
                }
            },
            (),
        );
        match connected {
            Ok(connection) => {
                tracing::info!("MIDI input {name} connected");
                open.insert(name, connection);
            }
            // A port that will not open fails again at every rescan.
            Err(error) => {
                crate::base::status::warn_held("MIDI", format_args!("input {name}: {error}"))
            }
        }
    }
    Ok(())
}

/// Without the sequencer device alsa-lib prints `ALSA lib seq_hw.c …
/// failed` to stderr at every attempt to open MIDI: look for it first, so
/// a machine without MIDI logs one warning only.
#[cfg(target_os = "linux")]
fn no_sequencer() -> Result<(), MidiError> {
    if std::path::Path::new("/dev/snd/seq").exists() {
        Ok(())
    } else {
        Err(MidiError::NoSequencer)
    }
}

#[cfg(not(target_os = "linux"))]
fn no_sequencer() -> Result<(), MidiError> {
    Ok(())
}

/// Output ports for LED feedback, opened when first needed.
#[derive(Default)]
pub struct MidiOutputs {
    /// `--no-midi`: a mapping's LED feedback opens nothing.
    off: bool,
    open: HashMap<String, MidiOutputConnection>,
    last_attempt: HashMap<String, Instant>,
}

impl MidiOutputs {
    /// Outputs opened on demand, or, with `enabled` false (`--no-midi`),
    /// never.
    pub fn new(enabled: bool) -> Self {
        Self {
            off: !enabled,
            ..Self::default()
        }
    }

    /// Sends `bytes` to the output whose name contains `port`.
    pub fn send(&mut self, port: &str, bytes: &[u8]) {
        if self.off {
            return;
        }
        if !self.open.contains_key(port) {
            let due = self
                .last_attempt
                .get(port)
                .is_none_or(|t| t.elapsed() >= RESCAN);
            if !due {
                return;
            }
            self.last_attempt.insert(port.to_string(), Instant::now());
            match connect_output(port) {
                Ok(connection) => {
                    tracing::info!("MIDI output {port} connected");
                    self.open.insert(port.to_string(), connection);
                }
                Err(problem) => {
                    tracing::debug!("MIDI output {port}: {problem}");
                    return;
                }
            }
        }
        let failed = self
            .open
            .get_mut(port)
            .is_some_and(|c| c.send(bytes).is_err());
        if failed {
            tracing::warn!("MIDI output {port} disconnected");
            self.open.remove(port);
        }
    }
}

fn connect_output(port: &str) -> Result<MidiOutputConnection, MidiError> {
    no_sequencer()?;
    let output = MidiOutput::new("sylva")?;
    let wanted = port.to_lowercase();
    let found = output
        .ports()
        .into_iter()
        .find(|p| {
            output
                .port_name(p)
                .is_ok_and(|n| n.to_lowercase().contains(&wanted))
        })
        .ok_or_else(|| MidiError::NoOutput(port.to_string()))?;
    output
        .connect(&found, "sylva-out")
        .map_err(|e| MidiError::Connect(e.to_string()))
}

/// Why MIDI ports could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum MidiError {
    /// Linux without `/dev/snd/seq`: ALSA would fail on every attempt.
    #[cfg(target_os = "linux")]
    #[error("no ALSA sequencer (/dev/snd/seq)")]
    NoSequencer,
    /// The platform's MIDI system refused.
    #[error(transparent)]
    Init(#[from] midir::InitError),
    /// No output port has the name a mapping asks for.
    #[error("no output port matching {0:?}")]
    NoOutput(String),
    /// A port was found but would not open.
    #[error("cannot open the port: {0}")]
    Connect(String),
}
