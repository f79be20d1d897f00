//! What one OSCQuery node says, as the proposal lays it out: a parameter's
//! TYPE, VALUE, RANGE, CLIPMODE and UNIT (each of the last four an array
//! with one entry per type tag), ACCESS and DESCRIPTION; a node for each
//! of the show's commands (`osc_commands::COMMANDS`), the catalogue's
//! presets, playlists and favourites laid over theirs; containers with
//! their CONTENTS; and `?HOST_INFO` with the extensions this server
//! really produces. Built on a server thread from the published snapshot.

use std::collections::BTreeMap;

use serde_json::{Value as Json, json};

use super::namespace::Namespace;
use crate::control::Catalogue;
use crate::control::osc::{address_of, args_of};
use crate::control::osc_commands::{COMMANDS, OscCommand};
use crate::layers::shader::isf::library;
use crate::params::{ParamKind, ParamSpec, Value};

/// The optional attributes and streaming commands `?HOST_INFO` claims.
/// Each one is produced: the attributes on the nodes that have them,
/// LISTEN by the WebSocket, the PATH_* messages when a preset changes the
/// namespace (`namespace::SharedNamespace::publish`). Nothing is ever
/// renamed, so PATH_RENAMED is not claimed.
pub const EXTENSIONS: [&str; 11] = [
    "ACCESS",
    "VALUE",
    "RANGE",
    "DESCRIPTION",
    "UNIT",
    "CLIPMODE",
    "OVERLOADS",
    "LISTEN",
    "PATH_CHANGED",
    "PATH_ADDED",
    "PATH_REMOVED",
];

/// Attributes a node may carry; asking a node for one it lacks is 204,
/// for any other name 400.
pub const ATTRIBUTES: [&str; 11] = [
    "FULL_PATH",
    "CONTENTS",
    "TYPE",
    "VALUE",
    "RANGE",
    "ACCESS",
    "DESCRIPTION",
    "UNIT",
    "CLIPMODE",
    "OVERLOADS",
    "SMOOTHING",
];

/// `?HOST_INFO`: the name, the OSC port and the extensions.
pub fn host_info(osc_port: u16) -> Json {
    let extensions: serde_json::Map<String, Json> = EXTENSIONS
        .iter()
        .map(|name| (name.to_string(), Json::Bool(true)))
        .collect();
    json!({
        "NAME": "sylva",
        "OSC_PORT": osc_port,
        "OSC_TRANSPORT": "UDP",
        "EXTENSIONS": extensions,
    })
}

/// The node at `path` with everything below it.
pub fn node(namespace: &Namespace, path: &str) -> Option<Json> {
    let mut tree = AddressTree::default();
    for (spec, value) in namespace.specs.iter().zip(&namespace.values) {
        let address = address_of(&spec.name);
        let parts: Vec<&str> = address.trim_start_matches('/').split('/').collect();
        tree.insert(&parts, spec, value);
    }
    let commands: Vec<(&str, Json)> = COMMANDS
        .iter()
        .map(|c| (c.address, command(c, &namespace.catalogue)))
        .collect();
    for (address, node) in &commands {
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
    Some(at.json(
        if full.is_empty() { "/" } else { &full },
        &namespace.catalogue,
    ))
}

/// A command's node: its type tags (`N` for one that takes nothing, a
/// button to OSCQuery clients), write-only, and the longer form it also
/// takes as an overload. The presets, playlists and favourites the show
/// can report are laid over theirs: `/sylva/preset` (its value the preset
/// on stage, its `VALS` every preset) and `/sylva/playlist/play` the same
/// for playlists, so Chataigne, TouchDesigner and the phone page list them.
fn command(command: &OscCommand, catalogue: &Catalogue) -> Json {
    let tags = if command.tags.is_empty() {
        "N"
    } else {
        command.tags
    };
    let mut node = json!({
        "TYPE": tags,
        // OSCQuery: 2 is write-only.
        "ACCESS": 2,
        "DESCRIPTION": command.description,
    });
    if !command.optional.is_empty() {
        node["OVERLOADS"] = json!([{ "TYPE": format!("{}{}", command.tags, command.optional) }]);
    }
    let (value, vals) = match command.address {
        "/sylva/preset" => (
            catalogue.preset.clone().unwrap_or_default(),
            Some(&catalogue.presets),
        ),
        "/sylva/playlist/play" => (
            catalogue.playlist.clone().unwrap_or_default(),
            Some(&catalogue.playlists),
        ),
        "/sylva/ui/favourites" => (catalogue.favourites.clone(), None),
        _ => return node,
    };
    node["VALUE"] = json!([value]);
    node["ACCESS"] = json!(3);
    if let Some(vals) = vals {
        node["RANGE"] = json!([{ "VALS": vals }]);
    }
    node
}

#[derive(Default)]
struct AddressTree<'a> {
    children: BTreeMap<String, AddressTree<'a>>,
    leaf: Option<(&'a ParamSpec, &'a Value)>,
    offered: Option<&'a Json>,
}

impl<'a> AddressTree<'a> {
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

    fn json(&self, full_path: &str, catalogue: &Catalogue) -> Json {
        let mut node = match (self.leaf, self.offered) {
            (Some((spec, value)), _) => parameter(spec, value, catalogue),
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
                .map(|(name, child)| {
                    let path = format!("{base}/{name}");
                    (name.clone(), child.json(&path, catalogue))
                })
                .collect();
            node["CONTENTS"] = Json::Object(contents);
        }
        node
    }
}

/// A parameter's attributes. VALUE, RANGE, CLIPMODE and UNIT hold one
/// entry per type tag, as the proposal asks (a vec3 has three of each); a
/// shader layer's `file` has the catalogue's shader library as its VALS.
fn parameter(spec: &ParamSpec, value: &Value, catalogue: &Catalogue) -> Json {
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
            Json::Array(vec![json!({ "MIN": min, "MAX": max }); 3]),
        ),
        ParamKind::Colour => ("ffff", Json::Array(vec![json!({ "MIN": 0.0 }); 4])),
        ParamKind::Path if library::is_shader_file(&spec.name) => {
            ("s", json!([{ "VALS": catalogue.shaders }]))
        }
        ParamKind::Text | ParamKind::Path | ParamKind::Texture => ("s", Json::Null),
        ParamKind::List { len, min, max } => {
            list_type = "f".repeat(*len);
            (
                list_type.as_str(),
                Json::Array(vec![json!({ "MIN": min, "MAX": max }); *len]),
            )
        }
    };
    let tags = osc_type.len();
    let mut node = json!({
        "TYPE": osc_type,
        "VALUE": args,
        // OSCQuery: 1 is read-only, 3 read and write.
        "ACCESS": if spec.read_only { 1 } else { 3 },
        "DESCRIPTION": spec.description,
    });
    if !range.is_null() {
        node["RANGE"] = range;
    }
    // What `ParamSpec::clamp` does to a number past its range; choices and
    // text are refused or taken whole, so they carry no clip mode.
    let clip = match &spec.kind {
        ParamKind::Float { .. }
        | ParamKind::Int { .. }
        | ParamKind::Vec3 { .. }
        | ParamKind::List { .. } => Some("both"),
        ParamKind::Colour => Some("low"),
        _ => None,
    };
    if let Some(clip) = clip {
        node["CLIPMODE"] = json!(vec![clip; tags]);
    }
    if !spec.unit.is_empty() {
        node["UNIT"] = json!(vec![spec.unit.as_str(); tags]);
    }
    // Not in the proposal (clients skip attributes they do not know): the
    // phone page says how slowly a control follows its writes.
    if spec.smoothing > 0.0 {
        node["SMOOTHING"] = json!(spec.smoothing);
    }
    // Not in the proposal either: what the phone page shows instead of a
    // fader. A size or count rebuilds its layer at each change, so it is
    // a number typed in, not swept; a texture input names a source; a
    // shader layer's file is picked from the library.
    let control = match (&spec.kind, spec.weight) {
        (ParamKind::Texture, _) => Some("source"),
        (ParamKind::Path, _) if library::is_shader_file(&spec.name) => Some("shader"),
        (_, crate::params::Weight::Structural) => Some("number"),
        _ => None,
    };
    if let Some(control) = control {
        node["SYLVA_CONTROL"] = json!(control);
    }
    // And the NDI sources on the network a texture input may name.
    if spec.kind == ParamKind::Texture && !catalogue.ndi_sources.is_empty() {
        node["SYLVA_SOURCES"] = json!(catalogue.ndi_sources);
    }
    node
}

#[cfg(test)]
mod tests {
    use super::super::namespace::{SharedNamespace, answer};
    use super::*;
    use crate::params::Registry;

    /// A namespace with a parameter of every kind, units on the ones with
    /// several values.
    fn namespace() -> Namespace {
        let mut registry = Registry::new();
        for spec in [
            ParamSpec::float("a.f", 1.0, 0.0, 4.0).with_unit("s"),
            ParamSpec::int("a.i", 1, 0, 9),
            ParamSpec::bool("a.b", true),
            ParamSpec::enumeration("a.e", &["x", "y"], 1),
            ParamSpec::vec3("a.v", [0.0; 3], -1.0, 1.0).with_unit("m"),
            ParamSpec::colour("a.c", [1.0; 4]),
            ParamSpec::list("a.l", 5, 0.0, 1.0).read_only(),
            ParamSpec::text("a.t", "hello"),
            ParamSpec::path("shader.fx.file", "shader/aurora.wgsl"),
            ParamSpec::texture("shader.fx.input", ""),
        ] {
            registry.register(spec);
        }
        let shared = SharedNamespace::default();
        let catalogue = Catalogue {
            presets: vec!["one".into()],
            shaders: vec!["isf/kaleidoscope.fs".into(), "shader/aurora.wgsl".into()],
            ndi_sources: vec!["ndi:STUDIO (OBS)".into()],
            ..Catalogue::default()
        };
        shared.publish(&registry, &catalogue);
        (*shared.get()).clone()
    }

    #[test]
    fn a_shader_layer_s_file_offers_the_shader_library() {
        let file = tree("/sylva/shader/fx/file");
        assert_eq!(
            file["RANGE"],
            json!([{ "VALS": ["isf/kaleidoscope.fs", "shader/aurora.wgsl"] }])
        );
        assert_eq!(file["SYLVA_CONTROL"], "shader");
        assert_eq!(file["VALUE"], json!(["shader/aurora.wgsl"]));
        assert!(tree("/sylva/a/t")["RANGE"].is_null(), "other text is free");
    }

    #[test]
    fn a_texture_input_offers_the_ndi_sources_on_the_network() {
        let input = tree("/sylva/shader/fx/input");
        assert_eq!(input["SYLVA_CONTROL"], "source");
        assert_eq!(input["SYLVA_SOURCES"], json!(["ndi:STUDIO (OBS)"]));
        assert!(tree("/sylva/a/t")["SYLVA_SOURCES"].is_null());
    }

    fn tree(url: &str) -> Json {
        let (status, body) = answer(url, &namespace(), 9000);
        assert_eq!(status, 200, "{url}: {body}");
        serde_json::from_str(&body).unwrap_or_default()
    }

    /// Every node below `node`, itself first.
    fn walk<'a>(node: &'a Json, out: &mut Vec<&'a Json>) {
        out.push(node);
        if let Some(contents) = node["CONTENTS"].as_object() {
            for child in contents.values() {
                walk(child, out);
            }
        }
    }

    #[test]
    fn each_per_value_attribute_has_one_entry_per_type_tag() {
        let root = tree("/");
        let mut nodes = Vec::new();
        walk(&root, &mut nodes);
        let mut checked = 0;
        for node in nodes {
            let Some(tags) = node["TYPE"].as_str() else {
                continue;
            };
            for attribute in ["VALUE", "RANGE", "CLIPMODE", "UNIT"] {
                if node.get(attribute).is_some() {
                    let entries = node[attribute].as_array().map(Vec::len);
                    assert_eq!(entries, Some(tags.len()), "{attribute} of {node}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 20, "only {checked} attributes checked");
        let vec3 = tree("/sylva/a/v");
        assert_eq!(vec3["UNIT"], json!(["m", "m", "m"]));
        assert_eq!(vec3["CLIPMODE"], json!(["both", "both", "both"]));
        assert_eq!(
            tree("/sylva/a/c")["CLIPMODE"],
            json!(["low", "low", "low", "low"])
        );
        assert!(
            tree("/sylva/a/e").get("CLIPMODE").is_none(),
            "a choice is never clipped"
        );
    }

    #[test]
    fn every_command_is_a_node_taking_its_tags() {
        for command in COMMANDS {
            let node = tree(command.address);
            let tags = if command.tags.is_empty() {
                "N"
            } else {
                command.tags
            };
            assert_eq!(node["TYPE"], tags, "{}", command.address);
            assert_eq!(node["DESCRIPTION"], command.description);
            assert!(matches!(node["ACCESS"].as_u64(), Some(2 | 3)), "{node}");
            if !command.optional.is_empty() {
                let longer = format!("{}{}", command.tags, command.optional);
                assert_eq!(node["OVERLOADS"][0]["TYPE"], longer.as_str());
            }
        }
        let preset = tree("/sylva/preset");
        assert_eq!(preset["ACCESS"], 3, "the preset on stage can be read");
        assert_eq!(preset["RANGE"], json!([{ "VALS": ["one"] }]));
        assert_eq!(answer("/sylva/reseed?VALUE", &namespace(), 9000).0, 204);
    }

    #[test]
    fn host_info_claims_only_what_is_produced() {
        let info = host_info(9000);
        let claimed: Vec<&str> = info["EXTENSIONS"]
            .as_object()
            .map(|e| e.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert!(!claimed.contains(&"PATH_RENAMED"), "nothing is renamed");
        let root = tree("/").to_string();
        for attribute in claimed.iter().filter(|c| ATTRIBUTES.contains(c)) {
            assert!(
                root.contains(&format!("\"{attribute}\"")),
                "{attribute} claimed, never served"
            );
        }
    }
}
