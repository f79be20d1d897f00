//! What the Lua API sees of the show, and what it asks of it. Scripts run
//! on the main thread inside the frame, but the registry belongs to the
//! show; so before each call the host copies the parameter values into
//! the bridge, the API functions read and write that copy (checking types
//! and ranges against the specs, so errors surface in the script at once),
//! and after the call the host applies the queued commands to the registry.

use std::collections::HashMap;

use crate::command::Command;
use crate::params::{Easing, ParamError, ParamSpec, Registry, Source, Value};

/// The copy of the registry a script reads, and its queued requests.
#[derive(Debug, Default)]
pub struct Bridge {
    specs: HashMap<String, ParamSpec>,
    values: HashMap<String, Value>,
    revision: u64,
    commands: Vec<Command>,
}

impl Bridge {
    /// Copies the registry's target values (and its specs when they changed).
    pub fn refresh(&mut self, registry: &Registry) {
        if self.revision != registry.revision() || self.specs.is_empty() {
            self.specs = registry
                .iter()
                .map(|(s, _)| (s.name.clone(), s.clone()))
                .collect();
            self.revision = registry.revision();
        }
        self.values.clear();
        for (spec, _) in registry.iter() {
            if let Some(target) = registry.target(&spec.name) {
                self.values.insert(spec.name.clone(), target.clone());
            }
        }
    }

    /// The value a script sees: its own latest write, else the target.
    pub fn get(&self, name: &str) -> Result<(&ParamSpec, &Value), ParamError> {
        let spec = self.spec(name)?;
        let value = self
            .values
            .get(name)
            .ok_or_else(|| ParamError::Unknown(name.to_string()))?;
        Ok((spec, value))
    }

    /// Checks and clamps `value` and queues the write.
    pub fn set(&mut self, name: &str, value: Value) -> Result<(), ParamError> {
        let value = self.checked(name, value)?;
        self.values.insert(name.to_string(), value.clone());
        self.commands
            .push(Command::Set(name.to_string(), value, Source::Script));
        Ok(())
    }

    /// Checks and queues a ramp.
    pub fn ramp(
        &mut self,
        name: &str,
        value: Value,
        seconds: f32,
        easing: Easing,
    ) -> Result<(), ParamError> {
        let value = self.checked(name, value)?;
        if !self.spec(name)?.kind.is_continuous() {
            return Err(ParamError::NotRampable(name.to_string()));
        }
        self.commands.push(Command::Ramp(
            name.to_string(),
            value,
            seconds,
            easing,
            Source::Script,
        ));
        Ok(())
    }

    /// Queues any other request.
    pub fn push(&mut self, command: Command) {
        self.commands.push(command);
    }

    /// Takes the queued requests.
    pub fn take_commands(&mut self) -> Vec<Command> {
        std::mem::take(&mut self.commands)
    }

    /// Every spec, by name order.
    pub fn specs(&self) -> Vec<&ParamSpec> {
        let mut specs: Vec<&ParamSpec> = self.specs.values().collect();
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        specs
    }

    fn spec(&self, name: &str) -> Result<&ParamSpec, ParamError> {
        self.specs
            .get(name)
            .ok_or_else(|| ParamError::Unknown(name.to_string()))
    }

    fn checked(&self, name: &str, value: Value) -> Result<Value, ParamError> {
        self.spec(name)?.checked(value)
    }
}
