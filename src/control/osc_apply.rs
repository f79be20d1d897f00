//! What OSC does to the show: reserved addresses, aliases and
//! `/sylva/...` parameters, status replies, and everything else handed to
//! the script's `on_osc`.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rosc::{OscMessage, OscType};

use super::ControlSurface;
use super::mapping::OscAlias;
use super::osc::{self, OscReceived};
use crate::params::{ParamKind, ParamSpec, Source, Value};
use crate::renderer::Renderer;
use crate::script::{OscArg, ScriptEvent};
use crate::show::inside_show;

impl ControlSurface {
    pub(super) fn handle_osc(&mut self, received: OscReceived, renderer: &mut Renderer) {
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
        if self.latency.len() == super::LATENCY_SAMPLES {
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
