//! What the senders are handed of a show, so that they never reach into
//! it: at the start its registry (for `record.on`), error log, recordings
//! folder and each output's `send` targets ([`SendSetup`]); each frame the
//! finished pictures, the canvas and every output's ([`SentFrame`]); after
//! it, `record.on` and the live input's sound for a new take ([`keep`]).

use std::path::PathBuf;

use super::Senders;
use crate::base::status::ErrorLog;
use crate::params::Registry;
use crate::show::Show;

/// What the senders start with.
pub struct SendSetup<'a> {
    /// Where `record.on` is registered and read.
    pub registry: &'a mut Registry,
    /// Where a target's failure is said.
    pub errors: ErrorLog,
    /// Where takes go when `--record` names no file.
    pub recordings: PathBuf,
    /// Each output's name and a target its `send` names.
    pub output_sends: Vec<(String, String)>,
}

impl<'a> SendSetup<'a> {
    /// `show`'s part of the senders' start.
    pub fn of(show: &'a mut Show) -> Self {
        let output_sends = show
            .outputs()
            .map(|o| o.outputs())
            .unwrap_or_default()
            .iter()
            .flat_map(|output| {
                let name = &output.plan.name;
                output.plan.send.iter().map(|t| (name.clone(), t.clone()))
            })
            .collect();
        Self {
            errors: show.ground.errors.clone(),
            recordings: show.ground.assets.root().join("recordings"),
            output_sends,
            registry: &mut show.registry,
        }
    }
}

/// A finished frame as the senders take it.
pub struct SentFrame<'a> {
    /// The device the pictures are on.
    pub device: &'a wgpu::Device,
    /// The canvas, once a frame has run.
    pub canvas: Option<&'a wgpu::Texture>,
    /// Each output of the outputs file, by name.
    pub outputs: Vec<(&'a str, &'a wgpu::Texture)>,
    /// The show's time of the frame.
    pub time: f64,
}

impl<'a> SentFrame<'a> {
    /// `show`'s frame just recorded.
    pub fn of(show: &'a Show) -> Self {
        Self {
            device: &show.ground.gpu.device,
            canvas: show.picture().map(|p| p.texture()),
            outputs: show
                .outputs()
                .map(|o| o.outputs())
                .unwrap_or_default()
                .iter()
                .map(|o| (o.plan.name.as_str(), &o.target.texture))
                .collect(),
            time: show.clock.time,
        }
    }

    /// The canvas, or the output named `output`.
    pub fn picture(&self, output: Option<&str>) -> Option<&'a wgpu::Texture> {
        match output {
            None => self.canvas,
            Some(name) => self
                .outputs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| *t),
        }
    }
}

/// After `show`'s frame: `senders` start or stop a take as `record.on`
/// says, a new one recording the live input's sound.
pub fn keep(senders: &mut Senders, show: &mut Show) {
    let sound = senders
        .starting_a_take(&show.registry)
        .then(|| show.hearing().tap())
        .flatten();
    senders.keep(&mut show.registry, sound);
}
