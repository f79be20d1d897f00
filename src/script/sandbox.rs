//! The Lua sandbox: a state with only the base, string, table, math and
//! utf8 libraries (and `os.clock`, `os.time`), a memory limit, and an
//! instruction budget per call into Lua so an endless loop is interrupted
//! and reported while the frame goes on.

use std::cell::Cell;
use std::rc::Rc;

use mlua::{HookTriggers, Lua, LuaOptions, StdLib, Table, VmState};

/// Instructions one call into Lua may run: a few milliseconds of Lua on a
/// laptop, well under a frame.
pub const INSTRUCTION_BUDGET: u64 = 2_000_000;

/// How often the hook counts, in instructions.
const HOOK_EVERY: u32 = 1_000;

/// Bytes the whole Lua state may allocate.
pub const MEMORY_LIMIT: usize = 64 << 20;

/// Base-library functions a script may use; `load`, `loadfile`, `dofile`
/// and `collectgarbage` stay out.
const BASE: [&str; 18] = [
    "assert",
    "error",
    "ipairs",
    "next",
    "pairs",
    "pcall",
    "rawequal",
    "rawget",
    "rawlen",
    "rawset",
    "select",
    "setmetatable",
    "getmetatable",
    "tonumber",
    "tostring",
    "type",
    "xpcall",
    "_VERSION",
];

/// Counts hook calls during one call into Lua.
#[derive(Clone, Default)]
pub struct Budget {
    ticks: Rc<Cell<u64>>,
}

impl Budget {
    /// Starts a new call's count.
    pub fn reset(&self) {
        self.ticks.set(0);
    }
}

/// A new Lua state with the sandbox's libraries, memory limit and budget.
pub fn new_state() -> mlua::Result<(Lua, Budget)> {
    let libs = StdLib::STRING | StdLib::TABLE | StdLib::MATH | StdLib::UTF8 | StdLib::OS;
    let lua = Lua::new_with(libs, LuaOptions::default())?;
    lua.set_memory_limit(MEMORY_LIMIT)?;
    let budget = Budget::default();
    let ticks = budget.ticks.clone();
    let limit = INSTRUCTION_BUDGET / u64::from(HOOK_EVERY);
    lua.set_hook(
        HookTriggers::new().every_nth_instruction(HOOK_EVERY),
        move |_, debug| {
            let used = ticks.get() + 1;
            ticks.set(used);
            if used > limit {
                let source = debug.source();
                let file = source.short_src.as_deref().unwrap_or("?");
                let line = debug.current_line().map_or(String::new(), |l| format!("{l}:"));
                Err(mlua::Error::RuntimeError(format!(
                    "{file}:{line} instruction budget of {INSTRUCTION_BUDGET} exceeded (an endless loop?)"
                )))
            } else {
                Ok(VmState::Continue)
            }
        },
    )?;
    Ok((lua, budget))
}

/// A fresh global environment for one script generation: the allowed base
/// functions and libraries, a trimmed `os`, and `sylva`, `persist`,
/// `require` and `print` from the host.
pub fn environment(
    lua: &Lua,
    api: &Table,
    persist: &Table,
    require: mlua::Function,
) -> mlua::Result<Table> {
    let globals = lua.globals();
    let env = lua.create_table()?;
    for name in BASE {
        env.set(name, globals.get::<mlua::Value>(name)?)?;
    }
    for library in ["string", "table", "math", "utf8"] {
        env.set(library, globals.get::<Table>(library)?)?;
    }
    let os: Table = globals.get("os")?;
    let trimmed = lua.create_table()?;
    trimmed.set("clock", os.get::<mlua::Function>("clock")?)?;
    trimmed.set("time", os.get::<mlua::Function>("time")?)?;
    env.set("os", trimmed)?;
    env.set("print", api.get::<mlua::Function>("log")?)?;
    env.set("sylva", api)?;
    env.set("persist", persist)?;
    env.set("require", require)?;
    env.set("_G", &env)?;
    Ok(env)
}
