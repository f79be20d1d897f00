//! The paths one WebSocket client listens to (OSCQuery's LISTEN), bounded
//! in bytes as well as in count: only a path the namespace has is kept
//! (a parameter, a command, or a container above them), so what a client
//! can make the server hold is the size of the show's own names, never
//! 65 KB strings of its choosing. The bytes every client holds are summed
//! in one counter the control surface reports.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::namespace::Namespace;

/// Paths one WebSocket client may listen to.
pub const MAX_LISTENED: usize = 8_192;

/// Bytes of paths one WebSocket client may listen to.
pub const MAX_LISTENED_BYTES: usize = 256 << 10;

/// Why a LISTEN was not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ListenRefused {
    /// The namespace has no such node.
    #[error("no such path")]
    Unknown,
    /// The client listens to [`MAX_LISTENED`] paths or
    /// [`MAX_LISTENED_BYTES`] already.
    #[error("listening to too much already")]
    Full,
}

/// What one client listens to.
#[derive(Debug)]
pub struct Listening {
    paths: Vec<String>,
    bytes: usize,
    total: Arc<AtomicUsize>,
}

impl Listening {
    /// Nothing yet; its bytes are added to `total` while it lasts.
    pub fn new(total: Arc<AtomicUsize>) -> Self {
        Self {
            paths: Vec::new(),
            bytes: 0,
            total,
        }
    }

    /// Listens to `path` if `namespace` has it and there is room; a path
    /// already listened to is no change.
    pub fn listen(&mut self, path: &str, namespace: &Namespace) -> Result<(), ListenRefused> {
        let path = normal(path);
        if !namespace.has(path) {
            return Err(ListenRefused::Unknown);
        }
        if self.paths.iter().any(|p| p == path) {
            return Ok(());
        }
        if self.paths.len() >= MAX_LISTENED || self.bytes + path.len() > MAX_LISTENED_BYTES {
            return Err(ListenRefused::Full);
        }
        self.paths.push(path.to_string());
        self.bytes += path.len();
        self.total.fetch_add(path.len(), Ordering::Relaxed);
        Ok(())
    }

    /// Stops listening to `path`.
    pub fn ignore(&mut self, path: &str) {
        let path = normal(path);
        if let Some(at) = self.paths.iter().position(|p| p == path) {
            let gone = self.paths.swap_remove(at);
            self.bytes -= gone.len();
            self.total.fetch_sub(gone.len(), Ordering::Relaxed);
        }
    }

    /// Whether a change of `address` is listened to.
    pub fn covers(&self, address: &str) -> bool {
        self.paths.iter().any(|path| listened(path, address))
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.total.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// `path` without a trailing slash (the root stays `/`).
fn normal(path: &str) -> &str {
    match path.trim_end_matches('/') {
        "" if path.starts_with('/') => "/",
        trimmed => trimmed,
    }
}

/// Whether listening to `path` covers `address`: the path itself, or a
/// container above it.
fn listened(path: &str, address: &str) -> bool {
    let container = path.trim_end_matches('/');
    address == path
        || container.is_empty()
        || address
            .strip_prefix(container)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::Catalogue;
    use crate::control::oscquery::SharedNamespace;
    use crate::params::{ParamSpec, Registry};

    fn namespace() -> Arc<Namespace> {
        let mut registry = Registry::new();
        registry.register(ParamSpec::float("master.brightness", 1.0, 0.0, 4.0));
        registry.register(ParamSpec::float("shader.sky.glow", 1.0, 0.0, 4.0));
        let shared = SharedNamespace::default();
        shared.publish(&registry, &Catalogue::default());
        shared.get()
    }

    #[test]
    fn a_container_covers_what_is_below_it_only() {
        assert!(listened(
            "/sylva/master/brightness",
            "/sylva/master/brightness"
        ));
        assert!(listened("/sylva/master", "/sylva/master/brightness"));
        assert!(listened("/", "/sylva/colony/growth_speed"));
        assert!(!listened("/sylva/master", "/sylva/masterful"));
        assert!(!listened("/sylva/colony", "/sylva/master/brightness"));
    }

    #[test]
    fn only_paths_the_namespace_has_are_kept() {
        let namespace = namespace();
        let total = Arc::new(AtomicUsize::new(0));
        let mut listening = Listening::new(total.clone());
        for known in [
            "/",
            "/sylva",
            "/sylva/",
            "/sylva/master/brightness",
            "/sylva/shader/sky",
            "/sylva/preset/save",
            "/sylva/ui",
        ] {
            assert_eq!(listening.listen(known, &namespace), Ok(()), "{known}");
        }
        for unknown in [
            "",
            "sylva",
            "/sylva/master/bright",
            "/sylva/master.brightness",
            "/sylva/master/brightness/more",
            "/sylva/shader/sky.glow",
            "/sylva//master",
            &format!("/sylva/{}", "x".repeat(65_000)),
        ] {
            assert_eq!(
                listening.listen(unknown, &namespace),
                Err(ListenRefused::Unknown),
                "{unknown:.40}"
            );
        }
        let kept: usize = listening.paths.iter().map(String::len).sum();
        assert_eq!(total.load(Ordering::Relaxed), kept);
        assert!(listening.covers("/sylva/shader/sky/glow"));
        listening.ignore("/");
        listening.ignore("/sylva/");
        assert!(!listening.covers("/sylva/other/thing"));
        drop(listening);
        assert_eq!(
            total.load(Ordering::Relaxed),
            0,
            "a client that left holds nothing"
        );
    }

    #[test]
    fn the_bytes_listened_to_are_bounded() {
        let mut registry = Registry::new();
        // Long names, near what a preset may hold: the cap is in bytes.
        let name = |i: usize| format!("shader.{}{i}.glow", "n".repeat(200));
        for i in 0..2_000 {
            registry.register(ParamSpec::float(name(i), 1.0, 0.0, 4.0));
        }
        let shared = SharedNamespace::default();
        shared.publish(&registry, &Catalogue::default());
        let namespace = shared.get();
        let total = Arc::new(AtomicUsize::new(0));
        let mut listening = Listening::new(total.clone());
        let mut full = 0;
        for i in 0..2_000 {
            let path = crate::control::osc::address_of(&name(i));
            if listening.listen(&path, &namespace) == Err(ListenRefused::Full) {
                full += 1;
            }
        }
        assert!(full > 0, "2,000 paths of 220 bytes pass the byte cap");
        assert!(total.load(Ordering::Relaxed) <= MAX_LISTENED_BYTES);
    }
}
