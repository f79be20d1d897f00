//! When a simulation layer rebuilds its buffers: structural parameters
//! (particle count, capacity, shape) rebuild only after they have rested
//! for a moment, so a knob sweep does not reallocate on every tick; and a
//! structure is tried once, so a build that fails (a missing point cloud)
//! waits for the next change instead of retrying every frame.

/// Seconds a new structure must rest before it is built.
pub const REBUILD_REST: f64 = 0.25;

/// The structure built last and the one waiting to rest.
#[derive(Debug)]
pub struct Rebuild<T> {
    built: Option<T>,
    pending: Option<(T, f64)>,
}

impl<T> Default for Rebuild<T> {
    fn default() -> Self {
        Self {
            built: None,
            pending: None,
        }
    }
}

impl<T: PartialEq + Clone> Rebuild<T> {
    /// Whether to build `wanted` now (show time `time`): at once the first
    /// time, then once a new value has rested [`REBUILD_REST`] seconds.
    pub fn due(&mut self, wanted: &T, time: f64) -> bool {
        let rested = match (&self.built, &self.pending) {
            (None, _) => true,
            (Some(built), _) if built == wanted => {
                self.pending = None;
                return false;
            }
            (Some(_), Some((pending, since))) if pending == wanted => time - since >= REBUILD_REST,
            (Some(_), _) => {
                self.pending = Some((wanted.clone(), time));
                false
            }
        };
        if rested {
            self.built = Some(wanted.clone());
            self.pending = None;
        }
        rested
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_at_once_then_after_rest_and_never_twice() {
        let mut rebuild = Rebuild::default();
        assert!(rebuild.due(&1, 0.0), "the first structure builds at once");
        assert!(!rebuild.due(&1, 0.1));
        assert!(!rebuild.due(&2, 1.0), "a new value waits");
        assert!(!rebuild.due(&3, 1.1), "a moving knob restarts the wait");
        assert!(!rebuild.due(&3, 1.3));
        assert!(rebuild.due(&3, 1.4), "rested 0.3 s");
        assert!(
            !rebuild.due(&3, 5.0),
            "tried once, even if the build failed"
        );
    }
}
