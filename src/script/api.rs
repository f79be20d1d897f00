//! The `sylva` table scripts call: `get`, `set`, `ramp`, `layer`, `reseed`,
//! `preset`, `learn`, `log`, `params`, and the fields `time`, `frame`, `beat`,
//! `beat_phase` and `bpm` and the table `audio` (`level`, `bass`, `mid`,
//! `high`, `onset`, `bpm`, `bands`) that the host refreshes before every call.

use std::cell::RefCell;
use std::rc::Rc;

use mlua::{Lua, Table, Value as LuaValue};

use super::bridge::Bridge;
use super::log::LogLimiter;
use crate::command::{Command, PlaylistCommand};
use crate::params::{Easing, ParamKind, ParamSpec, Value};

/// Builds the `sylva` table around `bridge`.
pub fn create(
    lua: &Lua,
    bridge: &Rc<RefCell<Bridge>>,
    log: &Rc<RefCell<LogLimiter>>,
) -> mlua::Result<Table> {
    let api = lua.create_table()?;
    api.set("audio", lua.create_table()?)?;
    let b = bridge.clone();
    api.set(
        "get",
        lua.create_function(move |lua, name: String| {
            let bridge = b.borrow();
            let (spec, value) = bridge.get(&name).map_err(mlua::Error::external)?;
            to_lua(lua, spec, value)
        })?,
    )?;
    let b = bridge.clone();
    api.set(
        "set",
        lua.create_function(move |_, (name, value): (String, LuaValue)| {
            let value = from_lua(&value)?;
            b.borrow_mut()
                .set(&name, value)
                .map_err(mlua::Error::external)
        })?,
    )?;
    let b = bridge.clone();
    api.set(
        "ramp",
        lua.create_function(
            move |_, (name, value, seconds, easing): (String, LuaValue, f32, Option<String>)| {
                let easing: Easing = easing
                    .as_deref()
                    .unwrap_or("linear")
                    .parse()
                    .map_err(mlua::Error::RuntimeError)?;
                let value = from_lua(&value)?;
                b.borrow_mut()
                    .ramp(&name, value, seconds, easing)
                    .map_err(mlua::Error::external)
            },
        )?,
    )?;
    let b = bridge.clone();
    api.set(
        "preset",
        lua.create_function(move |_, (name, seconds): (String, Option<f32>)| {
            b.borrow_mut().push(Command::LoadPreset(name, seconds));
            Ok(())
        })?,
    )?;
    for (name, step) in [
        ("next", PlaylistCommand::Next),
        ("previous", PlaylistCommand::Previous),
        ("stop", PlaylistCommand::Stop),
    ] {
        let b = bridge.clone();
        api.set(
            name,
            lua.create_function(move |_, ()| {
                b.borrow_mut().push(Command::Playlist(step.clone()));
                Ok(())
            })?,
        )?;
    }
    let b = bridge.clone();
    api.set(
        "play",
        lua.create_function(move |_, name: String| {
            b.borrow_mut()
                .push(Command::Playlist(PlaylistCommand::Play(name)));
            Ok(())
        })?,
    )?;
    let b = bridge.clone();
    api.set(
        "reseed",
        lua.create_function(move |_, layer: String| {
            b.borrow_mut().push(Command::Reseed(layer));
            Ok(())
        })?,
    )?;
    let b = bridge.clone();
    api.set(
        "learn",
        lua.create_function(move |_, param: String| {
            b.borrow().get(&param).map_err(mlua::Error::external)?;
            b.borrow_mut().push(Command::Learn(param));
            Ok(())
        })?,
    )?;
    let limiter = log.clone();
    api.set(
        "log",
        lua.create_function(move |_, parts: mlua::Variadic<LuaValue>| {
            let text: Vec<String> = parts.iter().map(describe).collect();
            limiter.borrow_mut().line(text.join(" "));
            Ok(())
        })?,
    )?;
    let b = bridge.clone();
    api.set(
        "params",
        lua.create_function(move |lua, ()| {
            let bridge = b.borrow();
            let list = lua.create_table()?;
            for (index, spec) in bridge.specs().into_iter().enumerate() {
                list.set(index + 1, describe_spec(lua, spec)?)?;
            }
            Ok(list)
        })?,
    )?;
    Ok(api)
}

/// A parameter value as Lua sees it: numbers, booleans, enum names,
/// strings, and arrays of 3 or 4 numbers.
fn to_lua(lua: &Lua, spec: &ParamSpec, value: &Value) -> mlua::Result<LuaValue> {
    Ok(match value {
        Value::Float(v) => LuaValue::Number(f64::from(*v)),
        Value::Int(v) => LuaValue::Integer(i64::from(*v)),
        Value::Bool(v) => LuaValue::Boolean(*v),
        Value::Enum(_) | Value::Text(_) => {
            LuaValue::String(lua.create_string(spec.display(value).trim_matches('"'))?)
        }
        Value::Vec3(v) => LuaValue::Table(lua.create_sequence_from(v.iter().copied())?),
        Value::Colour(v) => LuaValue::Table(lua.create_sequence_from(v.iter().copied())?),
        Value::List(v) => LuaValue::Table(lua.create_sequence_from(v.iter().copied())?),
    })
}

/// A Lua value as a parameter value, before the spec checks it.
fn from_lua(value: &LuaValue) -> mlua::Result<Value> {
    match value {
        LuaValue::Integer(v) => Ok(Value::Int(i32::try_from(*v).unwrap_or(if *v < 0 {
            i32::MIN
        } else {
            i32::MAX
        }))),
        LuaValue::Number(v) => Ok(Value::Float(*v as f32)),
        LuaValue::Boolean(v) => Ok(Value::Bool(*v)),
        LuaValue::String(s) => Ok(Value::Text(s.to_str()?.to_string())),
        LuaValue::Table(t) => {
            let numbers: Vec<f32> = t.sequence_values::<f32>().collect::<mlua::Result<_>>()?;
            match numbers.as_slice() {
                [x, y, z] => Ok(Value::Vec3([*x, *y, *z])),
                [r, g, b, a] => Ok(Value::Colour([*r, *g, *b, *a])),
                _ => Err(mlua::Error::RuntimeError(format!(
                    "a table value needs 3 or 4 numbers, got {}",
                    numbers.len()
                ))),
            }
        }
        other => Err(mlua::Error::RuntimeError(format!(
            "cannot use a {} as a parameter value",
            other.type_name()
        ))),
    }
}

fn describe(value: &LuaValue) -> String {
    match value {
        LuaValue::String(s) => s.to_string_lossy(),
        LuaValue::Nil => "nil".into(),
        LuaValue::Boolean(b) => b.to_string(),
        LuaValue::Integer(i) => i.to_string(),
        LuaValue::Number(n) => n.to_string(),
        other => format!("<{}>", other.type_name()),
    }
}

fn describe_spec(lua: &Lua, spec: &ParamSpec) -> mlua::Result<Table> {
    let entry = lua.create_table()?;
    entry.set("name", spec.name.as_str())?;
    entry.set("type", spec.kind.name())?;
    entry.set("unit", spec.unit.as_str())?;
    entry.set("description", spec.description.as_str())?;
    match &spec.kind {
        ParamKind::Float { min, max } | ParamKind::Vec3 { min, max } => {
            entry.set("min", *min)?;
            entry.set("max", *max)?;
        }
        ParamKind::Int { min, max } => {
            entry.set("min", *min)?;
            entry.set("max", *max)?;
        }
        ParamKind::Enum { options } => {
            entry.set(
                "options",
                lua.create_sequence_from(options.iter().map(String::as_str))?,
            )?;
        }
        _ => {}
    }
    Ok(entry)
}
