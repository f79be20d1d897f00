//! Typed handles for the parameters the code itself reads: the full name
//! (`colony.width`) built once when the layer is, not formatted on every
//! read of every frame, and the type fixed, so a layer reads `f32`,
//! `bool`, an enum index or a vector without converting. Each kind's test
//! holds its handles against its declared specs, so a misspelt name or a
//! wrong type fails a test instead of reading a silent zero (nannou's
//! typed parameter map).

use std::marker::PhantomData;

use super::{ParamKind, ParamSpec, Registry, Value};

/// What a handle can read, and which parameter kinds hold it.
pub trait Readable: Sized {
    /// The value held in `value` (a default when it is missing or of
    /// another type).
    fn from_value(value: Option<&Value>) -> Self;
    /// Whether a parameter of `kind` holds this type.
    fn holds(kind: &ParamKind) -> bool;
}

impl Readable for f32 {
    fn from_value(value: Option<&Value>) -> Self {
        value.and_then(Value::as_f32).unwrap_or(0.0)
    }
    fn holds(kind: &ParamKind) -> bool {
        matches!(kind, ParamKind::Float { .. } | ParamKind::Int { .. })
    }
}

/// An int, for counts and sizes.
impl Readable for i32 {
    fn from_value(value: Option<&Value>) -> Self {
        match value {
            Some(Value::Int(v)) => *v,
            _ => 0,
        }
    }
    fn holds(kind: &ParamKind) -> bool {
        matches!(kind, ParamKind::Int { .. })
    }
}

impl Readable for bool {
    fn from_value(value: Option<&Value>) -> Self {
        matches!(value, Some(Value::Bool(true)))
    }
    fn holds(kind: &ParamKind) -> bool {
        matches!(kind, ParamKind::Bool)
    }
}

/// An enum's index.
impl Readable for usize {
    fn from_value(value: Option<&Value>) -> Self {
        match value {
            Some(Value::Enum(i)) => *i,
            _ => 0,
        }
    }
    fn holds(kind: &ParamKind) -> bool {
        matches!(kind, ParamKind::Enum { .. })
    }
}

/// A vec3, or a colour's RGBA.
impl<const N: usize> Readable for [f32; N] {
    fn from_value(value: Option<&Value>) -> Self {
        let mut out = [0.0; N];
        match value {
            Some(Value::Vec3(v)) => out.iter_mut().zip(v).for_each(|(o, v)| *o = *v),
            Some(Value::Colour(c)) => out.iter_mut().zip(c).for_each(|(o, c)| *o = *c),
            _ => {}
        }
        out
    }
    fn holds(kind: &ParamKind) -> bool {
        matches!(
            (kind, N),
            (ParamKind::Vec3 { .. }, 3) | (ParamKind::Colour, 4)
        )
    }
}

/// Text or a path.
impl Readable for String {
    fn from_value(value: Option<&Value>) -> Self {
        value
            .and_then(Value::as_text)
            .map(str::to_string)
            .unwrap_or_default()
    }
    fn holds(kind: &ParamKind) -> bool {
        matches!(kind, ParamKind::Text | ParamKind::Path | ParamKind::Texture)
    }
}

/// Parameter `<layer>.<name>` of type `T`, named once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handle<T> {
    name: String,
    read_as: PhantomData<fn() -> T>,
}

impl<T: Readable> Handle<T> {
    /// The handle of `<id>.<name>`.
    pub fn new(id: &str, name: &str) -> Self {
        Self {
            name: format!("{id}.{name}"),
            read_as: PhantomData,
        }
    }

    /// Its value now (smoothed, modulated).
    pub fn get(&self, registry: &Registry) -> T {
        T::from_value(registry.declared(&self.name))
    }

    /// The value last asked for, before smoothing: what decides a
    /// simulation's structure.
    pub fn target(&self, registry: &Registry) -> T {
        T::from_value(registry.target(&self.name))
    }

    /// Its full name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether `specs` declare it with a kind that holds `T`.
    pub fn check(&self, specs: &[ParamSpec]) -> Result<(), HandleError> {
        match specs.iter().find(|s| s.name == self.name) {
            Some(spec) if T::holds(&spec.kind) => Ok(()),
            Some(spec) => Err(HandleError::Kind {
                name: self.name.clone(),
                kind: spec.kind.clone(),
                read_as: std::any::type_name::<T>(),
            }),
            None => Err(HandleError::Undeclared(self.name.clone())),
        }
    }
}

impl Handle<i32> {
    /// A count or size at its target, at least 1: what a simulation is
    /// built with.
    pub fn count(&self, registry: &Registry) -> u32 {
        self.target(registry).max(1) as u32
    }
}

/// Why a handle does not find what it reads.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HandleError {
    /// Declared with a kind that does not hold the handle's type.
    #[error("{name} is a {kind:?}, not read as {read_as}")]
    Kind {
        /// The parameter.
        name: String,
        /// Its kind as declared.
        kind: ParamKind,
        /// The type the handle reads.
        read_as: &'static str,
    },
    /// Not declared at all.
    #[error("{0} is not declared")]
    Undeclared(String),
}

/// Checks every handle a layer reads against its specs; the problems.
#[macro_export]
macro_rules! check_handles {
    ($specs:expr; $($handle:expr),+ $(,)?) => {{
        let specs: &[$crate::params::ParamSpec] = $specs;
        let mut wrong: Vec<String> = Vec::new();
        $( if let Err(problem) = $handle.check(specs) { wrong.push(problem.to_string()); } )+
        wrong
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_read_by_type_and_a_misspelt_or_mistyped_one_is_caught() {
        let specs = vec![
            ParamSpec::float("c.width", 2.0, 0.0, 10.0),
            ParamSpec::bool("c.regrow", true),
            ParamSpec::vec3("c.at", [1.0, 2.0, 3.0], -9.0, 9.0),
        ];
        let mut registry = Registry::new();
        for spec in &specs {
            registry.register(spec.clone());
        }
        let width: Handle<f32> = Handle::new("c", "width");
        let regrow: Handle<bool> = Handle::new("c", "regrow");
        let at: Handle<[f32; 3]> = Handle::new("c", "at");
        assert_eq!(width.get(&registry), 2.0);
        assert!(regrow.get(&registry));
        assert_eq!(at.get(&registry), [1.0, 2.0, 3.0]);
        assert_eq!(
            check_handles!(&specs; width, regrow, at),
            Vec::<String>::new()
        );
        let typo: Handle<f32> = Handle::new("c", "widht");
        let wrong: Handle<bool> = Handle::new("c", "width");
        let problems = check_handles!(&specs; typo, wrong);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("c.widht is not declared"));
    }
}
