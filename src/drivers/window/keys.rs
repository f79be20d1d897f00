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
}

/// The action bound to `key` with `modifiers`, if any.
pub fn action(key: &Key, modifiers: ModifiersState) -> Option<Action> {
    let command = modifiers.control_key() || modifiers.super_key();
    match key {
        Key::Named(NamedKey::F11) => Some(Action::ToggleFullscreen),
        Key::Named(NamedKey::Escape) => Some(Action::LeaveFullscreen),
        Key::Character(c) => match (c.to_lowercase().as_str(), command) {
            ("q", true) => Some(Action::Quit),
            ("f", false) => Some(Action::ToggleFullscreen),
            ("h", false) => Some(Action::ToggleHud),
            ("l", false) => Some(Action::Learn),
            ("m", false) => Some(Action::TogglePointer),
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
    }
}
