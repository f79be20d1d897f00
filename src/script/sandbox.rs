//! The Lua sandbox: a state with only the base, string, table, math and
//! utf8 libraries (and `os.clock`, `os.time`), a memory limit, and a budget
//! per call into Lua (instructions and wall-clock time) so an endless loop
//! is interrupted and reported while the frame goes on.
//!
//! A spent budget stays spent until the host's next call: the hook fails
//! again every few instructions, and `pcall`/`xpcall` re-raise instead of
//! catching, so no script can swallow the interruption and loop on.
//! `__gc` metamethods are refused (finalizers run where no budget can stop
//! them), and what would run far past the budget inside C, where the hook
//! cannot see, is refused before it runs: string patterns by their worst
//! case, and the library's loops (`string.rep`, `table.move`, `concat`,
//! `unpack`, `sort`) by their length. A call that overruns all the same
//! ends its script generation (`ScriptHost`'s watchdog).

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::{HookTriggers, Lua, LuaOptions, StdLib, Table, VmState};

/// Instructions one call into Lua may run: a few milliseconds of Lua on a
/// laptop, well under a frame.
pub const INSTRUCTION_BUDGET: u64 = 2_000_000;

/// Wall-clock time one call into Lua may take, whatever it runs.
pub const TIME_BUDGET: Duration = Duration::from_millis(100);

/// How often the hook counts, in instructions.
const HOOK_EVERY: u32 = 1_000;

/// Bytes the whole Lua state may allocate.
pub const MEMORY_LIMIT: usize = 64 << 20;

/// Worst-case steps a string pattern call may take (see [`pattern_cost`]).
pub const PATTERN_STEPS: f64 = 1e8;

/// Elements `table.sort` sorts in one call: sorting runs in C, unseen by
/// the instruction count.
pub const MAX_SORT: i64 = 200_000;

/// Items one call of a looping C library function may be asked for
/// (`string.rep`'s count, the elements `table.move`, `table.concat` and
/// `table.unpack` walk): the loop runs in C, unseen by the instruction
/// count, so its length is bounded before it starts (about a millisecond).
pub const MAX_C_ITEMS: i64 = 1_000_000;

/// Bytes one `string.rep` may build.
pub const MAX_REP_BYTES: i64 = 16 << 20;

/// Base-library functions a script may use; `load`, `loadfile`, `dofile`
/// and `collectgarbage` stay out, and `pcall`, `xpcall` and `setmetatable`
/// are wrapped (see [`GUARDS`]).
const BASE: [&str; 15] = [
    "assert",
    "error",
    "ipairs",
    "next",
    "pairs",
    "rawequal",
    "rawget",
    "rawlen",
    "rawset",
    "select",
    "getmetatable",
    "tonumber",
    "tostring",
    "type",
    "_VERSION",
];

/// Lua wrappers around the functions a script could use to outlive its
/// budget. Evaluated once per state with the raw functions as arguments.
const GUARDS: &str = r#"
local raw_pcall, raw_setmetatable, string, table, spent, pattern_check, max_sort, max_items, max_rep_bytes, on_time = ...
local error, rawget, type, tostring, tonumber, select = error, rawget, type, tostring, tonumber, select
local function pass(ok, ...)
  if not ok and spent() then error((...), 0) end
  return ok, ...
end
local guards = {}
function guards.pcall(f, ...) return pass(raw_pcall(f, ...)) end
-- The handler runs after the error unwinds, not as Lua's message handler:
-- an error raised by the budget hook calls message handlers with hooks off,
-- where nothing could stop a handler that loops.
local function handled(handler, ok, ...)
  if ok then return true, ... end
  if spent() then error((...), 0) end
  return false, handler((...))
end
function guards.xpcall(f, handler, ...) return handled(handler, raw_pcall(f, ...)) end
function guards.setmetatable(t, mt)
  if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
    error("__gc metamethods are not allowed in scripts", 2)
  end
  return raw_setmetatable(t, mt)
end
for _, name in ipairs({ "find", "match", "gmatch", "gsub" }) do
  local raw = string[name]
  string[name] = function(s, pattern, ...)
    local plain = name == "find" and select(2, ...)
    if not plain then
      local subject = type(s) == "string" and s or tostring(s)
      pattern_check(name, #subject, pattern)
    end
    return raw(s, pattern, ...)
  end
end
local raw_sort = table.sort
table.sort = function(t, ...)
  if type(t) == "table" and #t > max_sort then
    error("table.sort: at most " .. max_sort .. " elements in one call", 2)
  end
  return raw_sort(t, ...)
end
-- C loops the instruction count cannot see: bounded by their length
-- before they start, and each call first checks the wall clock.
local function span(name, from, to)
  from, to = tonumber(from), tonumber(to)
  if from and to and to - from >= max_items then
    error(name .. ": at most " .. max_items .. " elements in one call", 3)
  end
end
local raw_rep = string.rep
string.rep = function(s, n, sep)
  on_time()
  local count = tonumber(n)
  if count and count > 0 then
    local piece = #tostring(s) + (sep ~= nil and #tostring(sep) or 0)
    if count > max_items or piece * count > max_rep_bytes then
      error("string.rep: at most " .. max_items .. " copies and " .. max_rep_bytes .. " bytes in one call", 2)
    end
  end
  return raw_rep(s, n, sep)
end
local raw_move = table.move
table.move = function(a1, f, e, t, a2)
  on_time()
  span("table.move", f, e)
  return raw_move(a1, f, e, t, a2)
end
local raw_concat = table.concat
table.concat = function(list, sep, i, j)
  on_time()
  span("table.concat", i or 1, j or (type(list) == "table" and #list or 0))
  return raw_concat(list, sep, i, j)
end
local raw_unpack = table.unpack
table.unpack = function(list, i, j)
  on_time()
  span("table.unpack", i or 1, j or (type(list) == "table" and #list or 0))
  return raw_unpack(list, i, j)
end
return guards
"#;

/// The budget of the call into Lua now running.
#[derive(Clone, Default)]
pub struct Budget {
    ticks: Rc<Cell<u64>>,
    deadline: Rc<Cell<Option<Instant>>>,
    spent: Rc<Cell<bool>>,
}

impl Budget {
    /// Starts a new call's budget.
    pub fn reset(&self) {
        self.ticks.set(0);
        self.spent.set(false);
        self.deadline.set(Some(Instant::now() + TIME_BUDGET));
    }

    /// Whether the running call has spent its budget.
    pub fn spent(&self) -> bool {
        self.spent.get()
    }

    /// Whether the running call is past its wall-clock budget.
    fn late(&self) -> bool {
        self.deadline.get().is_some_and(|d| Instant::now() > d)
    }
}

/// A new Lua state with the sandbox's libraries, memory limit, budget and
/// guards; returns the state, its budget and the guarded base functions.
pub fn new_state() -> mlua::Result<(Lua, Budget, Table)> {
    let libs = StdLib::STRING | StdLib::TABLE | StdLib::MATH | StdLib::UTF8 | StdLib::OS;
    let lua = Lua::new_with(libs, LuaOptions::default())?;
    lua.set_memory_limit(MEMORY_LIMIT)?;
    let budget = Budget::default();
    let hook_budget = budget.clone();
    let limit = INSTRUCTION_BUDGET / u64::from(HOOK_EVERY);
    lua.set_global_hook(
        HookTriggers::new().every_nth_instruction(HOOK_EVERY),
        move |_, debug| {
            let used = hook_budget.ticks.get() + 1;
            hook_budget.ticks.set(used);
            if used > limit || hook_budget.late() {
                hook_budget.spent.set(true);
            }
            if !hook_budget.spent.get() {
                return Ok(VmState::Continue);
            }
            let source = debug.source();
            let file = source.short_src.as_deref().unwrap_or("?");
            let line = debug.current_line().map_or(String::new(), |l| format!("{l}:"));
            Err(mlua::Error::RuntimeError(format!(
                "{file}:{line} instruction budget of {INSTRUCTION_BUDGET} (or {} ms) exceeded (an endless loop?)",
                TIME_BUDGET.as_millis()
            )))
        },
    )?;
    let guards = guards(&lua, &budget)?;
    Ok((lua, budget, guards))
}

fn guards(lua: &Lua, budget: &Budget) -> mlua::Result<Table> {
    let globals = lua.globals();
    let spent_budget = budget.clone();
    let spent = lua.create_function(move |_, ()| Ok(spent_budget.spent()))?;
    let clock_budget = budget.clone();
    let on_time = lua.create_function(move |_, ()| {
        if clock_budget.late() {
            clock_budget.spent.set(true);
        }
        match clock_budget.spent() {
            true => Err(mlua::Error::RuntimeError(format!(
                "time budget of {} ms exceeded",
                TIME_BUDGET.as_millis()
            ))),
            false => Ok(()),
        }
    })?;
    let pattern_check = lua.create_function(
        |_, (name, subject_len, pattern): (String, usize, mlua::Value)| {
            let mlua::Value::String(pattern) = pattern else {
                return Ok(());
            };
            let cost = pattern_cost(subject_len, &pattern.as_bytes());
            if cost > PATTERN_STEPS {
                return Err(mlua::Error::RuntimeError(format!(
                    "string.{name}: this pattern on {subject_len} bytes could take ~{cost:.0e} steps \
                     (at most {PATTERN_STEPS:.0e}); use a shorter string or a simpler pattern"
                )));
            }
            Ok(())
        },
    )?;
    lua.load(GUARDS).set_name("@sylva/sandbox.lua").call((
        globals.get::<mlua::Function>("pcall")?,
        globals.get::<mlua::Function>("setmetatable")?,
        globals.get::<Table>("string")?,
        globals.get::<Table>("table")?,
        spent,
        pattern_check,
        MAX_SORT,
        MAX_C_ITEMS,
        MAX_REP_BYTES,
        on_time,
    ))
}

/// A worst-case estimate of the steps a Lua pattern takes on a subject of
/// `n` bytes: every quantified item (`*`, `+`, `-`), `%b` and back-reference
/// can scan the rest of the subject for each choice of the ones before it,
/// `?` doubles the choices, and an unanchored pattern is tried at every
/// start. Pessimistic by design: it only has to be an upper bound.
pub fn pattern_cost(n: usize, pattern: &[u8]) -> f64 {
    let anchored = pattern.first() == Some(&b'^');
    let (mut scans, mut options) = (u32::from(!anchored), 0u32);
    let mut i = usize::from(anchored);
    while i < pattern.len() {
        let item_end = match pattern[i] {
            b'%' => match pattern.get(i + 1) {
                Some(b'b') => {
                    scans += 1;
                    i + 4
                }
                Some(b'f') => skip_set(pattern, i + 2),
                Some(d) if d.is_ascii_digit() => {
                    scans += 1;
                    i + 2
                }
                _ => i + 2,
            },
            b'[' => skip_set(pattern, i),
            _ => i + 1,
        };
        match pattern.get(item_end) {
            Some(b'*' | b'+' | b'-') => {
                scans += 1;
                i = item_end + 1;
            }
            Some(b'?') => {
                options += 1;
                i = item_end + 1;
            }
            _ => i = item_end,
        }
    }
    let n = (n.max(2)) as f64;
    n.powi(scans as i32) * 2f64.powi(options.min(60) as i32)
}

/// The index just past the set `[...]` starting at `start`.
fn skip_set(pattern: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    if pattern.get(i) == Some(&b'^') {
        i += 1;
    }
    // A `]` right after `[` or `[^` is a member, not the end.
    if pattern.get(i) == Some(&b']') {
        i += 1;
    }
    while i < pattern.len() && pattern[i] != b']' {
        i += if pattern[i] == b'%' { 2 } else { 1 };
    }
    i + 1
}

/// A fresh global environment for one script generation: the allowed base
/// functions and libraries, the guards, a trimmed `os`, a read-only
/// `sylva`, and `persist`, `require` and `print` from the host.
pub fn environment(
    lua: &Lua,
    guards: &Table,
    api: &Table,
    persist: &Table,
    require: mlua::Function,
) -> mlua::Result<Table> {
    let globals = lua.globals();
    let env = lua.create_table()?;
    for name in BASE {
        env.set(name, globals.get::<mlua::Value>(name)?)?;
    }
    for name in ["pcall", "xpcall", "setmetatable"] {
        env.set(name, guards.get::<mlua::Function>(name)?)?;
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
    env.set("sylva", read_only(lua, api)?)?;
    env.set("persist", persist)?;
    env.set("require", require)?;
    env.set("_G", &env)?;
    Ok(env)
}

/// Points `env`'s `os.clock()` and `os.time()` (without a date) at the
/// show's time, `sylva.time`, which the host sets before every call: the
/// computer's clock would make a render's script differ run to run. A
/// date given to `os.time` is converted as before.
pub fn clock_from_show(lua: &Lua, env: &Table) -> mlua::Result<()> {
    let os: Table = env.get("os")?;
    let sylva: Table = env.get("sylva")?;
    let math: Table = env.get("math")?;
    lua.load(
        "local os, sylva, floor, time = ...\n\
         os.clock = function() return sylva.time end\n\
         os.time = function(date) if date == nil then return floor(sylva.time) end return time(date) end",
    )
    .set_name("=sylva/show_time")
    .call::<()>((
        os.clone(),
        sylva,
        math.get::<mlua::Function>("floor")?,
        os.get::<mlua::Function>("time")?,
    ))
}

/// A view of `table` that scripts can read but not change.
fn read_only(lua: &Lua, table: &Table) -> mlua::Result<Table> {
    let view = lua.create_table()?;
    let meta = lua.create_table()?;
    meta.set("__index", table)?;
    meta.set(
        "__newindex",
        lua.create_function(|_, (_, key): (mlua::Value, mlua::Value)| {
            Err::<(), _>(mlua::Error::RuntimeError(format!(
                "sylva is read-only (cannot set sylva.{})",
                key.to_string().unwrap_or_default()
            )))
        })?,
    )?;
    meta.set("__metatable", false)?;
    view.set_metatable(Some(meta))?;
    Ok(view)
}

#[cfg(test)]
mod tests {
    use super::pattern_cost;

    #[test]
    fn pattern_costs_grow_with_quantifiers_and_length() {
        let catastrophic = format!("{}b", "a*".repeat(40));
        assert!(pattern_cost(40, catastrophic.as_bytes()) > 1e60);
        assert!(pattern_cost(300_000, b".-b") > 1e10);
        assert!(pattern_cost(100, b"^(%w+)=(.*)$") <= 1e4);
        assert!(pattern_cost(1_000, b"[%]*]+") <= 1e6);
        assert!(pattern_cost(5_000, b"%s+") <= 1e8);
        assert_eq!(pattern_cost(1_000, b"^abc"), 1.0);
    }
}
