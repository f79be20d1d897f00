//! What the senders are handed of a show, so that they never reach into
//! it: at the start its registry (for `record.on`), error log, recordings
//! folder and each output's `send` targets ([`SendSetup`]); after each
//! frame `record.on` and the live input's sound for a new take
//! ([`keep_recording`]). Each frame's pictures reach them as every other
//! output's do ([`Pictures`](crate::outputs::Pictures)).

use crate::outputs::send::{Recorder, SendSetup};
use crate::show::Show;

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

/// After `show`'s frame: `recorder` starts or stops a take as `record.on`
/// says, a new one recording the live input's sound.
pub fn keep_recording(recorder: &mut Recorder, show: &mut Show) {
    let sound = recorder
        .starting_a_take(&show.registry)
        .then(|| show.hearing().tap())
        .flatten();
    recorder.keep(&mut show.registry, sound);
}
