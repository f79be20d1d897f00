//! The registry proper: named entries holding a spec, a target value (what
//! was last asked for) and a current value (what layers render with, which
//! follows the target through smoothing or a ramp).

use std::collections::{BTreeMap, BTreeSet};

use super::{Easing, ParamKind, ParamSpec, Ramp, Value};

/// Who changed a parameter; feedback over OSC is never echoed back to the
/// source of a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Loaded from a preset file.
    Preset,
    /// Set by the Lua script.
    Script,
    /// Set from a MIDI controller.
    Midi,
    /// Set from a lighting desk over Art-Net or sACN.
    Dmx,
    /// Set over OSC by the peer at this address.
    Osc(String),
    /// Set by a person in the HUD or with a key.
    Ui,
    /// Set by the runtime itself (playlists, layer rebuilds).
    Show,
}

impl Source {
    /// Whether a person played this change (a controller, an OSC peer such
    /// as TouchDesigner or the phone page, the HUD): such a write holds the
    /// parameter against the script until released.
    pub fn is_performer(&self) -> bool {
        matches!(
            self,
            Source::Midi | Source::Dmx | Source::Osc(_) | Source::Ui
        )
    }
}

/// One change of a target value, in the order it happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Full parameter name.
    pub name: String,
    /// New target value.
    pub value: Value,
    /// Who made the change.
    pub source: Source,
}

/// Why a write to the registry was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// No parameter has this name.
    #[error("unknown parameter {0:?}")]
    Unknown(String),
    /// The value cannot be read as the parameter's type.
    #[error("parameter {name:?} is a {expected}; {got} does not fit")]
    WrongType {
        /// Parameter name.
        name: String,
        /// The parameter's type name.
        expected: &'static str,
        /// The refused value, printed.
        got: String,
    },
    /// Only the show writes this parameter (the audio analysis).
    #[error("parameter {0:?} is read-only")]
    ReadOnly(String),
    /// Ramps need a numeric parameter.
    #[error("parameter {0:?} cannot be ramped (not a float, vec3 or colour)")]
    NotRampable(String),
}

#[derive(Debug, Clone)]
struct ParamEntry {
    spec: ParamSpec,
    target: Value,
    current: Value,
    ramp: Option<Ramp>,
    /// The current value plus this frame's modulation, when modulated.
    modulated: Option<Value>,
    /// A performer wrote it last: the script's writes pass it by until
    /// [`Registry::release`] (or the next preset, whose registry is new).
    held: bool,
}

/// Reports a parameter name the code reads but nothing declares.
fn undeclared(name: &str) {
    debug_assert!(
        false,
        "the code reads parameter {name:?}, which nothing declares"
    );
    static WARNED: std::sync::Mutex<BTreeSet<String>> = std::sync::Mutex::new(BTreeSet::new());
    let mut warned = WARNED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if warned.len() < 1_000 && warned.insert(name.to_string()) {
        tracing::error!("the code reads parameter {name:?}, which nothing declares; it reads as 0");
    }
}

/// All parameters of the show, by full name.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    entries: BTreeMap<String, ParamEntry>,
    /// The latest change of each parameter since the last drain: bounded by
    /// the parameter count however long nobody drains.
    changes: BTreeMap<String, Change>,
    revision: u64,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a parameter. A parameter that already exists with the same type
    /// keeps its value (so a reloaded shader keeps what the performer set);
    /// otherwise it starts at its default.
    pub fn register(&mut self, spec: ParamSpec) {
        let kept = self
            .entries
            .get(&spec.name)
            .filter(|old| old.spec.kind == spec.kind)
            .map(|old| (old.target.clone(), old.current.clone(), old.held));
        let (target, current, held) =
            kept.unwrap_or((spec.default.clone(), spec.default.clone(), false));
        let entry = ParamEntry {
            spec,
            target,
            current,
            ramp: None,
            modulated: None,
            held,
        };
        self.entries.insert(entry.spec.name.clone(), entry);
        self.revision += 1;
    }

    /// A number that changes whenever a parameter is added, removed or
    /// redefined, so readers can cache the specs.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Removes every parameter whose name fails `keep`.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.entries.retain(|name, _| keep(name));
        self.revision += 1;
    }

    /// The spec of a parameter.
    pub fn spec(&self, name: &str) -> Option<&ParamSpec> {
        self.entries.get(name).map(|e| &e.spec)
    }

    /// Whether a parameter exists.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// The current (smoothed) value with this frame's modulation, which
    /// layers render with.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.entries
            .get(name)
            .map(|e| e.modulated.as_ref().unwrap_or(&e.current))
    }

    /// The current value without modulation: what MIDI, OSC and Lua set.
    pub fn base(&self, name: &str) -> Option<&Value> {
        self.entries.get(name).map(|e| &e.current)
    }

    /// The target value: the last one asked for.
    pub fn target(&self, name: &str) -> Option<&Value> {
        self.entries.get(name).map(|e| &e.target)
    }

    /// The current value as a float; 0 for unknown or non-scalar parameters.
    pub fn float(&self, name: &str) -> f32 {
        self.declared(name).and_then(Value::as_f32).unwrap_or(0.0)
    }

    /// The current value of a bool parameter; false when unknown.
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.declared(name), Some(Value::Bool(true)))
    }

    /// The current index of an enum parameter; 0 when unknown.
    pub fn index(&self, name: &str) -> usize {
        match self.declared(name) {
            Some(Value::Enum(i)) => *i,
            _ => 0,
        }
    }

    /// The current index of an enum parameter; `None` where there is none.
    pub fn enum_index(&self, name: &str) -> Option<usize> {
        match self.get(name) {
            Some(Value::Enum(i)) => Some(*i),
            _ => None,
        }
    }

    /// The current text of a string or path parameter.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.declared(name) {
            Some(Value::Text(s)) => Some(s),
            _ => None,
        }
    }

    /// The value of a parameter the code itself names. A name no layer
    /// declares is a bug (a misspelling reads as 0 forever): tests fail on
    /// it, and a release build logs it once.
    pub(super) fn declared(&self, name: &str) -> Option<&Value> {
        let value = self.get(name);
        if value.is_none() {
            undeclared(name);
        }
        value
    }

    /// Sets a parameter's target, clamped to its range, and returns the value
    /// stored. Cancels a running ramp. Without smoothing the current value
    /// jumps at once. A performer's write holds the parameter: the script's
    /// writes to it are then passed by (the target stays, and is returned)
    /// until it is released.
    ///
    /// `"auto"` written to a layer's `count` turns its `auto_count` on
    /// (the count then fits the GPU while the show plays live, see
    /// `show/fit.rs`) and leaves the count where it is: the one renders,
    /// benches and tests run.
    pub fn set(&mut self, name: &str, value: Value, source: Source) -> Result<Value, ParamError> {
        if let Some(auto) = auto_switch(name, &value)
            && self.contains(&auto)
        {
            self.set(&auto, Value::Bool(true), source)?;
            return self
                .target(name)
                .cloned()
                .ok_or_else(|| ParamError::Unknown(name.to_string()));
        }
        let entry = self.entry_mut(name)?;
        if entry.spec.read_only && source != Source::Show {
            return Err(ParamError::ReadOnly(name.to_string()));
        }
        let value = entry.spec.checked(value)?;
        if entry.held && source == Source::Script {
            return Ok(entry.target.clone());
        }
        entry.held |= source.is_performer();
        entry.ramp = None;
        entry.target = value.clone();
        if entry.spec.smoothing <= 0.0 || !entry.spec.kind.is_continuous() {
            entry.current = value.clone();
        }
        self.record(name, &value, source);
        Ok(value)
    }

    /// Sets target and current value together, skipping smoothing: for
    /// presets loaded without a crossfade and for deterministic renders.
    pub fn set_now(
        &mut self,
        name: &str,
        value: Value,
        source: Source,
    ) -> Result<Value, ParamError> {
        let value = self.set(name, value, source)?;
        if let Some(entry) = self.entries.get_mut(name) {
            entry.current = value.clone();
        }
        Ok(value)
    }

    /// Moves a numeric parameter's target to `value` over `seconds`, shaped
    /// by `easing`, starting from its current target.
    pub fn ramp(
        &mut self,
        name: &str,
        value: Value,
        seconds: f32,
        easing: Easing,
        source: Source,
    ) -> Result<Value, ParamError> {
        let entry = self.entry_mut(name)?;
        if entry.spec.read_only && source != Source::Show {
            return Err(ParamError::ReadOnly(name.to_string()));
        }
        if !entry.spec.kind.is_continuous() {
            return Err(ParamError::NotRampable(name.to_string()));
        }
        let value = entry.spec.checked(value)?;
        if entry.held && source == Source::Script {
            return Ok(entry.target.clone());
        }
        entry.held |= source.is_performer();
        entry.ramp = Some(Ramp {
            from: entry.target.components(),
            to: value.components(),
            duration: seconds.max(0.0),
            elapsed: 0.0,
            easing,
        });
        self.record(name, &value, source);
        Ok(value)
    }

    /// Hands parameters back to the script: `name`, or every one when
    /// `None`. Returns how many were held.
    pub fn release(&mut self, name: Option<&str>) -> usize {
        let mut released = 0;
        for (_, entry) in self
            .entries
            .iter_mut()
            .filter(|(n, _)| name.is_none_or(|name| name == n.as_str()))
        {
            released += usize::from(entry.held);
            entry.held = false;
        }
        released
    }

    /// Whether a performer holds the parameter against the script.
    pub fn is_held(&self, name: &str) -> bool {
        self.entries.get(name).is_some_and(|e| e.held)
    }

    /// Advances ramps and smoothing by `dt` seconds.
    pub fn advance(&mut self, dt: f32) {
        for entry in self.entries.values_mut() {
            if let Some(ramp) = entry.ramp.as_mut() {
                let (now, done) = ramp.advance(dt);
                entry.target = with_components(&entry.target, &now);
                if done {
                    entry.ramp = None;
                }
            }
            entry.current = smooth(&entry.current, &entry.target, entry.spec.smoothing, dt);
        }
    }

    /// Adds this frame's modulation to the current values: `offsets` by
    /// parameter name (several sources on one parameter already summed);
    /// a parameter without an offset renders its current value again.
    /// Floats and ints only; the sum is clamped to the range.
    pub fn modulate(&mut self, offsets: &BTreeMap<String, f32>) {
        for (name, entry) in self.entries.iter_mut() {
            entry.modulated = offsets.get(name).and_then(|offset| {
                let base = entry.current.as_f32()?;
                match entry.spec.kind {
                    ParamKind::Float { .. } | ParamKind::Int { .. } => {
                        entry.spec.clamp(Value::Float(base + offset))
                    }
                    _ => None,
                }
            });
        }
    }

    /// Takes the changes since the last call: the latest one of each
    /// parameter, in name order.
    pub fn drain_changes(&mut self) -> Vec<Change> {
        std::mem::take(&mut self.changes).into_values().collect()
    }

    /// Every parameter in name order: spec and current value.
    pub fn iter(&self) -> impl Iterator<Item = (&ParamSpec, &Value)> {
        self.entries.values().map(|e| (&e.spec, &e.current))
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no parameter is registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn entry_mut(&mut self, name: &str) -> Result<&mut ParamEntry, ParamError> {
        self.entries
            .get_mut(name)
            .ok_or_else(|| ParamError::Unknown(name.to_string()))
    }

    fn record(&mut self, name: &str, value: &Value, source: Source) {
        let change = Change {
            name: name.to_string(),
            value: value.clone(),
            source,
        };
        self.changes.insert(name.to_string(), change);
    }
}

impl ParamSpec {
    /// [`ParamSpec::clamp`], or the error that says why the value does not fit.
    pub fn checked(&self, value: Value) -> Result<Value, ParamError> {
        let got = value.to_string();
        self.clamp(value).ok_or_else(|| ParamError::WrongType {
            name: self.name.clone(),
            expected: self.kind.name(),
            got,
        })
    }
}

/// The `auto_count` switch that `value` written to `name` stands for: a
/// layer's `count` set to `"auto"`.
fn auto_switch(name: &str, value: &Value) -> Option<String> {
    let stem = name.strip_suffix(".count")?;
    (value.as_text()? == "auto").then(|| format!("{stem}.auto_count"))
}

/// Replaces the numeric components of `like` with `components`.
fn with_components(like: &Value, c: &[f32]) -> Value {
    match (like, c) {
        (Value::Float(_), [v]) => Value::Float(*v),
        (Value::Vec3(_), [x, y, z]) => Value::Vec3([*x, *y, *z]),
        (Value::Colour(_), [r, g, b, a]) => Value::Colour([*r, *g, *b, *a]),
        _ => like.clone(),
    }
}

/// Exponential approach of `current` to `target` with time constant `tau`;
/// snaps when within a ten-thousandth so the value settles exactly.
fn smooth(current: &Value, target: &Value, tau: f32, dt: f32) -> Value {
    let (now, goal) = (current.components(), target.components());
    if tau <= 0.0 || now.len() != goal.len() || now.is_empty() {
        return target.clone();
    }
    let k = 1.0 - (-dt / tau).exp();
    let next: Vec<f32> = now
        .iter()
        .zip(&goal)
        .map(|(a, b)| a + (b - a) * k)
        .collect();
    let settled = next
        .iter()
        .zip(&goal)
        .all(|(a, b)| (a - b).abs() <= 1e-4 * b.abs().max(1.0));
    if settled {
        target.clone()
    } else {
        with_components(target, &next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        let mut r = Registry::new();
        r.register(ParamSpec::float("a.speed", 1.0, 0.0, 4.0).with_smoothing(0.1));
        r.register(ParamSpec::int("a.count", 10, 1, 100));
        r.register(ParamSpec::enumeration("a.blend", &["normal", "add"], 0));
        r.register(ParamSpec::colour("a.tint", [1.0, 1.0, 1.0, 1.0]));
        r
    }

    #[test]
    fn set_clamps_to_range_and_converts_types() {
        let mut r = registry();
        let stored = r.set("a.speed", Value::Float(9.0), Source::Ui);
        assert_eq!(stored, Ok(Value::Float(4.0)));
        assert_eq!(
            r.set("a.count", Value::Float(3.6), Source::Ui),
            Ok(Value::Int(4))
        );
        assert_eq!(
            r.set("a.count", Value::Int(-5), Source::Ui),
            Ok(Value::Int(1))
        );
        let by_name = r.set("a.blend", Value::Text("add".into()), Source::Ui);
        assert_eq!(by_name, Ok(Value::Enum(1)));
        assert!(r.set("a.blend", Value::Int(7), Source::Ui).is_err());
        assert!(
            r.set("a.speed", Value::Float(f32::NAN), Source::Ui)
                .is_err()
        );
        assert!(matches!(
            r.set("nope", Value::Float(1.0), Source::Ui),
            Err(ParamError::Unknown(_))
        ));
    }

    #[test]
    fn auto_for_a_count_turns_its_fit_on_and_keeps_the_count() {
        let mut r = registry();
        r.register(ParamSpec::bool("a.auto_count", false));
        r.set("a.count", Value::Int(40), Source::Ui).ok();
        let kept = r.set("a.count", Value::Text("auto".into()), Source::Ui);
        assert_eq!(kept, Ok(Value::Int(40)));
        assert!(r.flag("a.auto_count"));
        assert!(
            r.set("a.count", Value::Text("many".into()), Source::Ui)
                .is_err()
        );
        let mut unfitted = registry();
        assert!(
            unfitted
                .set("a.count", Value::Text("auto".into()), Source::Ui)
                .is_err(),
            "a count with no fit refuses auto"
        );
    }

    #[test]
    fn smoothing_converges_to_the_target() {
        let mut r = registry();
        r.set("a.speed", Value::Float(3.0), Source::Ui).ok();
        r.advance(1.0 / 60.0);
        let first = r.float("a.speed");
        assert!(first > 1.0 && first < 3.0, "moved part way: {first}");
        for _ in 0..120 {
            r.advance(1.0 / 60.0);
        }
        assert_eq!(
            r.float("a.speed"),
            3.0,
            "settles exactly after 2 s (20 time constants)"
        );
    }

    #[test]
    fn ramps_follow_their_easing_and_end_on_the_target() {
        let mut r = registry();
        r.ramp(
            "a.tint",
            Value::Colour([0.0, 0.0, 0.0, 1.0]),
            1.0,
            Easing::Linear,
            Source::Script,
        )
        .ok();
        r.advance(0.5);
        let Some(Value::Colour(half_way)) = r.target("a.tint").cloned() else {
            panic!("tint is a colour");
        };
        assert!(
            (half_way[0] - 0.5).abs() < 1e-5,
            "linear at half time: {half_way:?}"
        );
        r.advance(0.6);
        assert_eq!(r.get("a.tint"), Some(&Value::Colour([0.0, 0.0, 0.0, 1.0])));
        assert!(
            r.ramp("a.count", Value::Int(5), 1.0, Easing::In, Source::Ui)
                .is_err()
        );
    }

    #[test]
    fn easing_curves_start_at_zero_and_end_at_one() {
        for e in [
            Easing::Linear,
            Easing::In,
            Easing::Out,
            Easing::InOut,
            Easing::Smooth,
        ] {
            assert_eq!(e.apply(0.0), 0.0);
            assert!((e.apply(1.0) - 1.0).abs() < 1e-6);
        }
        assert!(Easing::In.apply(0.25) < 0.25 && Easing::Out.apply(0.25) > 0.25);
    }

    #[test]
    fn reregistering_keeps_the_value_and_changes_are_reported() {
        let mut r = registry();
        r.set("a.count", Value::Int(50), Source::Midi).ok();
        r.register(ParamSpec::int("a.count", 10, 1, 100));
        assert_eq!(r.get("a.count"), Some(&Value::Int(50)));
        let changes = r.drain_changes();
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].source, Source::Midi);
        assert!(r.drain_changes().is_empty());
    }

    #[test]
    fn a_performer_holds_a_parameter_against_the_script_until_released() {
        let mut r = registry();
        r.set("a.speed", Value::Float(2.0), Source::Script).ok();
        assert_eq!(r.target("a.speed"), Some(&Value::Float(2.0)));
        for performer in [
            Source::Osc("10.0.0.2:9000".into()),
            Source::Midi,
            Source::Ui,
        ] {
            r.release(None);
            r.set("a.speed", Value::Float(3.0), performer.clone()).ok();
            assert!(r.is_held("a.speed"), "{performer:?} holds");
            let kept = r.set("a.speed", Value::Float(0.5), Source::Script);
            assert_eq!(kept, Ok(Value::Float(3.0)), "{performer:?}'s value stays");
            let ramp = r.ramp(
                "a.speed",
                Value::Float(0.5),
                1.0,
                Easing::Linear,
                Source::Script,
            );
            assert_eq!(ramp, Ok(Value::Float(3.0)));
            r.advance(0.5);
            assert_eq!(r.target("a.speed"), Some(&Value::Float(3.0)));
        }
        // The show itself (the pace guard, a preset) still writes it.
        r.set("a.speed", Value::Float(1.5), Source::Show).ok();
        assert_eq!(r.target("a.speed"), Some(&Value::Float(1.5)));
        // A reloaded shader re-registers its parameters: the hold stays.
        r.register(ParamSpec::float("a.speed", 1.0, 0.0, 4.0).with_smoothing(0.1));
        assert!(r.is_held("a.speed"));
        assert_eq!(r.release(Some("a.count")), 0);
        assert_eq!(r.release(Some("a.speed")), 1);
        r.set("a.speed", Value::Float(0.5), Source::Script).ok();
        assert_eq!(r.target("a.speed"), Some(&Value::Float(0.5)));
    }

    #[test]
    #[should_panic(expected = "which nothing declares")]
    fn reading_a_misspelt_name_fails_in_tests() {
        let mut r = Registry::new();
        r.register(ParamSpec::float("a.speed", 1.0, 0.0, 2.0));
        assert_eq!(r.float("a.speed"), 1.0);
        r.float("a.sped");
    }
}
