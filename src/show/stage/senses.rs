//! The senses part of [`Show`]: what the show hears and sees, the
//! inputs its layers and modulations read.
//!
//! [`Show`]: super::Show

use crate::audio::{Heard, Hearing};
use crate::engine::inputs::media::MediaShelf;
use crate::gpu::Gpu;
use crate::params::Registry;

/// The ear (sound, its analysis, tempo, Link, modulations) and the media
/// shelf (clips, pictures, cameras, the keyboard and the sound as
/// textures).
pub(super) struct Senses {
    /// What the show hears.
    pub(super) hearing: Hearing,
    /// What the show's layers see.
    pub(super) media: MediaShelf,
}

impl Senses {
    /// Deaf, with an empty shelf on `gpu`.
    pub(super) fn new(gpu: &Gpu) -> Self {
        Self {
            hearing: Hearing::default(),
            media: MediaShelf::new(gpu),
        }
    }

    /// Hears up to `until` seconds of show time into `registry`'s `audio.*`
    /// parameters and the media shelf's sound texture.
    pub(super) fn hear(&mut self, registry: &mut Registry, until: f64) -> Heard {
        let heard = self.hearing.hear(registry, until);
        self.media
            .hear(&heard.picture.spectrum, &heard.picture.wave);
        heard
    }

    /// Takes in what another machine heard (a follower's leader) as if
    /// it were this show's own.
    pub(super) fn take_in(&mut self, registry: &mut Registry, heard: Heard) -> Heard {
        let heard = self.hearing.take_in(registry, heard);
        self.media
            .hear(&heard.picture.spectrum, &heard.picture.wave);
        heard
    }
}
