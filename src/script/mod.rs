//! The Lua host (step 2 of the frame, docs/dev/frame.md): runs the show's choreography script
//! in a sandbox. Lifecycle callbacks `setup()`, `update(dt)`, `on_beat(n)`,
//! `on_midi(msg)`, `on_osc(address, args)`, `on_preset(name)`.
//!
//! Each load evaluates the script into a fresh environment and runs its
//! `setup()`; only if both succeed does it replace the running generation,
//! otherwise the old one keeps running and the error (file:line and
//! traceback) shows. A runtime error in a callback disables that callback
//! until the next load. Every load gets a fresh Lua state (fresh library
//! tables and string metatable, so nothing one script breaks reaches the
//! next); the `persist` table's plain data (numbers, strings, booleans and
//! tables of them) is copied into it, so state survives reloads.

mod api;
mod bridge;
mod log;
mod persist;
mod sandbox;

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::{Function, IntoLuaMulti, Lua, Table};

pub use sandbox::{INSTRUCTION_BUDGET, MEMORY_LIMIT, TIME_BUDGET, pattern_cost};

use crate::base::clock::Clock;
use crate::base::status::ErrorLog;
use crate::base::{AssetError, Assets, ChangedFile, Folder, inside_show};
pub use crate::command::{OscArg, ScriptEvent};
use crate::params::Registry;
use bridge::Bridge;
use log::LogLimiter;
use sandbox::Budget;

/// The generation being loaded: its environment, for `require`, and the
/// modules it required, for reloads.
struct Loading {
    env: Table,
    modules: Vec<String>,
}

/// One Lua state with its budget and `sylva` table.
struct State {
    lua: Lua,
    budget: Budget,
    api: Table,
    guards: Table,
}

impl State {
    /// A fresh sandboxed state around `bridge`, its `math.random` seeded.
    fn new(
        bridge: &Rc<RefCell<Bridge>>,
        log: &Rc<RefCell<LogLimiter>>,
        seed: u64,
    ) -> mlua::Result<Self> {
        let (lua, budget, guards) = sandbox::new_state()?;
        let api = api::create(&lua, bridge, log)?;
        let prelude_env = lua.create_table()?;
        prelude_env.set("sylva", &api)?;
        prelude_env.set(
            "setmetatable",
            lua.globals().get::<Function>("setmetatable")?,
        )?;
        lua.load(include_str!("prelude.lua"))
            .set_name("@sylva/prelude.lua")
            .set_environment(prelude_env)
            .exec()?;
        let math: Table = lua.globals().get("math")?;
        math.get::<Function>("randomseed")?
            .call::<()>(seed as i64)?;
        Ok(Self {
            lua,
            budget,
            api,
            guards,
        })
    }
}

/// How long one call may take before the watchdog ends the generation:
/// the wall-clock budget, and as much again for the hook to see it.
const OVERRUN: Duration = Duration::from_millis(2 * TIME_BUDGET.as_millis() as u64);

/// The running script generation.
struct Generation {
    state: State,
    env: Table,
    persist: Table,
    disabled: HashSet<&'static str>,
    /// Set by the watchdog: a call overran the wall-clock budget where the
    /// budget could not stop it, so no callback runs until the next load.
    stopped: bool,
    modules: Vec<String>,
}

/// Why a script did not load; the running one stays.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file is missing, too large or outside the show.
    #[error(transparent)]
    Asset(#[from] AssetError),
    /// Lua refused it: a syntax error, an error or the budget in `setup`.
    #[error(transparent)]
    Lua(#[from] mlua::Error),
}

/// The Lua state and the running script.
pub struct ScriptHost {
    bridge: Rc<RefCell<Bridge>>,
    log: Rc<RefCell<LogLimiter>>,
    current: Option<Generation>,
    file: String,
    assets: Assets,
    errors: ErrorLog,
    seed: u64,
    /// `os.clock` and `os.time()` read show time (renders).
    show_time: bool,
}

impl ScriptHost {
    /// A host with no script loaded yet; `math.random` is seeded with `seed`
    /// at every load so renders stay deterministic.
    pub fn new(assets: Assets, errors: ErrorLog, seed: u64) -> mlua::Result<Self> {
        Ok(Self {
            bridge: Rc::new(RefCell::new(Bridge::default())),
            log: Rc::new(RefCell::new(LogLimiter::default())),
            current: None,
            file: String::new(),
            assets,
            errors,
            seed,
            show_time: false,
        })
    }

    /// From the next load on, `os.clock()` and `os.time()` read show time
    /// (`sylva.time`) instead of the computer's clock, so a render's
    /// script does the same every time (`Show::render_exactly`).
    pub fn keep_show_time(&mut self) {
        self.show_time = true;
    }

    /// The script file running (relative to `scripts/`), empty if none.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Whether a script generation is running.
    pub fn is_running(&self) -> bool {
        self.current.is_some()
    }

    /// Loads `file` (relative to `scripts/`) and runs its `setup()`. On
    /// failure the running generation stays and the error is reported.
    pub fn load(
        &mut self,
        file: &str,
        registry: &Registry,
        clock: &Clock,
    ) -> Result<(), ScriptError> {
        let started = std::time::Instant::now();
        let file = file.strip_prefix("scripts/").unwrap_or(file).to_string();
        self.file = file.clone();
        self.bridge.borrow_mut().refresh(registry);
        let result = self.evaluate(&file, clock, registry);
        match result {
            Ok(generation) => {
                self.errors.clear(&self.origin());
                self.current = Some(generation);
                tracing::info!(
                    "script scripts/{file} loaded in {:.1} ms",
                    started.elapsed().as_secs_f64() * 1e3
                );
                Ok(())
            }
            Err(message) => {
                self.bridge.borrow_mut().take_commands();
                self.errors.report(self.origin(), &message);
                Err(message)
            }
        }
    }

    /// Ends the running script: its callbacks run no more, its error (if
    /// any) leaves the screen. A preset without a script stops the last
    /// preset's, so it no longer writes what the new scene does not know.
    pub fn stop(&mut self) {
        if self.current.take().is_some() {
            tracing::info!("script scripts/{} stopped", self.file);
        }
        self.errors.clear(&self.origin());
        self.bridge.borrow_mut().take_commands();
        self.file.clear();
    }

    /// Reloads the script if it or a module it required changed.
    pub fn reload_if_changed(
        &mut self,
        changed: &[ChangedFile],
        registry: &Registry,
        clock: &Clock,
    ) {
        let watched: Vec<&str> = match &self.current {
            Some(generation) => generation.modules.iter().map(String::as_str).collect(),
            None => vec![self.file.as_str()],
        };
        let touched = changed.iter().any(|c| {
            c.folder == Folder::Scripts
                && (watched.contains(&c.name.as_str()) || c.name == self.file)
        });
        if touched && !self.file.is_empty() {
            let file = self.file.clone();
            // The error, if any, is on screen already; the old script runs on.
            let _ = self.load(&file, registry, clock);
        }
    }

    /// Runs `update(dt)`.
    pub fn update(&mut self, dt: f32, registry: &Registry, clock: &Clock) {
        if self.current.is_none() {
            return;
        }
        self.bridge.borrow_mut().refresh(registry);
        self.set_fields(clock, registry);
        self.call("update", dt);
    }

    /// Runs the callback for `event`.
    pub fn dispatch(&mut self, event: &ScriptEvent, registry: &Registry, clock: &Clock) {
        let Some(lua) = self.current.as_ref().map(|g| g.state.lua.clone()) else {
            return;
        };
        self.bridge.borrow_mut().refresh(registry);
        self.set_fields(clock, registry);
        match event {
            ScriptEvent::Beat(n) => self.call("on_beat", *n),
            ScriptEvent::Preset(name) => self.call("on_preset", name.as_str()),
            ScriptEvent::Onset => self.call("on_onset", ()),
            ScriptEvent::Midi {
                kind,
                channel,
                number,
                value,
            } => {
                let message = lua.create_table().and_then(|t| {
                    t.set("type", kind.as_str())?;
                    t.set("channel", *channel)?;
                    t.set("number", *number)?;
                    t.set("value", *value)?;
                    Ok(t)
                });
                if let Ok(message) = message {
                    self.call("on_midi", message);
                }
            }
            ScriptEvent::Osc(address, args) => {
                let values = lua.create_sequence_from(args.iter().map(|a| {
                    match a {
                        OscArg::Number(n) => mlua::Value::Number(*n),
                        OscArg::Bool(b) => mlua::Value::Boolean(*b),
                        OscArg::Text(s) => lua
                            .create_string(s)
                            .map_or(mlua::Value::Nil, mlua::Value::String),
                    }
                }));
                if let Ok(values) = values {
                    self.call("on_osc", (address.as_str(), values));
                }
            }
        }
    }

    /// The requests scripts made since the last call.
    pub fn take_commands(&mut self) -> Vec<crate::command::Command> {
        self.bridge.borrow_mut().take_commands()
    }

    /// The `persist` table's value at `key`, for tests.
    pub fn persisted(&self, key: &str) -> Option<String> {
        let generation = self.current.as_ref()?;
        let value: mlua::Value = generation.persist.get(key).ok()?;
        generation
            .state
            .lua
            .coerce_string(value)
            .ok()
            .flatten()
            .map(|s| s.to_string_lossy())
    }

    fn origin(&self) -> String {
        format!("scripts/{}", self.file)
    }

    fn set_fields(&self, clock: &Clock, registry: &Registry) {
        if let Some(generation) = &self.current {
            set_fields(&generation.state.api, clock, registry);
        }
    }

    /// Evaluates the file into a fresh state and environment and runs
    /// `setup()`.
    fn evaluate(
        &mut self,
        file: &str,
        clock: &Clock,
        registry: &Registry,
    ) -> Result<Generation, ScriptError> {
        let asset = self.assets.read(Folder::Scripts, file)?;
        let state = State::new(&self.bridge, &self.log, self.seed)?;
        set_fields(&state.api, clock, registry);
        let loading = Rc::new(RefCell::new(None));
        let require = require_function(&state.lua, &loading, &self.assets)?;
        let persist = match &self.current {
            Some(old) => persist::copy(&old.persist, &state.lua),
            None => state.lua.create_table(),
        }?;
        let env = sandbox::environment(&state.lua, &state.guards, &state.api, &persist, require)?;
        if self.show_time {
            sandbox::clock_from_show(&state.lua, &env)?;
        }
        *loading.borrow_mut() = Some(Loading {
            env: env.clone(),
            modules: vec![file.to_string()],
        });
        state.budget.reset();
        let loaded = state
            .lua
            .load(&asset.text)
            .set_name(format!("@{}", asset.display))
            .set_environment(env.clone())
            .exec()
            .and_then(|()| match env.get::<Option<Function>>("setup")? {
                Some(setup) => {
                    state.budget.reset();
                    setup.call::<()>(())
                }
                None => Ok(()),
            });
        let modules = loading
            .borrow_mut()
            .take()
            .map(|l: Loading| l.modules)
            .unwrap_or_default();
        loaded?;
        Ok(Generation {
            state,
            env,
            persist,
            disabled: HashSet::new(),
            stopped: false,
            modules,
        })
    }

    /// Calls a callback under the budget; an error disables it until the
    /// next load.
    fn call(&mut self, name: &'static str, args: impl IntoLuaMulti) {
        let Some(generation) = self.current.as_mut() else {
            return;
        };
        if generation.stopped || generation.disabled.contains(name) {
            return;
        }
        let Ok(Some(function)) = generation.env.get::<Option<Function>>(name) else {
            return;
        };
        generation.state.budget.reset();
        let started = Instant::now();
        let called = function.call::<()>(args);
        let took = started.elapsed();
        if took > OVERRUN {
            // Only time spent inside one C function escapes the budget's
            // hook; a script that does it once would do it every frame.
            generation.stopped = true;
            self.errors.report(
                format!("scripts/{}", self.file),
                format!(
                    "{name}() took {} ms in one call (the budget is {} ms); the script is stopped until it is saved again",
                    took.as_millis(),
                    TIME_BUDGET.as_millis()
                ),
            );
        } else if let Err(error) = called {
            generation.disabled.insert(name);
            self.errors.report(
                format!("scripts/{}", self.file),
                format!("{error}\n{name}() is disabled until the script is saved again"),
            );
        }
        self.log.borrow_mut().flush();
    }
}

/// Refreshes the fields scripts read: time, beat, phase, bpm and frame.
/// The fields of `sylva.audio`: the read-only `audio.*` parameters.
const AUDIO_FIELDS: [(&str, &str); 6] = [
    ("level", "audio.level"),
    ("bass", "audio.bass"),
    ("mid", "audio.mid"),
    ("high", "audio.high"),
    ("onset", "audio.onset"),
    ("bpm", "audio.bpm"),
];

fn set_fields(api: &Table, clock: &Clock, registry: &Registry) {
    let fields = [
        ("time", clock.time),
        ("beat", clock.beats),
        ("beat_phase", f64::from(clock.beat_phase())),
        ("bpm", f64::from(clock.bpm)),
    ];
    for (name, value) in fields {
        let _ = api.set(name, value);
    }
    let _ = api.set("frame", clock.frame);
    if let Ok(audio) = api.get::<Table>("audio") {
        for (field, param) in AUDIO_FIELDS {
            let value = registry.get(param).and_then(|v| v.as_f32());
            let _ = audio.set(field, value.unwrap_or(0.0));
        }
        if let Some(crate::params::Value::List(bands)) = registry.get("audio.bands") {
            let _ = audio.set("bands", bands.clone());
        }
    }
}

/// `require(name)`: loads `scripts/<name with dots as slashes>.lua` into
/// the environment of the generation being loaded, once.
fn require_function(
    lua: &Lua,
    loading: &Rc<RefCell<Option<Loading>>>,
    assets: &Assets,
) -> mlua::Result<Function> {
    let loading = loading.clone();
    let assets = assets.clone();
    {
        lua.create_function(move |lua, name: String| {
            let file = format!("{}.lua", name.replace('.', "/"));
            inside_show(&file).map_err(mlua::Error::external)?;
            let (env, cache) = {
                let state = loading.borrow();
                let Loading { env, .. } = state.as_ref().ok_or_else(|| {
                    mlua::Error::RuntimeError(
                        "require works while a script loads (at its top level or in setup)".into(),
                    )
                })?;
                let cache = match env.get::<Option<Table>>("__modules")? {
                    Some(cache) => cache,
                    None => {
                        let cache = lua.create_table()?;
                        env.set("__modules", &cache)?;
                        cache
                    }
                };
                (env.clone(), cache)
            };
            if let Some(value) = cache.get::<Option<mlua::Value>>(name.as_str())? {
                return Ok(value);
            }
            let asset = assets
                .read(Folder::Scripts, &file)
                .map_err(mlua::Error::external)?;
            let value: mlua::Value = lua
                .load(&asset.text)
                .set_name(format!("@{}", asset.display))
                .set_environment(env)
                .eval()?;
            let value = if value.is_nil() {
                mlua::Value::Boolean(true)
            } else {
                value
            };
            cache.set(name.as_str(), &value)?;
            if let Some(state) = loading.borrow_mut().as_mut() {
                state.modules.push(file);
            }
            Ok(value)
        })
    }
}
