//! Keeping a live show above its floor. A value sent over OSC or MIDI
//! (`colony.attraction_count` = 16M, `fluid.iterations` = 512) may build
//! fine and then take seconds of GPU a frame; a scene may be too heavy for
//! the device from the start. When the frame's GPU time stays over the
//! floor ([`FLOOR_FPS`]) for [`JUDGE_SECONDS`] of show time, the layer
//! that took most of it answers for it: the parameters that change its
//! cost ([`Weight`]) go back to the values it last ran above the floor
//! with, once; if none differ, or the show is still under the floor after
//! that, the layer is switched off. Looks and motions (a gravity, a
//! colour) are never put back: they do not change a layer's cost. A layer
//! that keeps the show under its floor is off within 3 s of show time.
//! Frames of a crossfade, which runs two presets at once for its seconds,
//! are not judged. The show says what it did, on screen and in the log.
//! Renders and benches are not paced: they may take as long as they need.
//! The outputs of an outputs file answer as one more layer ([`OUTPUTS`],
//! their passes `output.NAME`): their cost parameter, `outputs.scale`, goes
//! back once like a layer's, and where a layer would be switched off they
//! are drawn at half their size instead, down to [`MIN_SCALE`]; then the
//! layers answer.

use std::collections::{HashMap, VecDeque};

use super::Show;
use crate::gpu::{FrameTimes, PassTime};
use crate::outputs::{MIN_SCALE, SCALE};
use crate::params::{Registry, Source, Value, Weight};

/// The id the outputs answer under, beside the layers' ids.
pub const OUTPUTS: &str = "outputs";

/// The frames a second a live show keeps to at least: a frame whose GPU
/// time is over `1000 / FLOOR_FPS` ms is under the floor.
pub const FLOOR_FPS: f64 = 10.0;

/// Show seconds under the floor, frame after frame, before the heaviest
/// layer answers for it: one slow frame (a rebuild's) is forgiven.
pub const JUDGE_SECONDS: f32 = 0.75;

/// What to do about a layer that kept the show under its floor.
#[derive(Debug, Clone, PartialEq)]
pub struct Overrun {
    /// The layer.
    pub id: String,
    /// Its GPU milliseconds in the last frame judged.
    pub ms: f64,
    /// The frame's GPU milliseconds, all passes.
    pub frame_ms: f64,
    /// The values to put back (name, value now, value it ran with); empty
    /// when it is to be switched off.
    pub revert: Vec<(String, Value, Value)>,
}

/// The values a submitted frame ran with, kept until its timings return.
#[derive(Debug)]
struct Submitted {
    frame: u64,
    dt: f32,
    values: LayerValues,
}

/// Frames whose values are kept until their timings come back (the GPU
/// answers a frame or two late; a frame that found the profiler's ring
/// full never does).
const KEPT_FRAMES: usize = 8;

/// Each layer's cost parameters and their values, by layer id.
pub type LayerValues = HashMap<String, Vec<(String, Value)>>;

/// The pace of the show.
#[derive(Debug, Default)]
pub struct Pace {
    /// Each layer's cost values in the last frame above the floor.
    good: LayerValues,
    /// Show seconds under the floor in a row.
    under: f32,
    /// Layers put back in this stretch under the floor: the next verdict
    /// on one of them switches it off.
    reverted: Vec<String>,
    /// Frames before this one ran with what was just changed: they are not
    /// judged.
    judge_from: u64,
    in_flight: VecDeque<Submitted>,
    /// Layers whose count is being fitted (`fit.rs`): a frame they make
    /// heaviest is theirs to answer.
    spared: Vec<String>,
}

impl Pace {
    /// Leaves `layers` (those whose count is being fitted) to the fit:
    /// while one of them is the heaviest, no layer answers.
    pub fn spare(&mut self, layers: Vec<String>) {
        self.spared = layers;
    }

    /// After a frame of a live show that advanced the show by `dt`
    /// seconds: judges the frames that finished (`finished`, as
    /// [`Show::frame`] returns them) and puts back, or switches off, the
    /// layer that kept the show under its floor, saying so on screen.
    pub fn keep(&mut self, show: &mut Show, dt: f32, finished: &[FrameTimes]) {
        // Without timestamp queries no frame's timings ever come back.
        if !show.profiler.enabled() {
            return;
        }
        let mut layers: Vec<String> = show.layers().iter().map(|l| l.id().to_string()).collect();
        if show.outputs().is_some() {
            layers.push(OUTPUTS.to_string());
        }
        let submitted = show.profiler.next_frame().saturating_sub(1);
        if show.outgoing().is_some() {
            // A crossfade runs two stacks for its seconds: its frames say
            // nothing of what either preset costs alone.
            self.judge_from = submitted + 1;
            self.under = 0.0;
        }
        // The error log writes it too, held back like every repeat.
        for (id, message) in self.judge(&mut show.registry, &layers, submitted, dt, finished) {
            show.ground.errors.report(&id, message);
        }
    }

    /// [`Pace::keep`] on the registry alone: `submitted` is the frame just
    /// submitted with the registry's values. Returns (layer, what it is
    /// told) for each layer put back or switched off.
    pub fn judge(
        &mut self,
        registry: &mut Registry,
        layers: &[String],
        submitted: u64,
        dt: f32,
        finished: &[FrameTimes],
    ) -> Vec<(String, String)> {
        self.submitted(submitted, dt, cost_values(registry, layers));
        let mut said = Vec::new();
        for times in finished {
            let Some((dt, ran_with)) = self.ran_with(times.frame) else {
                continue;
            };
            let Some(overrun) = self.observe(times, dt, layers, &ran_with, registry) else {
                continue;
            };
            said.push((overrun.id.clone(), put_back(registry, &overrun)));
            // Frames already submitted ran with what was just changed.
            self.judge_from = submitted + 1;
        }
        said
    }

    /// Keeps what frame `frame` runs with until its timings come back.
    fn submitted(&mut self, frame: u64, dt: f32, values: LayerValues) {
        self.in_flight.push_back(Submitted { frame, dt, values });
        if self.in_flight.len() > KEPT_FRAMES {
            self.in_flight.pop_front();
        }
    }

    /// The show time and values frame `frame` ran with, taken from those
    /// kept. A frame is judged only by its own values: those of frames
    /// whose timings never came back are passed over, and a frame whose
    /// values are no longer kept is not judged at all (a later frame's
    /// might be taken for its own, and a heavy value for the one it ran
    /// above the floor with).
    fn ran_with(&mut self, frame: u64) -> Option<(f32, LayerValues)> {
        while self.in_flight.front().is_some_and(|s| s.frame < frame) {
            self.in_flight.pop_front();
        }
        if self.in_flight.front().is_none_or(|s| s.frame != frame) {
            return None;
        }
        self.in_flight.pop_front().map(|s| (s.dt, s.values))
    }

    /// Judges one finished frame: `times` its passes, `dt` the show time
    /// it stood for, `layers` the ids on stage, `ran_with` the cost values
    /// it ran with, `registry` the values now. Returns the layer to put
    /// back or switch off, if one is due.
    fn observe(
        &mut self,
        times: &FrameTimes,
        dt: f32,
        layers: &[String],
        ran_with: &LayerValues,
        registry: &Registry,
    ) -> Option<Overrun> {
        if times.frame < self.judge_from {
            return None;
        }
        let frame_ms = times.span_ms;
        if frame_ms <= 1000.0 / FLOOR_FPS {
            self.under = 0.0;
            self.reverted.clear();
            self.good = ran_with.clone();
            return None;
        }
        self.under += dt;
        if self.under < JUDGE_SECONDS {
            return None;
        }
        let (id, ms) = layers
            .iter()
            .filter(|id| *id != OUTPUTS || outputs_scale(registry) > MIN_SCALE)
            .map(|id| (id, layer_ms(&times.passes, id, layers)))
            .filter(|(_, ms)| *ms > 0.0)
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        self.under = 0.0;
        if self.spared.contains(id) {
            return None;
        }
        let revert = if self.reverted.contains(id) {
            Vec::new()
        } else {
            self.changed_since_good(id, registry)
        };
        if !revert.is_empty() {
            self.reverted.push(id.clone());
        }
        Some(Overrun {
            id: id.clone(),
            ms,
            frame_ms,
            revert,
        })
    }

    /// Layer `id`'s cost parameters whose value now differs from the one
    /// it last ran above the floor with: (name, now, then).
    fn changed_since_good(&self, id: &str, registry: &Registry) -> Vec<(String, Value, Value)> {
        let Some(good) = self.good.get(id) else {
            return Vec::new();
        };
        layer_cost_values(registry, id)
            .into_iter()
            .filter_map(|(name, now)| {
                let (_, then) = good.iter().find(|(n, _)| *n == name)?;
                (*then != now).then(|| (name, now, then.clone()))
            })
            .collect()
    }
}

/// Puts `overrun`'s values back (or switches the layer off); returns what
/// the performer is told.
fn put_back(registry: &mut Registry, overrun: &Overrun) -> String {
    let took = format!(
        "{:.0} ms of GPU a frame (of the frame's {:.0} ms), keeping the show under its floor of {FLOOR_FPS} fps",
        overrun.ms, overrun.frame_ms
    );
    if overrun.revert.is_empty() && overrun.id == OUTPUTS {
        let scale = (outputs_scale(registry) * 0.5).max(MIN_SCALE);
        registry.set(SCALE, Value::Float(scale), Source::Show).ok();
        return format!(
            "{took}; drawn at {scale} of their size ({SCALE} = {scale}): lower their sizes in the outputs file, then set it back to 1"
        );
    }
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

/// The fraction of their size the outputs are drawn at.
fn outputs_scale(registry: &Registry) -> f32 {
    match registry.target(SCALE) {
        Some(Value::Float(scale)) => *scale,
        _ => 1.0,
    }
}

/// The GPU milliseconds of layer `id`'s passes: those labelled with its
/// id, or with its kind when it is the only layer of that kind on stage
/// (simulation passes carry the kind: `colony.search`); for [`OUTPUTS`],
/// every output's warp (`output.NAME`).
pub(super) fn layer_ms(times: &[PassTime], id: &str, layers: &[String]) -> f64 {
    if id == OUTPUTS {
        return times
            .iter()
            .filter(|t| t.label.starts_with("output."))
            .map(|t| t.ms)
            .sum();
    }
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

/// The cost parameters of every layer on stage.
pub fn cost_values(registry: &Registry, layers: &[String]) -> LayerValues {
    layers
        .iter()
        .map(|id| (id.clone(), layer_cost_values(registry, id)))
        .collect()
}

/// Layer `id`'s cost parameters' targets (what the controls set).
fn layer_cost_values(registry: &Registry, id: &str) -> Vec<(String, Value)> {
    let prefix = format!("{id}.");
    registry
        .iter()
        .filter(|(spec, _)| {
            spec.name.starts_with(&prefix) && !spec.read_only && spec.weight != Weight::Light
        })
        .filter_map(|(spec, _)| Some((spec.name.clone(), registry.target(&spec.name)?.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamSpec;

    /// A show's registry and the frames in flight, the GPU answering each
    /// frame's timings `LAG` frames late, with a layer's cost injected.
    struct Rig {
        pace: Pace,
        registry: Registry,
        layers: Vec<String>,
        frame: u64,
        time: f32,
        in_flight: VecDeque<FrameTimes>,
        said: Vec<(f32, String, String)>,
    }

    const LAG: usize = 2;

    impl Rig {
        fn new() -> Self {
            let mut registry = Registry::new();
            registry.register(ParamSpec::bool("fluid.enabled", true));
            registry.register(ParamSpec::vec3(
                "fluid.gravity",
                [0.0, -9.81, 0.0],
                -200.0,
                200.0,
            ));
            registry.register(ParamSpec::int("fluid.iterations", 64, 1, 512).costly());
            registry.register(ParamSpec::int("fluid.count", 40_000, 100, 16_000_000).structural());
            registry.register(ParamSpec::bool("shader.sky.enabled", true));
            Self {
                pace: Pace::default(),
                registry,
                layers: vec!["fluid".into(), "shader.sky".into()],
                frame: 0,
                time: 0.0,
                in_flight: VecDeque::new(),
                said: Vec::new(),
            }
        }

        /// One frame of `dt` show seconds, its passes costed by `cost` from
        /// the values it runs with.
        fn frame(&mut self, dt: f32, cost: &dyn Fn(&Registry) -> f64) {
            let passes = if self.registry.flag("fluid.enabled") {
                vec![
                    PassTime {
                        label: "fluid.force".into(),
                        ms: cost(&self.registry),
                    },
                    PassTime {
                        label: "shader.sky".into(),
                        ms: 1.0,
                    },
                ]
            } else {
                vec![PassTime {
                    label: "shader.sky".into(),
                    ms: 1.0,
                }]
            };
            self.in_flight
                .push_back(FrameTimes::back_to_back(self.frame, passes));
            let finished: Vec<FrameTimes> = if self.in_flight.len() > LAG {
                self.in_flight.pop_front().into_iter().collect()
            } else {
                Vec::new()
            };
            for (id, message) in
                self.pace
                    .judge(&mut self.registry, &self.layers, self.frame, dt, &finished)
            {
                self.said.push((self.time, id, message));
            }
            self.frame += 1;
            self.time += dt;
        }

        /// Frames of `dt` until `done` holds; the show seconds it took.
        fn until(
            &mut self,
            dt: f32,
            cost: &dyn Fn(&Registry) -> f64,
            done: impl Fn(&Registry) -> bool,
        ) -> f32 {
            let start = self.time;
            while !done(&self.registry) {
                assert!(
                    self.time - start < 60.0,
                    "nothing done in 60 s: {:?}",
                    self.said
                );
                self.frame(dt, cost);
            }
            self.time - start
        }
    }

    /// 2 s of GPU a frame whatever the values: a scene this device cannot run.
    fn too_heavy(_: &Registry) -> f64 {
        2000.0
    }

    /// 20 ms a frame at 64 iterations, proportionally more above.
    fn by_iterations(registry: &Registry) -> f64 {
        20.0 * registry.float("fluid.iterations") as f64 / 64.0
    }

    fn off(registry: &Registry) -> bool {
        !registry.flag("fluid.enabled")
    }

    #[test]
    fn a_layer_that_keeps_the_show_under_its_floor_is_off_within_3_s_every_time() {
        for dt in [1.0 / 60.0, 0.25] {
            let mut rig = Rig::new();
            for _ in 0..10 {
                rig.frame(dt, &|_| 5.0);
            }
            // A script turns the gravity every frame: it does not change
            // the cost, and is never put back.
            rig.registry
                .set(
                    "fluid.gravity",
                    Value::Vec3([0.0, -3.0, 1.0]),
                    Source::Script,
                )
                .ok();
            for round in 0..3 {
                let took = rig.until(dt, &too_heavy, off);
                assert!(took <= 3.0, "dt {dt} round {round}: off after {took} s");
                rig.registry
                    .set("fluid.enabled", Value::Bool(true), Source::Ui)
                    .ok();
            }
            assert_eq!(
                rig.registry.target("fluid.gravity"),
                Some(&Value::Vec3([0.0, -3.0, 1.0]))
            );
            assert!(
                rig.said
                    .iter()
                    .all(|(_, id, m)| id == "fluid" && m.contains("switched off"))
            );
        }
    }

    #[test]
    fn a_cost_parameter_goes_back_once_then_the_layer_goes_off() {
        for dt in [1.0 / 60.0, 0.25] {
            let mut rig = Rig::new();
            for _ in 0..10 {
                rig.frame(dt, &by_iterations);
            }
            rig.registry
                .set(
                    "fluid.iterations",
                    Value::Int(512),
                    Source::Osc("tablet".into()),
                )
                .ok();
            let back = |r: &Registry| r.target("fluid.iterations") == Some(&Value::Int(64));
            let took = rig.until(dt, &by_iterations, back);
            assert!(took <= 3.0, "dt {dt}: put back after {took} s");
            assert!(
                rig.said[0].2.contains("fluid.iterations 512 -> 64"),
                "{:?}",
                rig.said
            );
            // Back above the floor it stays on.
            for _ in 0..(4.0 / dt) as usize {
                rig.frame(dt, &by_iterations);
            }
            assert!(!off(&rig.registry) && rig.said.len() == 1, "{:?}", rig.said);
            // A count that makes it heavy, and a cost the put-back does not
            // cure: off within 3 s of the value, all told.
            rig.registry
                .set("fluid.count", Value::Int(16_000_000), Source::Midi)
                .ok();
            let took = rig.until(dt, &too_heavy, off);
            assert!(took <= 3.0, "dt {dt}: off after {took} s; {:?}", rig.said);
            assert!(
                rig.said[1].2.contains("fluid.count 16000000 -> 40000"),
                "{:?}",
                rig.said
            );
            assert!(rig.said[2].2.contains("switched off"), "{:?}", rig.said);
        }
    }

    #[test]
    fn a_layer_whose_count_is_being_fitted_is_left_to_its_fit() {
        let mut rig = Rig::new();
        rig.pace.spare(vec!["fluid".into()]);
        for _ in 0..300 {
            rig.frame(1.0 / 60.0, &|_| 400.0);
        }
        assert!(rig.said.is_empty(), "{:?}", rig.said);
        assert!(rig.registry.flag("fluid.enabled"));
        rig.pace.spare(Vec::new());
        for _ in 0..300 {
            rig.frame(1.0 / 60.0, &|_| 400.0);
        }
        assert!(!rig.said.is_empty(), "its fit over, it answers again");
    }

    #[test]
    fn one_slow_frame_is_forgiven_and_a_light_show_is_left_alone() {
        let mut rig = Rig::new();
        for n in 0..600 {
            rig.frame(1.0 / 60.0, &|_| if n % 100 == 50 { 400.0 } else { 30.0 });
        }
        assert!(rig.said.is_empty(), "{:?}", rig.said);
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
            pace.submitted(frame, 0.1, values(if frame < 4 { 1 } else { 8000 }));
        }
        // Frames 0 and 1 found the profiler's ring full: frame 2 comes back
        // first and is still judged with the light value it ran with.
        assert_eq!(pace.ran_with(2), Some((0.1, values(1))));
        assert_eq!(pace.ran_with(5), Some((0.1, values(8000))));
        // A frame whose values were dropped is not judged by another's.
        assert_eq!(pace.ran_with(3), None);
        assert_eq!(pace.ran_with(6), Some((0.1, values(8000))));
    }

    #[test]
    fn outputs_that_keep_the_show_under_its_floor_are_drawn_smaller_not_a_layer_switched_off() {
        // Four outputs of 4K on a slow device: 300 ms of warps a frame at
        // full size (by their pixels), the layers 5 ms.
        let mut pace = Pace::default();
        let mut registry = Registry::new();
        registry.register(ParamSpec::bool("fluid.enabled", true));
        registry.register(ParamSpec::int("fluid.iterations", 64, 1, 512).costly());
        registry.register(ParamSpec::float(SCALE, 1.0, MIN_SCALE, 1.0).costly());
        let layers = vec!["fluid".to_string(), OUTPUTS.to_string()];
        let mut said = Vec::new();
        let mut time = 0.0;
        let mut frame = 0;
        let dt = 1.0 / 60.0;
        while time < 10.0 {
            let scale = f64::from(outputs_scale(&registry));
            let times = FrameTimes::back_to_back(
                frame,
                ["a", "b", "c", "d"]
                    .iter()
                    .map(|o| PassTime {
                        label: format!("output.{o}"),
                        ms: 75.0 * scale * scale,
                    })
                    .chain([PassTime {
                        label: "fluid.force".into(),
                        ms: 5.0,
                    }])
                    .collect(),
            );
            said.extend(pace.judge(&mut registry, &layers, frame, dt, &[times]));
            frame += 1;
            time += dt;
        }
        // Halved once: 75 ms a frame, above the floor; the fluid stays on.
        assert_eq!(outputs_scale(&registry), 0.5, "{said:?}");
        assert!(registry.flag("fluid.enabled"), "{said:?}");
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].0 == OUTPUTS && said[0].1.contains("outputs.scale = 0.5"));
        // Raised again by the performer: put back once, then halved on.
        registry
            .set(SCALE, Value::Float(1.0), Source::Osc("tablet".into()))
            .ok();
        let heavy = |frame: u64| {
            FrameTimes::back_to_back(
                frame,
                vec![PassTime {
                    label: "output.a".into(),
                    ms: 2000.0,
                }],
            )
        };
        for _ in 0..600 {
            said.extend(pace.judge(&mut registry, &layers, frame, dt, &[heavy(frame)]));
            frame += 1;
        }
        assert!(said[1].1.contains("outputs.scale 1 -> 0.5"), "{said:?}");
        // Smallest, and still under the floor: the heaviest layer answers
        // (here none has any time, so nothing more is done).
        assert_eq!(outputs_scale(&registry), MIN_SCALE, "{said:?}");
        assert!(registry.flag("fluid.enabled"), "{said:?}");
    }

    #[test]
    fn passes_are_the_layers_own_and_a_kind_is_shared_only_when_alone() {
        let pass = |label: &str, ms: f64| PassTime {
            label: label.into(),
            ms,
        };
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
