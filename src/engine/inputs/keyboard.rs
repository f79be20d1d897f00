//! The keyboard as a texture, as Shadertoy gives it: 256 × 3 texels, one
//! column per key code (the browser's `keyCode`: `A` is 65, space 32, the
//! arrows 37-40), row 0 the keys held down, row 1 the keys that went down
//! this frame, row 2 each key's toggle (flipped at every press). A shader
//! reads it with `texelFetch(iChannel0, ivec2(65, 0), 0).x`. The window
//! feeds it its keys; with no window (render, bench) no key is ever down.
//!
//! GL's rows count from the bottom and the texture is kept top row first,
//! so row 0 is stored last (the shaders' `texelFetch` turns it upright).

use crate::gpu::Gpu;
use crate::gpu::image::{image_texture, write_image};

/// The texture source's name: `iChannel0 = "keyboard"`, or
/// `// @channel0 keyboard` in a pass.
pub const KEYBOARD: &str = "keyboard";

/// Key codes a texture row has.
const KEYS: usize = 256;
/// The rows: held, pressed this frame, toggled.
const ROWS: usize = 3;
/// The texture's size.
pub const SIZE: [u32; 2] = [KEYS as u32, ROWS as u32];

/// Which keys are held, went down this frame and are toggled on.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyState {
    held: [bool; KEYS],
    pressed: [bool; KEYS],
    toggled: [bool; KEYS],
}

impl Default for KeyState {
    fn default() -> Self {
        Self {
            held: [false; KEYS],
            pressed: [false; KEYS],
            toggled: [false; KEYS],
        }
    }
}

impl KeyState {
    /// Key `code` went down (`true`) or up; a held key's repeats are not
    /// presses.
    pub fn key(&mut self, code: u8, down: bool) {
        let code = usize::from(code);
        if down && !self.held[code] {
            self.pressed[code] = true;
            self.toggled[code] = !self.toggled[code];
        }
        self.held[code] = down;
    }

    /// Forgets this frame's presses; whether there were any.
    fn frame_done(&mut self) -> bool {
        let any = self.pressed.contains(&true);
        self.pressed = [false; KEYS];
        any
    }

    /// The texels, top row first: toggles, presses, then what is held.
    fn texels(&self) -> Vec<u8> {
        [&self.toggled, &self.pressed, &self.held]
            .iter()
            .flat_map(|row| row.iter())
            .flat_map(|on| [if *on { 255 } else { 0 }, 0, 0, 255])
            .collect()
    }
}

/// The keys' state and its texture.
pub struct Keyboard {
    keys: KeyState,
    /// Whether the texture is behind the state.
    stale: bool,
    texture: wgpu::Texture,
    view: wgpu::TextureView,
}

impl Keyboard {
    /// No key down, on `gpu`.
    pub fn new(gpu: &Gpu) -> Self {
        let (texture, view) = image_texture(gpu, "keyboard", SIZE, wgpu::TextureFormat::Rgba8Unorm);
        let keyboard = Self {
            keys: KeyState::default(),
            stale: false,
            texture,
            view,
        };
        write_image(gpu, &keyboard.texture, &keyboard.keys.texels());
        keyboard
    }

    /// Key `code` went down (`true`) or up.
    pub fn key(&mut self, code: u8, down: bool) {
        self.keys.key(code, down);
        self.stale = true;
    }

    /// Writes the state into the texture when it changed, then forgets
    /// this frame's presses (so the next upload clears them).
    pub fn upload(&mut self, gpu: &Gpu) {
        if !self.stale {
            return;
        }
        write_image(gpu, &self.texture, &self.keys.texels());
        self.stale = self.keys.frame_done();
    }

    /// The texture.
    pub fn view(&self) -> &wgpu::TextureView {
        &self.view
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texel `code` of GL row `row` (0 at the bottom).
    fn texel(keys: &KeyState, code: usize, row: usize) -> u8 {
        keys.texels()[((ROWS - 1 - row) * KEYS + code) * 4]
    }

    #[test]
    fn a_press_is_held_pressed_once_and_toggles() {
        let mut keys = KeyState::default();
        keys.key(65, true);
        keys.key(65, true);
        assert_eq!([0, 1, 2].map(|row| texel(&keys, 65, row)), [255, 255, 255]);
        assert!(keys.frame_done());
        assert_eq!(texel(&keys, 65, 1), 0, "a press lasts one frame");
        assert_eq!(texel(&keys, 65, 0), 255);
        assert!(!keys.frame_done());
        keys.key(65, false);
        assert_eq!([0, 2].map(|row| texel(&keys, 65, row)), [0, 255]);
        keys.key(65, true);
        assert_eq!(texel(&keys, 65, 2), 0, "the second press toggles back");
        assert_eq!(texel(&keys, 66, 0), 0);
    }
}
