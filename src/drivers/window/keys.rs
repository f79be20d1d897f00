//! Keys of the window: what each one does, kept apart from winit's event
//! plumbing so the bindings are one table a person can read.

use winit::keyboard::{Key, ModifiersState, NamedKey};

/// Something a key asks the window to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// F11 or `f`: fullscreen on or off.
    ToggleFullscreen,
    /// Esc: leave fullscreen (never quits, so a stray Esc cannot end a show).
    LeaveFullscreen,
    /// Ctrl+Q (Cmd+Q on macOS): quit.
    Quit,
    /// `h`: show or hide the HUD.
    ToggleHud,
    /// `l`: MIDI learn for the parameter selected in the HUD.
    Learn,
    /// `]` / `[`: the playlist's next / previous entry.
    Playlist(bool),
    /// `m`: pointer mode, the mouse dragging `master.pointer` (the fluid's
    /// interaction point).
    TogglePointer,
    /// `o`: mapping mode, the outputs showing their alignment pattern and
    /// handles to drag.
    ToggleMapping,
    /// Ctrl+S: write the outputs' mapping back into the outputs file.
    SaveMapping,
    /// Tab (mapping mode): select the next handle.
    NextHandle,
    /// Arrows (mapping mode): nudge the selected handle a pixel; with
    /// Shift, ten.
    Nudge([i32; 2], bool),
}

/// The action bound to `key` with `modifiers`, if any.
pub fn action(key: &Key, modifiers: ModifiersState) -> Option<Action> {
    let command = modifiers.control_key() || modifiers.super_key();
    let shift = modifiers.shift_key();
    match key {
        Key::Named(NamedKey::F11) => Some(Action::ToggleFullscreen),
        Key::Named(NamedKey::Tab) => Some(Action::NextHandle),
        Key::Named(NamedKey::ArrowLeft) => Some(Action::Nudge([-1, 0], shift)),
        Key::Named(NamedKey::ArrowRight) => Some(Action::Nudge([1, 0], shift)),
        Key::Named(NamedKey::ArrowUp) => Some(Action::Nudge([0, -1], shift)),
        Key::Named(NamedKey::ArrowDown) => Some(Action::Nudge([0, 1], shift)),
        Key::Named(NamedKey::Escape) => Some(Action::LeaveFullscreen),
        Key::Character(c) => match (c.to_lowercase().as_str(), command) {
            ("q", true) => Some(Action::Quit),
            ("f", false) => Some(Action::ToggleFullscreen),
            ("h", false) => Some(Action::ToggleHud),
            ("l", false) => Some(Action::Learn),
            ("m", false) => Some(Action::TogglePointer),
            ("o", false) => Some(Action::ToggleMapping),
            ("s", true) => Some(Action::SaveMapping),
            ("]", false) => Some(Action::Playlist(true)),
            ("[", false) => Some(Action::Playlist(false)),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_never_quits_and_ctrl_q_does() {
        let none = ModifiersState::empty();
        assert_eq!(
            action(&Key::Named(NamedKey::Escape), none),
            Some(Action::LeaveFullscreen)
        );
        assert_eq!(action(&Key::Character("q".into()), none), None);
        assert_eq!(
            action(&Key::Character("q".into()), ModifiersState::CONTROL),
            Some(Action::Quit)
        );
        assert_eq!(
            action(&Key::Character("f".into()), none),
            Some(Action::ToggleFullscreen)
        );
        assert_eq!(
            action(&Key::Named(NamedKey::F11), none),
            Some(Action::ToggleFullscreen)
        );
        assert_eq!(
            action(&Key::Character("H".into()), none),
            Some(Action::ToggleHud)
        );
        assert_eq!(
            action(&Key::Character("]".into()), none),
            Some(Action::Playlist(true))
        );
        assert_eq!(
            action(&Key::Character("s".into()), ModifiersState::CONTROL),
            Some(Action::SaveMapping)
        );
        assert_eq!(
            action(&Key::Named(NamedKey::ArrowUp), ModifiersState::SHIFT),
            Some(Action::Nudge([0, -1], true))
        );
    }
}
