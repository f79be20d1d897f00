//! A control's position, 0-1, as a parameter's value and back: the span
//! a mapping's `range` gives (the parameter's whole range when it gives
//! none), its `curve`, and `invert`. MIDI's knobs and a lighting desk's
//! faders read the same way.

use crate::params::{Curve, ParamKind, ParamSpec, Value};

/// How one mapping places a position on a parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placing {
    /// Part of the parameter's range the control spans.
    pub range: Option<[f32; 2]>,
    /// Value curve.
    pub curve: Curve,
    /// Reverse the direction.
    pub invert: bool,
}

impl Placing {
    /// The values the control spans on `spec`.
    pub fn span(&self, spec: &ParamSpec) -> Option<(f32, f32)> {
        let full = match &spec.kind {
            ParamKind::Float { min, max } => (*min, *max),
            ParamKind::Int { min, max } => (*min as f32, *max as f32),
            ParamKind::Bool => (0.0, 1.0),
            ParamKind::Enum { options } => (0.0, options.len().saturating_sub(1) as f32),
            _ => return None,
        };
        Some(self.range.map_or(full, |[lo, hi]| (lo, hi)))
    }

    /// The parameter's value at `position`.
    pub fn value_at(&self, spec: &ParamSpec, position: f32) -> Option<Value> {
        let (lo, hi) = self.span(spec)?;
        let k = if self.invert {
            1.0 - position
        } else {
            position
        };
        let x = lo + (hi - lo) * self.curve.apply(k);
        spec.clamp(match spec.kind {
            ParamKind::Bool => Value::Bool(x >= 0.5),
            _ => Value::Float(x),
        })
    }

    /// The position that gives `value`.
    pub fn position_of(&self, spec: &ParamSpec, value: &Value) -> Option<f32> {
        let (lo, hi) = self.span(spec)?;
        let x = value.as_f32()?;
        let normal = if hi != lo { (x - lo) / (hi - lo) } else { 0.0 };
        let k = self.curve.invert(normal);
        Some(if self.invert { 1.0 - k } else { k })
    }
}
