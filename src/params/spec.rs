//! Parameter specifications and values: what a parameter is (type, range,
//! default, unit, smoothing time, description) and the values it can hold.
//!
//! A spec is written once when a layer registers; every write from a preset,
//! Lua, MIDI or OSC is checked and clamped against it.

use std::fmt;

/// A parameter's value. The variant always matches the spec's [`ParamKind`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A real number.
    Float(f32),
    /// A whole number.
    Int(i32),
    /// On or off.
    Bool(bool),
    /// Index into the spec's option names.
    Enum(usize),
    /// Three reals (a position, a direction, a gravity vector).
    Vec3([f32; 3]),
    /// Linear RGBA.
    Colour([f32; 4]),
    /// Free text or a path inside the show folder.
    Text(String),
    /// A fixed number of reals (the audio bands).
    List(Vec<f32>),
}

impl Value {
    /// The value as a float where that has a meaning (bools are 0 or 1,
    /// enums their index); `None` for vectors and text.
    pub fn as_f32(&self) -> Option<f32> {
        match *self {
            Value::Float(v) => Some(v),
            Value::Int(v) => Some(v as f32),
            Value::Bool(v) => Some(if v { 1.0 } else { 0.0 }),
            Value::Enum(v) => Some(v as f32),
            _ => None,
        }
    }

    /// The text of a string or path value.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The value's components as floats, for uniform upload and smoothing.
    pub fn components(&self) -> Vec<f32> {
        match self {
            Value::Vec3(v) => v.to_vec(),
            Value::Colour(v) => v.to_vec(),
            Value::List(v) => v.clone(),
            Value::Text(_) => Vec::new(),
            other => other.as_f32().into_iter().collect(),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Float(v) => write!(f, "{v:.3}"),
            Value::Int(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::Enum(v) => write!(f, "#{v}"),
            Value::Vec3([x, y, z]) => write!(f, "({x:.2}, {y:.2}, {z:.2})"),
            Value::Colour([r, g, b, a]) => write!(f, "({r:.2}, {g:.2}, {b:.2}, {a:.2})"),
            Value::Text(s) => write!(f, "{s:?}"),
            Value::List(v) => {
                let items: Vec<String> = v.iter().map(|x| format!("{x:.2}")).collect();
                write!(f, "[{}]", items.join(", "))
            }
        }
    }
}

/// The type of a parameter, with the range its values are clamped to.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamKind {
    /// A real in `min..=max`.
    Float {
        /// Lowest value.
        min: f32,
        /// Highest value.
        max: f32,
    },
    /// An integer in `min..=max`.
    Int {
        /// Lowest value.
        min: i32,
        /// Highest value.
        max: i32,
    },
    /// A switch.
    Bool,
    /// One of a fixed set of names.
    Enum {
        /// The option names, in index order.
        options: Vec<String>,
    },
    /// Three reals, each clamped to `min..=max`.
    Vec3 {
        /// Lowest value of each component.
        min: f32,
        /// Highest value of each component.
        max: f32,
    },
    /// Linear RGBA; components clamped to be non-negative (HDR allowed).
    Colour,
    /// Free text.
    Text,
    /// A path resolved inside the show folder.
    Path,
    /// Where a texture input comes from: `below`, `previous`, `layer:ID`,
    /// a file `media/…` in the show folder (a folder of six cube faces),
    /// `camera`, `camera:NAME`, `keyboard` or `audio` (the sound heard).
    Texture,
    /// `len` reals, each clamped to `min..=max`.
    List {
        /// Number of values.
        len: usize,
        /// Lowest value of each.
        min: f32,
        /// Highest value of each.
        max: f32,
    },
}

impl ParamKind {
    /// The short name used in shader headers, the HUD and OSCQuery docs.
    pub fn name(&self) -> &'static str {
        match self {
            ParamKind::Float { .. } => "float",
            ParamKind::Int { .. } => "int",
            ParamKind::Bool => "bool",
            ParamKind::Enum { .. } => "enum",
            ParamKind::Vec3 { .. } => "vec3",
            ParamKind::Colour => "colour",
            ParamKind::Text => "string",
            ParamKind::Path => "path",
            ParamKind::Texture => "texture",
            ParamKind::List { .. } => "list",
        }
    }

    /// Whether values of this kind are smoothed and ramped (numeric kinds).
    pub fn is_continuous(&self) -> bool {
        matches!(
            self,
            ParamKind::Float { .. } | ParamKind::Vec3 { .. } | ParamKind::Colour
        )
    }
}

/// Everything the registry knows about one parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    /// Full name, `<layer>.<param>`.
    pub name: String,
    /// Type and range.
    pub kind: ParamKind,
    /// Value on registration and after a reset.
    pub default: Value,
    /// Unit shown next to the value (`"s"`, `"px"`, `"m/s^2"`), may be empty.
    pub unit: String,
    /// Time constant in seconds with which the smoothed value follows the
    /// target; 0 applies writes at once.
    pub smoothing: f32,
    /// One line for the HUD and OSCQuery.
    pub description: String,
    /// Written only by the show itself (the audio analysis): refused from
    /// presets, Lua, MIDI and OSC.
    pub read_only: bool,
    /// What a change costs the layer.
    pub weight: Weight,
}

/// What changing a parameter costs its layer: the pace guard puts back only
/// parameters that change a layer's cost, and the phone page shows a size
/// as a number to type rather than a fader to sweep.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Weight {
    /// A look or a motion: the same work a frame whatever its value.
    #[default]
    Light,
    /// Work a frame (substeps, steps a frame, a smoothing length): heavier
    /// values take more GPU time, nothing is rebuilt.
    Costly,
    /// A size or a count (particles, nodes, a map's resolution): the layer
    /// rebuilds on a change, and its memory and work a frame follow it.
    Structural,
}

impl Weight {
    /// Whether the parameter changes the layer's cost.
    pub fn changes_cost(self) -> bool {
        self != Weight::Light
    }
}

impl ParamSpec {
    /// A float parameter with no smoothing; chain the `with_*` builders.
    pub fn float(name: impl Into<String>, default: f32, min: f32, max: f32) -> Self {
        Self::new(name, ParamKind::Float { min, max }, Value::Float(default))
    }

    /// An int parameter.
    pub fn int(name: impl Into<String>, default: i32, min: i32, max: i32) -> Self {
        Self::new(name, ParamKind::Int { min, max }, Value::Int(default))
    }

    /// A bool parameter.
    pub fn bool(name: impl Into<String>, default: bool) -> Self {
        Self::new(name, ParamKind::Bool, Value::Bool(default))
    }

    /// An enum parameter whose default is `options[default]`.
    pub fn enumeration(name: impl Into<String>, options: &[&str], default: usize) -> Self {
        let options = options.iter().map(|s| s.to_string()).collect();
        Self::new(name, ParamKind::Enum { options }, Value::Enum(default))
    }

    /// A vec3 parameter.
    pub fn vec3(name: impl Into<String>, default: [f32; 3], min: f32, max: f32) -> Self {
        Self::new(name, ParamKind::Vec3 { min, max }, Value::Vec3(default))
    }

    /// A colour parameter (linear RGBA).
    pub fn colour(name: impl Into<String>, default: [f32; 4]) -> Self {
        Self::new(name, ParamKind::Colour, Value::Colour(default))
    }

    /// A path parameter (resolved in the show folder).
    pub fn path(name: impl Into<String>, default: impl Into<String>) -> Self {
        Self::new(name, ParamKind::Path, Value::Text(default.into()))
    }

    /// A texture input, naming its source (see [`ParamKind::Texture`]).
    pub fn texture(name: impl Into<String>, default: impl Into<String>) -> Self {
        Self::new(name, ParamKind::Texture, Value::Text(default.into()))
    }

    /// A list of `len` reals in `min..=max`, all starting at `min`.
    pub fn list(name: impl Into<String>, len: usize, min: f32, max: f32) -> Self {
        Self::new(
            name,
            ParamKind::List { len, min, max },
            Value::List(vec![min; len]),
        )
    }

    /// A free-text parameter.
    pub fn text(name: impl Into<String>, default: impl Into<String>) -> Self {
        Self::new(name, ParamKind::Text, Value::Text(default.into()))
    }

    fn new(name: impl Into<String>, kind: ParamKind, default: Value) -> Self {
        let mut spec = Self {
            name: name.into(),
            kind,
            default: default.clone(),
            unit: String::new(),
            smoothing: 0.0,
            description: String::new(),
            read_only: false,
            weight: Weight::Light,
        };
        spec.default = spec.clamp(default).unwrap_or(spec.default.clone());
        spec
    }

    /// Checks a spec built from a file (a shader header): finite ranges
    /// with min below max, a finite default and smoothing. Specs from code
    /// are right by construction; one from a file must pass before use.
    pub fn validate(&self) -> Result<(), SpecError> {
        let range = |min: f64, max: f64| {
            if !min.is_finite() || !max.is_finite() {
                Err(SpecError::NotFinite { min, max })
            } else if min >= max {
                Err(SpecError::Inverted { min, max })
            } else {
                Ok(())
            }
        };
        match &self.kind {
            ParamKind::Float { min, max } | ParamKind::Vec3 { min, max } => {
                range(f64::from(*min), f64::from(*max))?
            }
            ParamKind::Int { min, max } => range(f64::from(*min), f64::from(*max))?,
            _ => {}
        }
        if !self.default.components().iter().all(|c| c.is_finite()) {
            return Err(SpecError::Default(self.default.to_string()));
        }
        if !(self.smoothing.is_finite() && self.smoothing >= 0.0) {
            return Err(SpecError::Smoothing(self.smoothing));
        }
        Ok(())
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Sets the unit.
    pub fn with_unit(mut self, unit: impl Into<String>) -> Self {
        self.unit = unit.into();
        self
    }

    /// Marks the parameter as written by the show alone.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Marks the parameter as changing the layer's work a frame.
    pub fn costly(mut self) -> Self {
        self.weight = Weight::Costly;
        self
    }

    /// Marks the parameter as a size or count the layer rebuilds for.
    pub fn structural(mut self) -> Self {
        self.weight = Weight::Structural;
        self
    }

    /// Sets the smoothing time constant in seconds.
    pub fn with_smoothing(mut self, seconds: f32) -> Self {
        self.smoothing = seconds.max(0.0);
        self
    }

    /// Converts `value` to this parameter's type where that is meaningful
    /// (an int for a float, a float for a bool or an int) and clamps it to
    /// the range. Text becomes an enum by option name. `None` when the value
    /// cannot be read as this type.
    pub fn clamp(&self, value: Value) -> Option<Value> {
        let finite = |v: f32| v.is_finite().then_some(v);
        match (&self.kind, value) {
            (ParamKind::Float { min, max }, v) => {
                Some(Value::Float(finite(v.as_f32()?)?.max(*min).min(*max)))
            }
            (ParamKind::Int { min, max }, Value::Int(v)) => Some(Value::Int(v.max(*min).min(*max))),
            (ParamKind::Int { min, max }, v) => {
                let v = finite(v.as_f32()?)?.round();
                Some(Value::Int((v as i32).max(*min).min(*max)))
            }
            (ParamKind::Bool, v) => Some(Value::Bool(v.as_f32()? != 0.0)),
            (ParamKind::Enum { options }, Value::Text(name)) => {
                options.iter().position(|o| *o == name).map(Value::Enum)
            }
            (ParamKind::Enum { options }, v) => {
                let index = finite(v.as_f32()?)?.round();
                (index >= 0.0 && (index as usize) < options.len())
                    .then_some(Value::Enum(index as usize))
            }
            (ParamKind::Vec3 { min, max }, Value::Vec3(v)) => {
                let c = |x: f32| finite(x).map(|x| x.max(*min).min(*max));
                Some(Value::Vec3([c(v[0])?, c(v[1])?, c(v[2])?]))
            }
            (ParamKind::Colour, Value::Colour(v)) => {
                let c = |x: f32| finite(x).map(|x| x.max(0.0));
                Some(Value::Colour([c(v[0])?, c(v[1])?, c(v[2])?, c(v[3])?]))
            }
            (ParamKind::Colour, Value::Vec3([r, g, b])) => {
                self.clamp(Value::Colour([r, g, b, 1.0]))
            }
            (ParamKind::Text | ParamKind::Path | ParamKind::Texture, Value::Text(s)) => {
                Some(Value::Text(s))
            }
            (ParamKind::List { len, min, max }, Value::List(v)) if v.len() == *len => v
                .into_iter()
                .map(|x| finite(x).map(|x| x.max(*min).min(*max)))
                .collect::<Option<Vec<f32>>>()
                .map(Value::List),
            _ => None,
        }
    }

    /// The name of an enum value, or the value printed for other kinds.
    pub fn display(&self, value: &Value) -> String {
        match (&self.kind, value) {
            (ParamKind::Enum { options }, Value::Enum(i)) => {
                options.get(*i).cloned().unwrap_or_else(|| format!("#{i}"))
            }
            _ => value.to_string(),
        }
    }
}
/// Why a spec read from a file cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    /// A range end is not a finite number.
    #[error("min {min} and max {max} must be finite numbers")]
    NotFinite {
        /// Lower end.
        min: f64,
        /// Upper end.
        max: f64,
    },
    /// The range is empty or inverted.
    #[error("min {min} must be below max {max}")]
    Inverted {
        /// Lower end.
        min: f64,
        /// Upper end.
        max: f64,
    },
    /// The default is not finite.
    #[error("the default {0} is not finite")]
    Default(String),
    /// The smoothing time is negative or not a number.
    #[error("smooth={0} must be a number of seconds, 0 or more")]
    Smoothing(f32),
}
