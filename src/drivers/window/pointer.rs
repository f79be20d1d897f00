//! Pointer mode (key `m`): the mouse over the picture writes
//! `master.pointer` (where it is, 0..1 from the top left, and whether the
//! left button presses), so dragging pushes the fluid as the book's demo
//! drags its interaction point. Off, the mouse is the HUD's alone.

use crate::command::Command;
use crate::params::{Source, Value};

/// The pointer as the window last saw it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pointer {
    /// Whether pointer mode is on.
    pub on: bool,
    at: [f32; 2],
    pressed: bool,
}

impl Pointer {
    /// Switches pointer mode; switched off, the pointer lets go.
    pub fn toggle(&mut self) -> Option<Command> {
        self.on = !self.on;
        tracing::info!(
            "pointer mode {}",
            if self.on {
                "on: drag over the picture to push the fluid"
            } else {
                "off"
            }
        );
        if !self.on && self.pressed {
            self.pressed = false;
            return Some(self.command());
        }
        None
    }

    /// The cursor moved to `position` (pixels) in a window of `size`.
    pub fn moved(&mut self, position: [f64; 2], size: [u32; 2]) -> Option<Command> {
        let fraction = |p: f64, side: u32| (p / f64::from(side.max(1))).clamp(0.0, 1.0) as f32;
        self.at = [
            fraction(position[0], size[0]),
            fraction(position[1], size[1]),
        ];
        (self.on && self.pressed).then(|| self.command())
    }

    /// The left button went down (true) or up.
    pub fn button(&mut self, pressed: bool) -> Option<Command> {
        if !self.on || self.pressed == pressed {
            return None;
        }
        self.pressed = pressed;
        Some(self.command())
    }

    fn command(&self) -> Command {
        let pressed = if self.pressed { 1.0 } else { 0.0 };
        Command::Set(
            "master.pointer".into(),
            Value::Vec3([self.at[0], self.at[1], pressed]),
            Source::Ui,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pointer_of(command: Option<Command>) -> Option<[f32; 3]> {
        match command {
            Some(Command::Set(name, Value::Vec3(v), _)) if name == "master.pointer" => Some(v),
            _ => None,
        }
    }

    #[test]
    fn a_drag_in_pointer_mode_writes_the_pointer_and_letting_go_releases_it() {
        let mut pointer = Pointer::default();
        assert_eq!(pointer.button(true), None, "off: the mouse is the HUD's");
        assert_eq!(pointer.toggle(), None);
        assert_eq!(pointer.moved([320.0, 90.0], [640, 360]), None, "hovering");
        assert_eq!(pointer_of(pointer.button(true)), Some([0.5, 0.25, 1.0]));
        assert_eq!(
            pointer_of(pointer.moved([640.0, 400.0], [640, 360])),
            Some([1.0, 1.0, 1.0]),
            "dragging, kept on the picture"
        );
        assert_eq!(pointer_of(pointer.button(false)), Some([1.0, 1.0, 0.0]));
        pointer.button(true);
        assert_eq!(
            pointer_of(pointer.toggle()),
            Some([1.0, 1.0, 0.0]),
            "switched off while pressing: let go"
        );
    }
}
