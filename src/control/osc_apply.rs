//! What OSC does to the show: reserved addresses, aliases and
//! `/sylva/...` parameters, status replies, and everything else handed to
//! the script's `on_osc`.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rosc::{OscMessage, OscType};

use super::event::{ControlInput, Datagram};
use super::osc::{self, OscReceived};
use super::{ControlSurface, MAX_SCHEDULED, MAX_SCHEDULED_BYTES, ShowView};
use crate::command::{Command, PlaylistCommand};
use crate::command::{OscArg, ScriptEvent};
use crate::mapping::OscAlias;
use crate::params::{ParamKind, ParamSpec, Registry, Source, Value};

/// An OSC message: carried out now, or scheduled when its bundle's time
/// tag is still ahead.
impl ControlInput for OscReceived {
    fn queued_bytes(&self) -> usize {
        self.size()
    }

    fn datagram(&self) -> Option<Datagram> {
        Some(Datagram {
            received: self.received,
            rest: self.rest,
        })
    }

    fn apply(self: Box<Self>, surface: &mut ControlSurface, view: &ShowView<'_>, started: Instant) {
        match self.due.filter(|due| *due > started) {
            Some(due) => {
                if !surface.scheduled.push(due, *self) {
                    let count = surface.osc_stats.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                    surface.warn_osc(&format!(
                        "the schedule of time-tagged messages is full ({MAX_SCHEDULED} messages, {} KiB); {count} dropped so far",
                        MAX_SCHEDULED_BYTES >> 10
                    ));
                }
            }
            None => surface.handle_osc(*self, view),
        }
    }
}

impl ControlSurface {
    pub(super) fn handle_osc(&mut self, received: OscReceived, view: &ShowView<'_>) {
        let OscReceived {
            from,
            message,
            received: at,
            due,
            ..
        } = received;
        // What the limiter counts a write at: its arrival, or when its
        // bundle's time tag has it done.
        let sent = due.map_or(at, |due| due.max(at));
        let address = message.addr.as_str();
        let first_string = || match message.args.first() {
            Some(OscType::String(s)) => Some(s.clone()),
            _ => None,
        };
        if let Some(layer) = reseed_target(address) {
            return self.command(Command::Reseed(layer));
        }
        if !self.may_write(from, &message, sent) {
            return;
        }
        match address {
            "/sylva/preset" => match first_string() {
                Some(name) => {
                    let fade = message.args.get(1).and_then(|a| match a {
                        OscType::Float(s) => Some(*s),
                        OscType::Double(s) => Some(*s as f32),
                        OscType::Int(s) => Some(*s as f32),
                        _ => None,
                    });
                    self.command(Command::LoadPreset(name, fade.filter(|s| s.is_finite())))
                }
                None => self.warn_osc(&format!("{address} needs a preset name (s) from {from}")),
            },
            "/sylva/preset/save" => match first_string() {
                Some(name) => self.command(Command::SavePreset(name)),
                None => self.warn_osc(&format!("{address} needs a preset name (s) from {from}")),
            },
            "/sylva/learn" => match first_string() {
                Some(param) => self.command(Command::Learn(param)),
                None => self.warn_osc(&format!("{address} needs a parameter name (s) from {from}")),
            },
            "/sylva/status" => self.reply_status(from, view.preset),
            "/sylva/reseed" => self.command(Command::ReseedAll),
            "/sylva/release" => self.command(Command::Release(first_string())),
            "/sylva/outputs/save" => self.command(Command::SaveOutputs),
            "/sylva/ui/favourites" => match first_string() {
                Some(list) => self.command(Command::KeepFavourites(list)),
                None => self.warn_osc(&format!("{address} needs a JSON list (s) from {from}")),
            },
            "/sylva/playlist/play" => match first_string() {
                Some(name) => self.command(Command::Playlist(PlaylistCommand::Play(name))),
                None => self.warn_osc(&format!("{address} needs a playlist name (s) from {from}")),
            },
            "/sylva/playlist/next" => self.command(Command::Playlist(PlaylistCommand::Next)),
            "/sylva/playlist/previous" => {
                self.command(Command::Playlist(PlaylistCommand::Previous))
            }
            "/sylva/playlist/stop" => self.command(Command::Playlist(PlaylistCommand::Stop)),
            "/sylva/timeline/play" => match first_string() {
                Some(name) => self.command(Command::Timeline(Some(name))),
                None => self.warn_osc(&format!("{address} needs a timeline name (s) from {from}")),
            },
            "/sylva/timeline/stop" => self.command(Command::Timeline(None)),
            "/sylva/playlist/jump" => match message.args.first() {
                Some(OscType::Int(i)) if *i >= 0 => {
                    self.command(Command::Playlist(PlaylistCommand::Jump(*i as usize)))
                }
                _ => self.warn_osc(&format!("{address} needs an entry number (i) from {from}")),
            },
            _ => {
                if !self.set_from_osc(from, &message, (at, sent), view.registry) {
                    let args = message.args.iter().filter_map(script_arg).collect();
                    self.command(Command::Script(ScriptEvent::Osc(
                        message.addr.clone(),
                        args,
                    )));
                }
            }
        }
    }

    /// Writes a parameter from an alias or a `/sylva/...` address; false if
    /// the address names no parameter (it then goes to the script). `at`:
    /// when it arrived; `sent`: when the write limiter counts it.
    fn set_from_osc(
        &mut self,
        from: SocketAddr,
        message: &OscMessage,
        (at, sent): (Instant, Instant),
        registry: &Registry,
    ) -> bool {
        let alias = self
            .aliases
            .iter()
            .find(|a| a.address == message.addr)
            .cloned();
        let (name, value) = match alias {
            Some(alias) => {
                let value = registry.spec(&alias.param).and_then(|spec| {
                    let x = message.args.first().and_then(|a| {
                        osc::value_from_args(&mapping_input(), std::slice::from_ref(a))
                    })?;
                    aliased_value(spec, &alias, x.as_f32()?)
                });
                (alias.param, value)
            }
            None => {
                let Some(name) = osc::param_of(&message.addr).filter(|n| registry.contains(n))
                else {
                    return false;
                };
                let value = registry
                    .spec(&name)
                    .and_then(|spec| osc::value_from_args(spec, &message.args));
                (name, value)
            }
        };
        // A change of a parameter that writes (a take) goes through the
        // limiter; the same value again changes nothing and passes.
        let unchanged = value.is_some() && registry.target(&name) == value.as_ref();
        if !unchanged && !self.may_change(from, &message.addr, &name, sent) {
            return true;
        }
        match value {
            Some(value) => {
                let source = Source::Osc(from.to_string());
                self.command(Command::Set(name, value, source));
                self.record_latency(at.elapsed());
            }
            // A mapping's parameter the preset lacks is no argument's fault.
            None if !registry.contains(&name) => self.warnings.warn(|| {
                format!(
                    "OSC: {} from {from}: {}",
                    message.addr,
                    crate::mapping::names::missing_param(&name, registry)
                )
            }),
            None => self.warn_osc(&format!(
                "{}: arguments {:?} from {from} do not fit {name}",
                message.addr, message.args
            )),
        }
        true
    }

    fn record_latency(&mut self, delay: Duration) {
        if self.latency.len() == super::LATENCY_SAMPLES {
            self.latency.pop_front();
        }
        self.latency.push_back(delay);
    }

    /// Answers `/sylva/status` with one short datagram, at most
    /// [`super::STATUS_REPLIES_PER_SECOND`] times a second per host: the
    /// sender's address can be forged, so a reply must never be worth
    /// more to an attacker than the request.
    fn reply_status(&mut self, to: SocketAddr, preset: Option<&str>) {
        let now = Instant::now();
        if self.status_replies.len() > 1024 {
            self.status_replies
                .retain(|_, (since, _)| now.duration_since(*since) < Duration::from_secs(1));
        }
        let (since, count) = self.status_replies.entry(to.ip()).or_insert((now, 0));
        if now.duration_since(*since) >= Duration::from_secs(1) {
            (*since, *count) = (now, 0);
        }
        *count += 1;
        if *count > super::STATUS_REPLIES_PER_SECOND {
            return;
        }
        let errors = self.errors.snapshot();
        let (datagrams, malformed) = self.osc_counts();
        let last = errors.last().map_or(String::new(), |e| {
            status_line(&format!("{}: {}", e.origin, e.message))
        });
        self.feedback.reply(
            to,
            OscMessage {
                addr: "/sylva/status".into(),
                args: vec![
                    OscType::String(status_line(preset.unwrap_or(""))),
                    OscType::Int(errors.len() as i32),
                    OscType::String(last),
                    OscType::Long(datagrams as i64),
                    OscType::Long(malformed as i64),
                ],
            },
        );
    }

    /// Logs a refused OSC message, at most once a second.
    pub(super) fn warn_osc(&mut self, message: &str) {
        self.warn_control(&format!("OSC: {message}"));
    }
}

/// Characters of the error line a status reply carries.
const STATUS_LINE_CHARS: usize = 200;

/// The first line of `text`, cut to [`STATUS_LINE_CHARS`] characters.
fn status_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    match line.char_indices().nth(STATUS_LINE_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// The layer `/sylva/<layer>/reseed` names (`shader/sky` is `shader.sky`).
fn reseed_target(address: &str) -> Option<String> {
    let layer = address.strip_prefix(osc::PREFIX)?.strip_suffix("/reseed")?;
    (!layer.is_empty()).then(|| layer.replace('/', "."))
}

/// The spec an alias's incoming number is read with: any finite float.
fn mapping_input() -> ParamSpec {
    ParamSpec::float("alias.input", 0.0, f32::MIN, f32::MAX)
}

/// An aliased number mapped onto the parameter: through the alias's input
/// range onto the parameter's range, or as it is.
fn aliased_value(spec: &ParamSpec, alias: &OscAlias, x: f32) -> Option<Value> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reseed_addresses_name_a_layer_or_none() {
        assert_eq!(reseed_target("/sylva/reseed"), None);
        assert_eq!(reseed_target("/sylva//reseed"), None);
        assert_eq!(
            reseed_target("/sylva/colony/reseed").as_deref(),
            Some("colony")
        );
        assert_eq!(
            reseed_target("/sylva/shader/sky/reseed").as_deref(),
            Some("shader.sky")
        );
    }

    #[test]
    fn status_lines_are_one_short_line() {
        let long = format!("{}\nsecond line", "é".repeat(60_000));
        let line = status_line(&long);
        assert_eq!(line.chars().count(), STATUS_LINE_CHARS + 1);
        assert!(!line.contains('\n'));
    }
}
