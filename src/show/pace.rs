//! Keeping a live show at a pace the device can run. A structural value
//! sent over OSC or MIDI (`colony.attraction_count` = 16M,
//! `fluid.iterations` = 512) may build fine and then take seconds of GPU
//! a frame on a small device. When one layer's passes take more than
//! [`LAYER_BUDGET_MS`] frame after frame, its parameters go back to the
//! last values it ran within budget (a layer that never did is switched
//! off), and the show says so. Renders and benches are not paced: they
//! may take as long as they need.

use std::collections::HashMap;

use super::Show;
use crate::gpu::{FrameTimes, PassTime};
use crate::params::{Registry, Source, Value};

/// GPU milliseconds one layer may take a frame, as long as it likes (4
/// frames a second: past it the show is no longer a show).
pub const LAYER_BUDGET_MS: f64 = 250.0;

/// Frames in a row over the budget before a layer is put back (one slow
/// frame, a rebuild's, is forgiven).
const OVER_FRAMES: u32 = 5;

/// Frames after a put-back before the layer is judged again: frames
/// already in flight, and the rebuild's rest, still show the old cost.
const GRACE_FRAMES: u32 = 30;

/// What to do about a layer that overran.
#[derive(Debug, Clone, PartialEq)]
pub struct Overrun {
    /// The layer.
    pub id: String,
    /// Its GPU milliseconds in the last frame over budget.
    pub ms: f64,
    /// The values to put back (name, value now, value it ran with); empty
    /// when it never ran within budget, and is to be switched off.
    pub revert: Vec<(String, Value, Value)>,
}

/// One layer's last good values and how long it has overrun.
#[derive(Debug, Default)]
struct Watch {
    good: Vec<(String, Value)>,
    over: u32,
    grace: u32,
}

/// Frames whose values are kept until their timings come back (the GPU
/// answers a frame or two late; a frame that found the profiler's ring
/// full never does).
const KEPT_FRAMES: usize = 8;

/// Each layer's parameter values, by layer id.
type LayerValues = HashMap<String, Vec<(String, Value)>>;

/// The pace of every layer on stage.
#[derive(Debug, Default)]
pub struct Pace {
    layers: HashMap<String, Watch>,
    /// The values each frame in flight ran with, by the profiler's frame
    /// number, oldest first.
    in_flight: std::collections::VecDeque<(u64, LayerValues)>,
}

impl Pace {
    /// After a frame of a live show: judges the frames that finished
    /// (`finished`, as [`Show::frame`] returns them) and puts back, or
    /// switches off, each layer that overran, saying so on screen.
    pub fn keep(&mut self, show: &mut Show, finished: &[FrameTimes]) {
        // Without timestamp queries no frame's timings ever come back.
        if !show.profiler.enabled() {
            return;
        }
        let layers: Vec<String> = show.layers().iter().map(|l| l.id().to_string()).collect();
        let submitted = show.profiler.next_frame().saturating_sub(1);
        self.in_flight.push_back((
            submitted,
            layers
                .iter()
                .map(|id| (id.clone(), values_of(&show.registry, id)))
                .collect(),
        ));
        if self.in_flight.len() > KEPT_FRAMES {
            self.in_flight.pop_front();
        }
        for times in finished {
            let Some(ran_with) = self.values_of_frame(times.frame) else {
                continue;
            };
            for overrun in self.observe(&times.passes, &layers, &ran_with, &show.registry) {
                let message = put_back(&mut show.registry, &overrun);
                tracing::warn!("{}: {message}", overrun.id);
                show.errors.report(&overrun.id, message);
            }
        }
    }

    /// The values frame `frame` ran with, taken from those kept. A frame is
    /// judged only by its own values: those of frames whose timings never
    /// came back are passed over, and a frame whose values are no longer
    /// kept is not judged at all (a later frame's might be taken for its
    /// own, and a heavy value for the one it ran within budget with).
    fn values_of_frame(&mut self, frame: u64) -> Option<LayerValues> {
        while self.in_flight.front().is_some_and(|(n, _)| *n < frame) {
            self.in_flight.pop_front();
        }
        if self.in_flight.front().is_none_or(|(n, _)| *n != frame) {
            return None;
        }
        self.in_flight.pop_front().map(|(_, values)| values)
    }

    /// Judges one finished frame: `times` its passes, `layers` the ids on
    /// stage, `ran_with` the values the frame ran with, `registry` the
    /// values now. Returns the layers to put back.
    pub fn observe(
        &mut self,
        times: &[PassTime],
        layers: &[String],
        ran_with: &LayerValues,
        registry: &Registry,
    ) -> Vec<Overrun> {
        self.layers.retain(|id, _| layers.contains(id));
        let mut overruns = Vec::new();
        for id in layers {
            let ms = layer_ms(times, id, layers);
            let watch = self.layers.entry(id.clone()).or_default();
            if watch.grace > 0 {
                watch.grace -= 1;
                continue;
            }
            if ms <= LAYER_BUDGET_MS {
                watch.over = 0;
                if let Some(values) = ran_with.get(id) {
                    watch.good = values.clone();
                }
                continue;
            }
            watch.over += 1;
            if watch.over < OVER_FRAMES {
                continue;
            }
            watch.over = 0;
            watch.grace = GRACE_FRAMES;
            let now = values_of(registry, id);
            let revert = now
                .into_iter()
                .filter_map(|(name, value)| {
                    let good = watch.good.iter().find(|(n, _)| *n == name)?;
                    (good.1 != value).then(|| (name, value, good.1.clone()))
                })
                .collect();
            overruns.push(Overrun {
                id: id.clone(),
                ms,
                revert,
            });
        }
        overruns
    }
}

/// Puts `overrun`'s values back (or switches the layer off); returns what
/// the performer is told.
fn put_back(registry: &mut Registry, overrun: &Overrun) -> String {
    let took = format!(
        "{:.0} ms of GPU a frame, more than this device can run at a show's pace",
        overrun.ms
    );
    if overrun.revert.is_empty() {
        let enabled = format!("{}.enabled", overrun.id);
        registry
            .set(&enabled, Value::Bool(false), Source::Show)
            .ok();
        return format!(
            "{took}; switched off ({enabled} = false): lower its sizes, then switch it on"
        );
    }
    let mut changes = Vec::new();
    for (name, now, good) in &overrun.revert {
        if registry.set(name, good.clone(), Source::Show).is_ok() {
            changes.push(format!("{name} {} -> {}", shown(now), shown(good)));
        }
    }
    format!(
        "{took}; back to the values it ran with: {}",
        changes.join(", ")
    )
}

/// A value as a person reads it in a message.
fn shown(value: &Value) -> String {
    match value {
        Value::Float(x) => format!("{x}"),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Text(t) => format!("{t:?}"),
        other => format!("{other:?}"),
    }
}

/// The GPU milliseconds of layer `id`'s passes: those labelled with its
/// id, or with its kind when it is the only layer of that kind on stage
/// (simulation passes carry the kind: `colony.search`).
fn layer_ms(times: &[PassTime], id: &str, layers: &[String]) -> f64 {
    let kind = id.split('.').next().unwrap_or(id);
    let alone = layers
        .iter()
        .filter(|l| l.split('.').next() == Some(kind))
        .count()
        == 1;
    let prefix = if alone { kind } else { id };
    times
        .iter()
        .filter(|t| {
            t.label == prefix
                || t.label
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with('.') || rest.starts_with(' '))
        })
        .map(|t| t.ms)
        .sum()
}

/// Layer `id`'s parameter targets (what the controls set), but `enabled`.
fn values_of(registry: &Registry, id: &str) -> Vec<(String, Value)> {
    let prefix = format!("{id}.");
    let enabled = format!("{id}.enabled");
    registry
        .iter()
        .filter(|(spec, _)| {
            spec.name.starts_with(&prefix) && !spec.read_only && spec.name != enabled
        })
        .filter_map(|(spec, _)| Some((spec.name.clone(), registry.target(&spec.name)?.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{ParamSpec, Source};

    fn pass(label: &str, ms: f64) -> PassTime {
        PassTime {
            label: label.into(),
            ms,
        }
    }

    #[test]
    fn a_layer_that_overruns_frame_after_frame_goes_back_to_what_ran() {
        let mut registry = Registry::new();
        registry.register(ParamSpec::int(
            "colony.attraction_count",
            1000,
            1,
            16_000_000,
        ));
        registry.register(ParamSpec::float("colony.growth_speed", 1.0, 0.0, 4.0));
        let layers = vec!["colony".to_string(), "shader.sky".to_string()];
        let ran_with = |registry: &Registry| -> LayerValues {
            layers
                .iter()
                .map(|id| (id.clone(), values_of(registry, id)))
                .collect()
        };
        let mut pace = Pace::default();
        let fast = [pass("colony.search", 2.0), pass("shader.sky", 1.0)];
        let before = ran_with(&registry);
        assert!(pace.observe(&fast, &layers, &before, &registry).is_empty());
        registry
            .set_now(
                "colony.attraction_count",
                Value::Int(16_000_000),
                Source::Show,
            )
            .ok();
        // A fast frame still in flight when the value changed is judged by
        // the values it ran with.
        assert!(pace.observe(&fast, &layers, &before, &registry).is_empty());
        let after = ran_with(&registry);
        let slow = [pass("colony.search", 900.0), pass("colony.connect", 500.0)];
        for frame in 1..OVER_FRAMES {
            let judged = pace.observe(&slow, &layers, &after, &registry);
            assert!(judged.is_empty(), "frame {frame} forgiven");
        }
        let overruns = pace.observe(&slow, &layers, &after, &registry);
        assert_eq!(
            overruns,
            vec![Overrun {
                id: "colony".into(),
                ms: 1400.0,
                revert: vec![(
                    "colony.attraction_count".into(),
                    Value::Int(16_000_000),
                    Value::Int(1000)
                )],
            }]
        );
        for _ in 0..GRACE_FRAMES {
            let judged = pace.observe(&slow, &layers, &after, &registry);
            assert!(judged.is_empty(), "in grace");
        }
    }

    #[test]
    fn a_frame_is_judged_by_its_own_values_whatever_frames_never_came_back() {
        let values = |work: i32| -> LayerValues {
            HashMap::from([(
                "shader.heavy".to_string(),
                vec![("shader.heavy.work".to_string(), Value::Int(work))],
            )])
        };
        let mut pace = Pace::default();
        for frame in 0..KEPT_FRAMES as u64 {
            pace.in_flight
                .push_back((frame, values(if frame < 4 { 1 } else { 8000 })));
        }
        // Frames 0 and 1 found the profiler's ring full: frame 2 comes back
        // first and is still judged with the light value it ran with.
        assert_eq!(pace.values_of_frame(2), Some(values(1)));
        assert_eq!(pace.values_of_frame(5), Some(values(8000)));
        // A frame whose values were dropped is not judged by another's.
        assert_eq!(pace.values_of_frame(3), None);
        assert_eq!(pace.values_of_frame(6), Some(values(8000)));
    }

    #[test]
    fn passes_are_the_layers_own_and_a_kind_is_shared_only_when_alone() {
        let times = [
            pass("shader.sky", 3.0),
            pass("shader.sea", 4.0),
            pass("fluid.density", 5.0),
        ];
        let two = vec![
            "shader.sky".to_string(),
            "shader.sea".to_string(),
            "fluid".to_string(),
        ];
        assert_eq!(layer_ms(&times, "shader.sky", &two), 3.0);
        assert_eq!(layer_ms(&times, "fluid", &two), 5.0);
        assert_eq!(
            layer_ms(&times, "shader.sky", &["shader.sky".to_string()]),
            7.0
        );
    }
}
