//! The OSCQuery namespace: every parameter as JSON (its type, range, value,
//! access and description), one attribute with `?VALUE` and friends,
//! `?HOST_INFO`; the snapshot the main thread publishes once per frame and
//! the changes it streams to the WebSocket listeners.

use std::collections::BTreeMap;
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use serde_json::{Value as Json, json};

use crate::control::Catalogue;
use crate::control::osc::{address_of, args_of};
use crate::params::{ParamKind, ParamSpec, Registry, Value};

/// What the server shows: the specs (replaced when parameters come or go)
/// and the current target values.
#[derive(Debug, Clone, Default)]
pub struct Namespace {
    specs: Arc<Vec<ParamSpec>>,
    values: Vec<Value>,
    revision: u64,
    catalogue: Catalogue,
}

/// What a WebSocket client is sent.
#[derive(Debug, Clone)]
pub enum Outgoing {
    /// A parameter's change: its address and the OSC bytes.
    Osc(String, Vec<u8>),
    /// A namespace event as OSCQuery's JSON (`PATH_ADDED`, `PATH_REMOVED`).
    Text(String),
}

/// A WebSocket client's queue.
pub(super) type Listener = SyncSender<Outgoing>;

/// Paths reported one by one when the namespace changes; past this, one
/// `PATH_CHANGED` of the root says to read it again.
const MAX_PATH_EVENTS: usize = 256;

/// The snapshot shared with the server threads, and the WebSocket
/// listeners that changes are streamed to.
#[derive(Debug, Clone, Default)]
pub struct SharedNamespace {
    snapshot: Arc<RwLock<Arc<Namespace>>>,
    pub(super) listeners: Arc<Mutex<Vec<Listener>>>,
}

impl SharedNamespace {
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
            l.try_send(Outgoing::Osc(address.clone(), bytes.clone()))
                .is_ok()
        });
    }

    /// Tells every WebSocket client of parameters that came and went.
    fn paths_changed(&self, before: &[ParamSpec], after: &[ParamSpec]) {
        let names = |specs: &[ParamSpec]| -> std::collections::BTreeSet<String> {
            specs.iter().map(|s| address_of(&s.name)).collect()
        };
        let (before, after) = (names(before), names(after));
        let mut events: Vec<Json> = after
            .difference(&before)
            .map(|path| json!({ "COMMAND": "PATH_ADDED", "DATA": path }))
            .chain(
                before
                    .difference(&after)
                    .map(|path| json!({ "COMMAND": "PATH_REMOVED", "DATA": path })),
            )
            .collect();
        if events.is_empty() {
            return;
        }
        if events.len() > MAX_PATH_EVENTS {
            events = vec![json!({ "COMMAND": "PATH_CHANGED", "DATA": "/" })];
        }
        let mut listeners = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        listeners.retain(|l| {
            events
                .iter()
                .all(|e| l.try_send(Outgoing::Text(e.to_string())).is_ok())
        });
    }

    /// Publishes the registry's state and the show's catalogue (step 7 of
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

const ATTRIBUTES: [&str; 9] = [
    "FULL_PATH",
    "CONTENTS",
    "TYPE",
    "VALUE",
    "RANGE",
    "ACCESS",
    "DESCRIPTION",
    "UNIT",
    "CLIPMODE",
];

fn host_info(osc_port: u16) -> Json {
    json!({
        "NAME": "sylva",
        "OSC_PORT": osc_port,
        "OSC_TRANSPORT": "UDP",
        "EXTENSIONS": {
            "ACCESS": true, "VALUE": true, "RANGE": true, "DESCRIPTION": true,
            "UNIT": true, "CLIPMODE": true, "LISTEN": true, "PATH_CHANGED": true,
            "PATH_ADDED": true, "PATH_REMOVED": true
        }
    })
}

/// The node at `path` with everything below it.
fn node(namespace: &Namespace, path: &str) -> Option<Json> {
    let mut tree = Tree::default();
    for (spec, value) in namespace.specs.iter().zip(&namespace.values) {
        let address = address_of(&spec.name);
        let parts: Vec<&str> = address.trim_start_matches('/').split('/').collect();
        tree.insert(&parts, spec, value);
    }
    let offers = catalogue_nodes(&namespace.catalogue);
    for (address, node) in &offers {
        let parts: Vec<&str> = address.trim_start_matches('/').split('/').collect();
        tree.offer(&parts, node);
    }
    let mut at = &tree;
    let mut full = String::new();
    for part in path
        .trim_start_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
    {
        at = at.children.get(part)?;
        full.push('/');
        full.push_str(part);
    }
    Some(at.json(if full.is_empty() { "/" } else { &full }))
}

/// The presets and playlists as OSCQuery nodes: `/sylva/preset` (its
/// value the preset on stage, its `VALS` every preset; writing one loads
/// it with the crossfade) and `/sylva/playlist/play` the same for
/// playlists, so Chataigne, TouchDesigner and the phone page list them.
fn catalogue_nodes(catalogue: &Catalogue) -> Vec<(&'static str, Json)> {
    let node = |value: &Option<String>, vals: &[String], description: &str| {
        json!({
            "TYPE": "s",
            "VALUE": [value.clone().unwrap_or_default()],
            "RANGE": [{ "VALS": vals }],
            "ACCESS": 3,
            "DESCRIPTION": description,
        })
    };
    vec![
        (
            "/sylva/preset",
            node(
                &catalogue.preset,
                &catalogue.presets,
                "Load a preset (with the crossfade)",
            ),
        ),
        (
            "/sylva/playlist/play",
            node(
                &catalogue.playlist,
                &catalogue.playlists,
                "Play a playlist from its start",
            ),
        ),
        (
            "/sylva/ui/favourites",
            json!({
                "TYPE": "s",
                "VALUE": [catalogue.favourites],
                "ACCESS": 3,
                "DESCRIPTION": "The phone page's favourites: a JSON list of addresses, kept in the show folder",
            }),
        ),
    ]
}

#[derive(Default)]
struct Tree<'a> {
    children: BTreeMap<String, Tree<'a>>,
    leaf: Option<(&'a ParamSpec, &'a Value)>,
    offered: Option<&'a Json>,
}

impl<'a> Tree<'a> {
    fn insert(&mut self, parts: &[&str], spec: &'a ParamSpec, value: &'a Value) {
        match parts.split_first() {
            Some((first, rest)) => self
                .children
                .entry(first.to_string())
                .or_default()
                .insert(rest, spec, value),
            None => self.leaf = Some((spec, value)),
        }
    }

    fn offer(&mut self, parts: &[&str], node: &'a Json) {
        match parts.split_first() {
            Some((first, rest)) => self
                .children
                .entry(first.to_string())
                .or_default()
                .offer(rest, node),
            None => self.offered = Some(node),
        }
    }

    fn json(&self, full_path: &str) -> Json {
        let mut node = match (self.leaf, self.offered) {
            (Some((spec, value)), _) => parameter(spec, value),
            (None, Some(offered)) => offered.clone(),
            (None, None) => json!({ "ACCESS": 0 }),
        };
        node["FULL_PATH"] = json!(full_path);
        if !self.children.is_empty() {
            let base = if full_path == "/" {
                String::new()
            } else {
                full_path.to_string()
            };
            let contents: serde_json::Map<String, Json> = self
                .children
                .iter()
                .map(|(name, child)| (name.clone(), child.json(&format!("{base}/{name}"))))
                .collect();
            node["CONTENTS"] = Json::Object(contents);
        }
        node
    }
}

/// A parameter's attributes.
fn parameter(spec: &ParamSpec, value: &Value) -> Json {
    let args: Vec<Json> = args_of(spec, value)
        .into_iter()
        .map(|a| match a {
            rosc::OscType::Float(v) => json!(v),
            rosc::OscType::Int(v) => json!(v),
            rosc::OscType::Bool(v) => json!(v),
            rosc::OscType::String(s) => json!(s),
            _ => Json::Null,
        })
        .collect();
    let list_type: String;
    let (osc_type, range) = match &spec.kind {
        ParamKind::Float { min, max } => ("f", json!([{ "MIN": min, "MAX": max }])),
        ParamKind::Int { min, max } => ("i", json!([{ "MIN": min, "MAX": max }])),
        ParamKind::Bool => (
            if matches!(value, Value::Bool(true)) {
                "T"
            } else {
                "F"
            },
            json!([{ "VALS": [false, true] }]),
        ),
        ParamKind::Enum { options } => ("s", json!([{ "VALS": options }])),
        ParamKind::Vec3 { min, max } => (
            "fff",
            json!([{ "MIN": min, "MAX": max }, { "MIN": min, "MAX": max }, { "MIN": min, "MAX": max }]),
        ),
        ParamKind::Colour => (
            "ffff",
            json!([{ "MIN": 0.0 }, { "MIN": 0.0 }, { "MIN": 0.0 }, { "MIN": 0.0 }]),
        ),
        ParamKind::Text | ParamKind::Path | ParamKind::Texture => ("s", Json::Null),
        ParamKind::List { len, min, max } => {
            list_type = "f".repeat(*len);
            (
                list_type.as_str(),
                Json::Array(vec![json!({ "MIN": min, "MAX": max }); *len]),
            )
        }
    };
    let mut node = json!({
        "TYPE": osc_type,
        "VALUE": args,
        // OSCQuery: 1 is read-only, 3 read and write.
        "ACCESS": if spec.read_only { 1 } else { 3 },
        "DESCRIPTION": spec.description,
        "CLIPMODE": "both",
    });
    if !range.is_null() {
        node["RANGE"] = range;
    }
    if !spec.unit.is_empty() {
        node["UNIT"] = json!([spec.unit]);
    }
    // Not in the proposal (clients skip attributes they do not know): the
    // phone page says how slowly a control follows its writes.
    if spec.smoothing > 0.0 {
        node["SMOOTHING"] = json!(spec.smoothing);
    }
    node
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
                Outgoing::Text(text) => Some(text),
                Outgoing::Osc(..) => None,
            })
            .collect();
        assert_eq!(texts.len(), 2, "{texts:?}");
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
