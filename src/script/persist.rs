//! The `persist` table across reloads: each script generation runs in a
//! fresh Lua state, so its plain data (numbers, strings, booleans and
//! tables of them) is copied from the old state into the new one. Functions
//! and other values that belong to one state are left behind.

use mlua::{Lua, Table, Value};

/// Nesting depth copied; deeper tables are left out.
const MAX_DEPTH: usize = 32;

/// Entries copied in all; the rest are left out.
const MAX_ENTRIES: usize = 1_000_000;

/// A copy of `from` made in `lua`.
pub fn copy(from: &Table, lua: &Lua) -> mlua::Result<Table> {
    let mut budget = MAX_ENTRIES;
    copy_table(from, lua, 0, &mut budget)
}

fn copy_table(from: &Table, lua: &Lua, depth: usize, budget: &mut usize) -> mlua::Result<Table> {
    let to = lua.create_table()?;
    for pair in from.pairs::<Value, Value>() {
        let (key, value) = pair?;
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        let (Some(key), Some(value)) = (
            plain(&key, lua, depth, budget)?,
            plain(&value, lua, depth, budget)?,
        ) else {
            continue;
        };
        to.raw_set(key, value)?;
    }
    Ok(to)
}

fn plain(
    value: &Value,
    lua: &Lua,
    depth: usize,
    budget: &mut usize,
) -> mlua::Result<Option<Value>> {
    Ok(match value {
        Value::Boolean(_) | Value::Integer(_) | Value::Number(_) => Some(value.clone()),
        Value::String(s) => Some(Value::String(lua.create_string(s.as_bytes())?)),
        Value::Table(t) if depth < MAX_DEPTH => {
            Some(Value::Table(copy_table(t, lua, depth + 1, budget)?))
        }
        _ => None,
    })
}
