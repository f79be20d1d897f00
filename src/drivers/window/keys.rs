//! Keys of the window: what each one does, kept apart from winit's event
//! plumbing so the bindings are one table a person can read.

use winit::keyboard::{Key, KeyCode, ModifiersState, NamedKey, PhysicalKey};

/// Something a key asks the window to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyAction {
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
pub fn action(key: &Key, modifiers: ModifiersState) -> Option<KeyAction> {
    let command = modifiers.control_key() || modifiers.super_key();
    let shift = modifiers.shift_key();
    match key {
        Key::Named(NamedKey::F11) => Some(KeyAction::ToggleFullscreen),
        Key::Named(NamedKey::Tab) => Some(KeyAction::NextHandle),
        Key::Named(NamedKey::ArrowLeft) => Some(KeyAction::Nudge([-1, 0], shift)),
        Key::Named(NamedKey::ArrowRight) => Some(KeyAction::Nudge([1, 0], shift)),
        Key::Named(NamedKey::ArrowUp) => Some(KeyAction::Nudge([0, -1], shift)),
        Key::Named(NamedKey::ArrowDown) => Some(KeyAction::Nudge([0, 1], shift)),
        Key::Named(NamedKey::Escape) => Some(KeyAction::LeaveFullscreen),
        Key::Character(c) => match (c.to_lowercase().as_str(), command) {
            ("q", true) => Some(KeyAction::Quit),
            ("f", false) => Some(KeyAction::ToggleFullscreen),
            ("h", false) => Some(KeyAction::ToggleHud),
            ("l", false) => Some(KeyAction::Learn),
            ("m", false) => Some(KeyAction::TogglePointer),
            ("o", false) => Some(KeyAction::ToggleMapping),
            ("s", true) => Some(KeyAction::SaveMapping),
            ("]", false) => Some(KeyAction::Playlist(true)),
            ("[", false) => Some(KeyAction::Playlist(false)),
            _ => None,
        },
        _ => None,
    }
}

/// The browser's `keyCode` of the key at `key` (where it sits, so a
/// shader's WASD stay where they are on any layout), as Shadertoy's
/// keyboard texture counts keys; none for keys a browser has no code for.
pub fn browser_code(key: PhysicalKey) -> Option<u8> {
    let PhysicalKey::Code(code) = key else {
        return None;
    };
    const LETTERS: [KeyCode; 26] = [
        KeyCode::KeyA,
        KeyCode::KeyB,
        KeyCode::KeyC,
        KeyCode::KeyD,
        KeyCode::KeyE,
        KeyCode::KeyF,
        KeyCode::KeyG,
        KeyCode::KeyH,
        KeyCode::KeyI,
        KeyCode::KeyJ,
        KeyCode::KeyK,
        KeyCode::KeyL,
        KeyCode::KeyM,
        KeyCode::KeyN,
        KeyCode::KeyO,
        KeyCode::KeyP,
        KeyCode::KeyQ,
        KeyCode::KeyR,
        KeyCode::KeyS,
        KeyCode::KeyT,
        KeyCode::KeyU,
        KeyCode::KeyV,
        KeyCode::KeyW,
        KeyCode::KeyX,
        KeyCode::KeyY,
        KeyCode::KeyZ,
    ];
    const DIGITS: [KeyCode; 10] = [
        KeyCode::Digit0,
        KeyCode::Digit1,
        KeyCode::Digit2,
        KeyCode::Digit3,
        KeyCode::Digit4,
        KeyCode::Digit5,
        KeyCode::Digit6,
        KeyCode::Digit7,
        KeyCode::Digit8,
        KeyCode::Digit9,
    ];
    if let Some(i) = LETTERS.iter().position(|k| *k == code) {
        return Some(65 + i as u8);
    }
    if let Some(i) = DIGITS.iter().position(|k| *k == code) {
        return Some(48 + i as u8);
    }
    Some(match code {
        KeyCode::Backspace => 8,
        KeyCode::Tab => 9,
        KeyCode::Enter | KeyCode::NumpadEnter => 13,
        KeyCode::ShiftLeft | KeyCode::ShiftRight => 16,
        KeyCode::ControlLeft | KeyCode::ControlRight => 17,
        KeyCode::AltLeft | KeyCode::AltRight => 18,
        KeyCode::Escape => 27,
        KeyCode::Space => 32,
        KeyCode::PageUp => 33,
        KeyCode::PageDown => 34,
        KeyCode::End => 35,
        KeyCode::Home => 36,
        KeyCode::ArrowLeft => 37,
        KeyCode::ArrowUp => 38,
        KeyCode::ArrowRight => 39,
        KeyCode::ArrowDown => 40,
        KeyCode::Delete => 46,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_have_the_browser_s_codes() {
        let code = |key| browser_code(PhysicalKey::Code(key));
        assert_eq!(code(KeyCode::KeyA), Some(65));
        assert_eq!(code(KeyCode::KeyZ), Some(90));
        assert_eq!(code(KeyCode::Digit7), Some(55));
        assert_eq!(code(KeyCode::Space), Some(32));
        assert_eq!(code(KeyCode::ArrowLeft), Some(37));
        assert_eq!(code(KeyCode::ArrowDown), Some(40));
        assert_eq!(code(KeyCode::F13), None);
    }

    #[test]
    fn escape_never_quits_and_ctrl_q_does() {
        let none = ModifiersState::empty();
        assert_eq!(
            action(&Key::Named(NamedKey::Escape), none),
            Some(KeyAction::LeaveFullscreen)
        );
        assert_eq!(action(&Key::Character("q".into()), none), None);
        assert_eq!(
            action(&Key::Character("q".into()), ModifiersState::CONTROL),
            Some(KeyAction::Quit)
        );
        assert_eq!(
            action(&Key::Character("f".into()), none),
            Some(KeyAction::ToggleFullscreen)
        );
        assert_eq!(
            action(&Key::Named(NamedKey::F11), none),
            Some(KeyAction::ToggleFullscreen)
        );
        assert_eq!(
            action(&Key::Character("H".into()), none),
            Some(KeyAction::ToggleHud)
        );
        assert_eq!(
            action(&Key::Character("]".into()), none),
            Some(KeyAction::Playlist(true))
        );
        assert_eq!(
            action(&Key::Character("s".into()), ModifiersState::CONTROL),
            Some(KeyAction::SaveMapping)
        );
        assert_eq!(
            action(&Key::Named(NamedKey::ArrowUp), ModifiersState::SHIFT),
            Some(KeyAction::Nudge([0, -1], true))
        );
    }
}
