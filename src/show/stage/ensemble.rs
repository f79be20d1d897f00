//! The show's part in an ensemble of machines: a leader keeps what its
//! performers changed each frame ([`Show::perform`]) for its followers,
//! and a follower takes each frame's clock and ear from its leader
//! ([`Show::follow`]) in place of its own.

use super::Show;
use crate::audio::Heard;
use crate::base::clock::Clock;
use crate::command::Command;
use crate::show::ensemble::wire::{MAX_CHANGES, forwarded};

/// What a follower takes from its leader for one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Led {
    /// The leader's clock after the frame's tick.
    pub clock: Clock,
    /// What the leader heard in the frame (`None`: it hears nothing).
    pub heard: Option<Heard>,
}

impl Show {
    /// Carries out `command` as a performer's (MIDI, OSC, a desk, the
    /// HUD, the phone page): as [`Show::apply`], and kept for the
    /// followers when this show leads.
    pub fn perform(&mut self, command: Command) -> Result<(), super::CommandError> {
        // A follower's picture is its leader's: a change of its own would
        // part it from the others until the next preset.
        if self.led_by_another && forwarded(&command) {
            return Err(super::CommandError::Following);
        }
        let kept = (self.performed.is_some() && forwarded(&command)).then(|| command.clone());
        self.apply(command)?;
        if let (Some(performed), Some(command)) = (self.performed.as_mut(), kept) {
            if performed.len() < MAX_CHANGES {
                performed.push(command);
            } else {
                self.ground.errors.report(
                    "ensemble",
                    format!("over {MAX_CHANGES} changes in one frame: the rest stay on the leader"),
                );
            }
        }
        Ok(())
    }

    /// Keeps the performers' changes from now on, for followers.
    pub fn lead(&mut self) {
        self.performed.get_or_insert_with(Vec::new);
    }

    /// The performers' changes kept since the last call, in order.
    pub fn take_performed(&mut self) -> Vec<Command> {
        self.performed
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// What the show heard in its last frame, for followers; `None`
    /// when it hears nothing.
    pub fn heard_for_followers(&self) -> Option<Heard> {
        let hearing = &self.senses.hearing;
        hearing.hears().then(|| *hearing.last())
    }

    /// Follows a leader from now on: its performers' changes alone play
    /// this show ([`Show::perform`] refuses its own).
    pub fn follow_a_leader(&mut self) {
        self.led_by_another = true;
    }

    /// The next frame stands at the leader's clock and hears what the
    /// leader heard, instead of its own tempo, timecode and ear.
    pub fn follow(&mut self, led: Led) {
        self.led = Some(led);
    }

    /// The picture of the last frame into `output` again, the caller's
    /// `overlay` over it, with nothing advanced: a follower waiting for
    /// its leader's next frame.
    pub fn show_again(
        &mut self,
        output: &mut dyn crate::outputs::Output,
        overlay: impl FnOnce(&mut Show, &mut wgpu::CommandEncoder),
    ) {
        let mut encoder =
            (self.ground.gpu.device).create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("frame again"),
            });
        self.profiler.open_frame(&mut encoder);
        self.deliver(encoder, output, overlay);
    }
}
