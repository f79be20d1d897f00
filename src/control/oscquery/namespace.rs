//! The OSCQuery namespace: the snapshot the main thread publishes once
//! per frame, the answer to a URL (a node, one attribute with `?VALUE`
//! and friends, `?HOST_INFO`; `nodes.rs` says what a node holds), and the
//! changes streamed to the WebSocket listeners: values as OSC, and
//! `PATH_ADDED`, `PATH_REMOVED` and `PATH_CHANGED` when a preset changes
//! which parameters exist.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use serde_json::{Value as Json, json};

use super::nodes::{ATTRIBUTES, host_info, node};
use crate::control::Catalogue;
use crate::control::osc::{PREFIX, address_of, args_of};
use crate::control::osc_commands::COMMANDS;
use crate::params::{ParamSpec, Registry, Value};

/// What the server shows: the specs (replaced when parameters come or go)
/// and the current target values.
#[derive(Debug, Clone, Default)]
pub struct Namespace {
    pub(super) specs: Arc<Vec<ParamSpec>>,
    pub(super) values: Vec<Value>,
    revision: u64,
    pub(super) catalogue: Catalogue,
}

impl Namespace {
    /// Whether `path` (no trailing slash; `/` for the root) names a node:
    /// a parameter, a command, or a container above one. Compared in
    /// place, with no tree or address built, since any client may ask.
    pub(super) fn has(&self, path: &str) -> bool {
        // A dot would alias a slash (`param_of` refuses it too).
        if path == "/" {
            return true;
        }
        if !path.starts_with('/') || path.contains('.') || path.ends_with('/') {
            return false;
        }
        let at_or_above = |address: &str| {
            address
                .strip_prefix(path)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        COMMANDS.iter().any(|c| at_or_above(c.address))
            || self.specs.iter().any(|s| names(path, &s.name))
    }
}

/// Whether `path` is the address of the parameter `name` or a container
/// above it (`/sylva/master` for `master.brightness`).
fn names(path: &str, name: &str) -> bool {
    let container = PREFIX.trim_end_matches('/');
    let Some(rest) = path.strip_prefix(container) else {
        return false;
    };
    let Some(rest) = rest.strip_prefix('/') else {
        return rest.is_empty();
    };
    let (rest, name) = (rest.as_bytes(), name.as_bytes());
    rest.len() <= name.len()
        && rest
            .iter()
            .zip(name)
            .all(|(r, n)| r == n || (*r == b'/' && *n == b'.'))
        && name.get(rest.len()).is_none_or(|next| *next == b'.')
}

/// What a WebSocket client is sent.
#[derive(Debug, Clone)]
pub enum ClientMessage {
    /// A parameter's change: its address and the OSC bytes.
    Osc(String, Vec<u8>),
    /// A namespace event as OSCQuery's JSON (`PATH_ADDED`, `PATH_REMOVED`,
    /// `PATH_CHANGED`).
    Text(String),
}

/// A WebSocket client's queue.
pub(super) type Listener = SyncSender<ClientMessage>;

/// Paths reported one by one (`PATH_ADDED`, `PATH_REMOVED`) when the
/// namespace changes; past this, only the one `PATH_CHANGED` that follows
/// them says what to read again.
const MAX_PATH_EVENTS: usize = 256;

/// The snapshot shared with the server threads, and the WebSocket
/// listeners that changes are streamed to.
#[derive(Debug, Clone, Default)]
pub struct SharedNamespace {
    snapshot: Arc<RwLock<Arc<Namespace>>>,
    pub(super) listeners: Arc<Mutex<Vec<Listener>>>,
    /// Bytes of the paths every WebSocket client listens to.
    pub(super) listened: Arc<AtomicUsize>,
}

impl SharedNamespace {
    /// Bytes of the paths the WebSocket clients listen to, all together
    /// (each at most `listening::MAX_LISTENED_BYTES`).
    pub fn listened_bytes(&self) -> usize {
        self.listened.load(Ordering::Relaxed)
    }

    /// Streams a parameter change (its address and OSC bytes) to the
    /// WebSocket clients; those that left or fell too far behind are
    /// dropped (which closes their connection).
    pub fn notify(&self, spec: &ParamSpec, value: &Value) {
        let mut listeners = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if listeners.is_empty() {
            return;
        }
        let address = address_of(&spec.name);
        let packet = rosc::OscPacket::Message(rosc::OscMessage {
            addr: address.clone(),
            args: args_of(spec, value),
        });
        let Ok(bytes) = rosc::encoder::encode(&packet) else {
            return;
        };
        listeners.retain(|l| {
            l.try_send(ClientMessage::Osc(address.clone(), bytes.clone()))
                .is_ok()
        });
    }

    /// Tells every WebSocket client of parameters that came and went:
    /// `PATH_ADDED` and `PATH_REMOVED` for each (up to
    /// [`MAX_PATH_EVENTS`]), then one `PATH_CHANGED` of the deepest
    /// container holding them all, the spec's coalesced form, for clients
    /// that read a changed part again rather than patch it.
    fn paths_changed(&self, before: &[ParamSpec], after: &[ParamSpec]) {
        let addresses = |specs: &[ParamSpec]| -> BTreeSet<String> {
            specs.iter().map(|s| address_of(&s.name)).collect()
        };
        let (before, after) = (addresses(before), addresses(after));
        let added: Vec<&String> = after.difference(&before).collect();
        let removed: Vec<&String> = before.difference(&after).collect();
        if added.is_empty() && removed.is_empty() {
            return;
        }
        let mut events: Vec<Json> = Vec::new();
        if added.len() + removed.len() <= MAX_PATH_EVENTS {
            let path = |command: &str, path: &String| json!({ "COMMAND": command, "DATA": path });
            events.extend(added.iter().map(|p| path("PATH_ADDED", p)));
            events.extend(removed.iter().map(|p| path("PATH_REMOVED", p)));
        }
        let changed = added.iter().chain(&removed).map(|p| p.as_str());
        events.push(json!({
            "COMMAND": "PATH_CHANGED",
            "DATA": changed_container(changed, &after),
        }));
        let mut listeners = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        listeners.retain(|l| {
            events
                .iter()
                .all(|e| l.try_send(ClientMessage::Text(e.to_string())).is_ok())
        });
    }

    /// Publishes the registry's state and the show's catalogue (step 1 of
    /// the frame); parameters that came or went are told to the
    /// WebSocket clients.
    pub fn publish(&self, registry: &Registry, catalogue: &Catalogue) {
        let previous = self.get();
        let specs = if previous.revision == registry.revision() && !previous.specs.is_empty() {
            previous.specs.clone()
        } else {
            Arc::new(registry.iter().map(|(s, _)| s.clone()).collect())
        };
        let values = specs
            .iter()
            .map(|s| {
                registry
                    .target(&s.name)
                    .cloned()
                    .unwrap_or_else(|| s.default.clone())
            })
            .collect();
        if previous.revision != registry.revision() && !previous.specs.is_empty() {
            self.paths_changed(&previous.specs, &specs);
        }
        let next = Arc::new(Namespace {
            specs,
            values,
            revision: registry.revision(),
            catalogue: catalogue.clone(),
        });
        *self
            .snapshot
            .write()
            .unwrap_or_else(PoisonError::into_inner) = next;
    }

    pub(super) fn get(&self) -> Arc<Namespace> {
        self.snapshot
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// The deepest container above every one of the `changed` addresses
/// that still exists among `after` (or the commands): a container left
/// empty is gone, and reading it again would find nothing.
fn changed_container<'a>(
    changed: impl Iterator<Item = &'a str>,
    after: &BTreeSet<String>,
) -> String {
    let mut common: Option<Vec<&str>> = None;
    for address in changed {
        let mut parts: Vec<&str> = address.trim_start_matches('/').split('/').collect();
        parts.pop();
        common = Some(match common {
            None => parts,
            Some(common) => common
                .iter()
                .zip(&parts)
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| *a)
                .collect(),
        });
    }
    let mut parts = common.unwrap_or_default();
    loop {
        let container = format!("/{}", parts.join("/"));
        let below = format!("{container}/");
        let exists = after
            .iter()
            .map(String::as_str)
            .chain(COMMANDS.iter().map(|c| c.address))
            .any(|a| a.starts_with(&below));
        if parts.is_empty() || exists {
            return container;
        }
        parts.pop();
    }
}

/// The HTTP status and JSON body for `url`.
pub fn answer(url: &str, namespace: &Namespace, osc_port: u16) -> (u16, String) {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let path = if path.len() > 1 {
        path.trim_end_matches('/')
    } else {
        path
    };
    if query == "HOST_INFO" {
        return (200, host_info(osc_port).to_string());
    }
    let Some(node) = node(namespace, path) else {
        return (
            404,
            json!({ "error": format!("no node {path}") }).to_string(),
        );
    };
    if query.is_empty() {
        return (200, node.to_string());
    }
    match node.get(query) {
        Some(value) => (200, json!({ query: value }).to_string()),
        None if ATTRIBUTES.contains(&query) => (204, String::new()),
        None => (
            400,
            json!({ "error": format!("unknown attribute {query}") }).to_string(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn namespace() -> Namespace {
        let mut registry = Registry::new();
        registry.register(
            ParamSpec::float("master.brightness", 1.0, 0.0, 4.0).with_description("Exposure"),
        );
        registry.register(ParamSpec::enumeration(
            "shader.aurora.blend",
            &["normal", "add"],
            1,
        ));
        for spec in crate::audio::audio_params() {
            registry.register(spec);
        }
        let shared = SharedNamespace::default();
        let catalogue = Catalogue {
            presets: vec!["colony".into(), "fluid".into()],
            preset: Some("fluid".into()),
            ..Catalogue::default()
        };
        shared.publish(&registry, &catalogue);
        (*shared.get()).clone()
    }

    #[test]
    fn presets_are_a_node_listing_them_with_the_one_playing() {
        let (status, body) = answer("/sylva/preset", &namespace(), 9000);
        assert_eq!(status, 200);
        let node: Json = serde_json::from_str(&body).unwrap_or_default();
        assert_eq!(node["VALUE"], json!(["fluid"]));
        assert_eq!(node["RANGE"], json!([{ "VALS": ["colony", "fluid"] }]));
        // The node is also the container of /sylva/preset/save's kin.
        let (_, root) = answer("/", &namespace(), 9000);
        assert!(root.contains("\"/sylva/preset\""), "{root}");
    }

    #[test]
    fn listeners_hear_of_parameters_that_come_and_go() {
        let shared = SharedNamespace::default();
        let (sender, heard) = std::sync::mpsc::sync_channel(16);
        shared.listeners.lock().expect("lock").push(sender);
        let mut registry = Registry::new();
        registry.register(ParamSpec::float("colony.speed", 1.0, 0.0, 2.0));
        let catalogue = Catalogue::default();
        shared.publish(&registry, &catalogue);
        registry.retain(|_| false);
        registry.register(ParamSpec::float("fluid.gravity", 1.0, 0.0, 2.0));
        shared.publish(&registry, &catalogue);
        let texts: Vec<String> = heard
            .try_iter()
            .filter_map(|o| match o {
                ClientMessage::Text(text) => Some(text),
                ClientMessage::Osc(..) => None,
            })
            .collect();
        assert_eq!(texts.len(), 3, "{texts:?}");
        assert_eq!(
            texts.last().map(String::as_str),
            Some(r#"{"COMMAND":"PATH_CHANGED","DATA":"/sylva"}"#),
            "one PATH_CHANGED of the container holding both, after them"
        );
        assert!(
            texts
                .iter()
                .any(|t| t.contains("PATH_ADDED") && t.contains("/sylva/fluid/gravity"))
        );
        assert!(
            texts
                .iter()
                .any(|t| t.contains("PATH_REMOVED") && t.contains("/sylva/colony/speed"))
        );
    }

    #[test]
    fn path_changed_names_the_deepest_container_still_there() {
        let after: BTreeSet<String> = ["/sylva/fluid/gravity", "/sylva/fluid/look"]
            .map(String::from)
            .into();
        let container = |changed: &[&str]| changed_container(changed.iter().copied(), &after);
        assert_eq!(container(&["/sylva/fluid/look"]), "/sylva/fluid");
        assert_eq!(
            container(&["/sylva/colony/a", "/sylva/colony/b"]),
            "/sylva",
            "the colony's container went with its parameters"
        );
        assert_eq!(
            container(&["/sylva/fluid/look", "/sylva/shader/sky/glow"]),
            "/sylva"
        );
    }

    #[test]
    fn parameters_carry_the_required_attributes() {
        let (status, body) = answer("/sylva/master/brightness", &namespace(), 9000);
        assert_eq!(status, 200);
        let node: Json = serde_json::from_str(&body).unwrap_or_default();
        assert_eq!(node["FULL_PATH"], "/sylva/master/brightness");
        assert_eq!(node["TYPE"], "f");
        assert_eq!(node["VALUE"], json!([1.0]));
        assert_eq!(node["RANGE"], json!([{ "MIN": 0.0, "MAX": 4.0 }]));
        assert_eq!(node["ACCESS"], 3);
        assert_eq!(node["DESCRIPTION"], "Exposure");
        let (_, blend) = answer("/sylva/shader/aurora/blend", &namespace(), 9000);
        let blend: Json = serde_json::from_str(&blend).unwrap_or_default();
        assert_eq!(blend["VALUE"], json!(["add"]));
        assert_eq!(blend["RANGE"], json!([{ "VALS": ["normal", "add"] }]));
        let (_, bass) = answer("/sylva/audio/bass", &namespace(), 9000);
        let bass: Json = serde_json::from_str(&bass).unwrap_or_default();
        assert_eq!(bass["ACCESS"], 1, "the analysis is read-only");
        let (_, bands) = answer("/sylva/audio/bands", &namespace(), 9000);
        let bands: Json = serde_json::from_str(&bands).unwrap_or_default();
        assert_eq!(bands["TYPE"], "f".repeat(16));
        assert_eq!(bands["VALUE"], json!(vec![0.0; 16]));
    }

    #[test]
    fn containers_single_attributes_and_host_info() {
        let (_, root) = answer("/", &namespace(), 9000);
        let root: Json = serde_json::from_str(&root).unwrap_or_default();
        assert_eq!(
            root["CONTENTS"]["sylva"]["CONTENTS"]["master"]["FULL_PATH"],
            "/sylva/master"
        );
        assert_eq!(
            answer("/sylva/master/brightness?VALUE", &namespace(), 9000),
            (200, "{\"VALUE\":[1.0]}".to_string())
        );
        assert_eq!(answer("/nothing", &namespace(), 9000).0, 404);
        assert_eq!(
            answer("/sylva/master/brightness?BOGUS", &namespace(), 9000).0,
            400
        );
        let (_, info) = answer("/?HOST_INFO", &namespace(), 9123);
        let info: Json = serde_json::from_str(&info).unwrap_or_default();
        assert_eq!(info["OSC_PORT"], 9123);
        assert_eq!(info["OSC_TRANSPORT"], "UDP");
    }
}
