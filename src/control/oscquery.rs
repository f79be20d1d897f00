//! OSCQuery (the Vidvox proposal) over HTTP: the namespace of every
//! parameter as JSON, one attribute with `?VALUE` and friends, and
//! `?HOST_INFO`. The server thread answers from a snapshot the main thread
//! publishes once per frame; it never touches the registry.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock};

use serde_json::{Value as Json, json};

use super::osc::{address_of, args_of};
use crate::params::{ParamKind, ParamSpec, Registry, Value};

/// What the server shows: the specs (replaced when parameters come or go)
/// and the current target values.
#[derive(Debug, Clone, Default)]
pub struct Namespace {
    specs: Arc<Vec<ParamSpec>>,
    values: Vec<Value>,
    revision: u64,
}

/// The snapshot shared with the server thread.
#[derive(Debug, Clone, Default)]
pub struct SharedNamespace(Arc<RwLock<Arc<Namespace>>>);

impl SharedNamespace {
    /// Publishes the registry's state (step 7 of the frame).
    pub fn publish(&self, registry: &Registry) {
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
        let next = Arc::new(Namespace {
            specs,
            values,
            revision: registry.revision(),
        });
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = next;
    }

    fn get(&self) -> Arc<Namespace> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Starts the HTTP server on `port` (0 picks one) and returns the port;
/// `osc_port` is announced in HOST_INFO.
pub fn serve(
    bind: &str,
    port: u16,
    osc_port: u16,
    namespace: SharedNamespace,
) -> Result<u16, String> {
    let server = tiny_http::Server::http((bind, port)).map_err(|e| e.to_string())?;
    let port = server.server_addr().to_ip().map_or(port, |a| a.port());
    std::thread::Builder::new()
        .name("sylva-oscquery".into())
        .spawn(move || {
            for request in server.incoming_requests() {
                let (status, body) = answer(request.url(), &namespace.get(), osc_port);
                let mut response = tiny_http::Response::from_string(body).with_status_code(status);
                if let Ok(header) =
                    tiny_http::Header::from_bytes("Content-Type", "application/json")
                {
                    response = response.with_header(header);
                }
                let _ = request.respond(response);
            }
        })
        .map_err(|e| e.to_string())?;
    tracing::info!("OSCQuery on http://{bind}:{port}/");
    Ok(port)
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
            "UNIT": true, "CLIPMODE": true, "LISTEN": false, "PATH_CHANGED": false
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

#[derive(Default)]
struct Tree<'a> {
    children: BTreeMap<String, Tree<'a>>,
    leaf: Option<(&'a ParamSpec, &'a Value)>,
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

    fn json(&self, full_path: &str) -> Json {
        let mut node = match self.leaf {
            Some((spec, value)) => parameter(spec, value),
            None => json!({ "ACCESS": 0 }),
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
        ParamKind::Text | ParamKind::Path => ("s", Json::Null),
    };
    let mut node = json!({
        "TYPE": osc_type,
        "VALUE": args,
        "ACCESS": 3,
        "DESCRIPTION": spec.description,
        "CLIPMODE": "both",
    });
    if !range.is_null() {
        node["RANGE"] = range;
    }
    if !spec.unit.is_empty() {
        node["UNIT"] = json!([spec.unit]);
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
        let shared = SharedNamespace::default();
        shared.publish(&registry);
        (*shared.get()).clone()
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
