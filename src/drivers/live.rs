//! One live frame, the same for the window and `run --headless`: the
//! show's frame into every output at once (the driver's own, the senders,
//! the recording; the control surface heard, the driver's overlay drawn
//! over its output), then what keeps a live show going (the outputs told
//! the frame was submitted, a take started or stopped, the pace, the fit
//! of counts to the device, the installation's schedule and state). The
//! drivers keep only what is theirs: the window's surface, projectors,
//! keys and HUD, headless's offscreen target and its rate.

use std::time::Duration;

use crate::control::{ControlOptions, ControlSurface};
use crate::drivers::from_show::keep_recording;
use crate::outputs::send::{self, Recorder, SendOptions, SendSetup};
use crate::outputs::{Both, Output};
use crate::show::Show;
use crate::show::ensemble::{Beat, Ensemble, Role};
use crate::show::fit::Fit;
use crate::show::installation::{InstallOptions, Installation};
use crate::show::pace::Pace;

/// Frames a follower behind its leader draws at most in one step of a
/// window.
const CATCH_UP: usize = 16;

/// How long an installation off air sleeps between looks at its controls.
pub const OFF_AIR_NAP: Duration = Duration::from_millis(100);

/// What a live show is started with besides the show itself.
pub struct LiveOptions<'a> {
    /// MIDI and OSC, if the show listens.
    pub control: Option<&'a ControlOptions>,
    /// State file and schedule of an installation.
    pub install: &'a InstallOptions,
    /// NDI, streams, recording.
    pub send: &'a SendOptions,
    /// The rate frames are made at (the senders' clock).
    pub fps: f32,
    /// The playlist an installation with no saved state starts.
    pub playlist: Option<&'a str>,
    /// Leading or following other machines, if the show plays with them.
    pub ensemble: Option<Role>,
    /// A follower draws the frames it is behind within one step (a
    /// window, whose steps the display paces); else one a step.
    pub catch_up: bool,
}

/// What one live frame did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stepped {
    /// The show's next frame was drawn.
    Drawn,
    /// The last frame was shown again: a follower's leader has not sent
    /// the next yet.
    Held,
    /// Off air: the controls heard, nothing drawn.
    OffAir,
    /// The leader's show ended, so this follower's does.
    Ended,
}

/// A show played live, and everything that plays it along.
pub struct Live {
    /// The show.
    pub show: Show,
    /// MIDI, OSC, OSCQuery and the phone page, when the show listens.
    pub control: Option<ControlSurface>,
    /// NDI, streams, Spout, Syphon, PipeWire, v4l2: one output each.
    senders: Vec<Box<dyn Output>>,
    /// The takes `record.on` asks for.
    recorder: Recorder,
    /// [`Live::finish`] ran.
    finished: bool,
    /// Puts back a layer the device cannot run at a show's pace.
    pace: Pace,
    /// Fits the counts of layers that fit theirs to the device.
    fit: Fit,
    installation: Installation,
    /// Leading or following other machines.
    ensemble: Option<Ensemble>,
    /// Frames a follower behind its leader draws at most in one step.
    catch_up: usize,
}

impl Live {
    /// `show` played live: an installation resumed where it stopped, the
    /// control surface started, the senders opened, the ensemble joined.
    pub fn start(mut show: Show, options: &LiveOptions<'_>) -> anyhow::Result<Self> {
        let installation = Installation::new(options.install);
        installation.resume(&mut show, options.playlist);
        let ensemble = options
            .ensemble
            .map(|role| Ensemble::start(role, &mut show))
            .transpose()
            .map_err(|e| anyhow::anyhow!("the ensemble's port: {e}"))?;
        let control = options.control.map(|c| {
            ControlSurface::start(&show.with_thumbs(c), &show.registry, &show.ground.errors)
        });
        let (senders, recorder) = send::open(SendSetup::of(&mut show), options.send, options.fps);
        Ok(Self {
            show,
            control,
            senders,
            recorder,
            finished: false,
            pace: Pace::default(),
            fit: Fit::default(),
            installation,
            ensemble,
            catch_up: if options.catch_up { CATCH_UP } else { 0 },
        })
    }

    /// One live frame of `dt` seconds (a follower's: its leader's next
    /// frame) into the driver's `output` (its size the canvas's) and every
    /// sender, `overlay` (the HUD) drawn over it. Off air, the controls
    /// alone are heard and nothing is drawn.
    pub fn step(
        &mut self,
        dt: f32,
        output: &mut dyn Output,
        overlay: impl FnOnce(&mut Show, &mut wgpu::CommandEncoder),
    ) -> Stepped {
        if !self.installation.on_air() {
            self.listen();
            return Stepped::OffAir;
        }
        let beat = self
            .ensemble
            .as_mut()
            .map(|e| e.before_frame(&mut self.show, dt));
        let mut dt = match beat {
            None => dt,
            Some(Beat::Draw(dt)) => dt,
            Some(Beat::Hold) => {
                self.show.show_again(output, overlay);
                return Stepped::Held;
            }
            Some(Beat::End) => return Stepped::Ended,
        };
        // A follower behind its leader (joining, or after a stall) draws
        // the frames it is behind in one go, the overlay over the last:
        // a window at the display's rate would otherwise never catch up.
        for _ in 0..self.catch_up {
            if !self.ensemble.as_mut().is_some_and(Ensemble::behind) {
                break;
            }
            self.draw(dt, output, |_, _| {});
            match self
                .ensemble
                .as_mut()
                .map(|e| e.before_frame(&mut self.show, dt))
            {
                Some(Beat::Draw(next)) => dt = next,
                Some(Beat::End) => return Stepped::Ended,
                Some(Beat::Hold) | None => return Stepped::Drawn,
            }
        }
        self.draw(dt, output, overlay);
        Stepped::Drawn
    }

    /// The show's frame into `output`, the senders and the recorder,
    /// then what keeps a live show going.
    fn draw(
        &mut self,
        dt: f32,
        output: &mut dyn Output,
        overlay: impl FnOnce(&mut Show, &mut wgpu::CommandEncoder),
    ) {
        let mut sent = Both(&mut self.senders, &mut self.recorder);
        let mut outputs = Both(output, &mut sent);
        let finished = self
            .show
            .frame(dt, self.control.as_mut(), &mut outputs, overlay);
        outputs.submitted();
        if let Some(ensemble) = self.ensemble.as_mut() {
            ensemble.after_frame(&mut self.show);
        }
        keep_recording(&mut self.recorder, &mut self.show);
        // An ensemble's machines draw the same counts at the same cost
        // whatever their devices: neither guard may change what is drawn.
        if self.ensemble.is_none() {
            self.pace.spare(self.fit.fitting());
            self.pace.keep(&mut self.show, dt, &finished);
            self.fit.keep(&mut self.show, dt, &finished);
        }
        self.installation.keep(&self.show);
    }

    /// Whether the installation's schedule has the show on air.
    pub fn on_air(&mut self) -> bool {
        self.installation.on_air()
    }

    /// The controls heard without a frame (off air, nothing to draw on).
    pub fn listen(&mut self) {
        if let Some(control) = self.control.as_mut() {
            self.show.listen(control);
        }
    }

    /// The status lines of the control surface, the playlist and the
    /// senders, for the HUD.
    pub fn status_lines(&self) -> Vec<String> {
        let mut lines = self
            .control
            .as_ref()
            .map_or_else(Vec::new, ControlSurface::status_lines);
        lines.extend(self.show.playlist_status());
        lines.extend(self.show.lighting_status());
        lines.extend(self.show.timecode_status());
        lines.extend(self.show.timeline_status());
        lines.extend(self.ensemble.as_ref().map(Ensemble::status));
        lines.extend(self.senders.status());
        lines.extend(self.recorder.status());
        lines
    }

    /// The end of the show: the GPU's work waited for, the senders'
    /// files finished (each line logged), the installation's state
    /// saved. Once only: later calls find nothing left to finish.
    pub fn finish(&mut self) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        self.show.ground.gpu.wait_idle();
        let mut lines = self.senders.finish();
        lines.extend(self.recorder.finish());
        lines.extend(self.show.finish_lighting());
        if let Some(ensemble) = self.ensemble.as_mut() {
            ensemble.finish();
        }
        for line in lines {
            tracing::info!("send: {line}");
        }
        self.installation.stop(&self.show);
    }
}
