//! Several machines, one show: a leader (`--lead PORT`) and followers
//! (`--follow HOST:PORT`) that draw the same frames. Every machine runs
//! the same show folder and arguments, so scripts, timelines and
//! playlists run on each; the leader sends, frame by frame, its clock,
//! what it heard and what its performers changed, as OSC bundles over
//! TCP stamped with the frame they apply at, and a follower draws each
//! frame only once it has the leader's. Every machine of an ensemble runs
//! exactly (`ShowOptions::exact`: no work left to finish later, counts
//! never fitted to the device), so the layers that repeat bit for bit on
//! one machine repeat on each. A follower shows its part of the canvas
//! through an outputs file.

mod follower;
mod leader;
pub mod wire;

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use follower::{FromLeader, LeaderLink};
use leader::Leader;
use wire::{EnsemblePacket, FrameRecord};

use crate::show::{Led, Show};

/// How long a follower waits for the leader's next frame before it
/// shows its last picture again and looks at its window.
pub const FOLLOW_WAIT: Duration = Duration::from_millis(50);

/// Lag samples a follower keeps for its report.
const LAG_SAMPLES: usize = 1 << 16;

/// A show's part in an ensemble.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Leads followers that connect to this address.
    Lead(SocketAddr),
    /// Follows the leader at this address.
    Follow(SocketAddr),
}

/// `--lead`'s port (on every address) or address and port.
pub fn parse_lead(text: &str) -> Result<SocketAddr, String> {
    match text.parse::<u16>() {
        Ok(port) => Ok(SocketAddr::from(([0, 0, 0, 0], port))),
        Err(_) => text
            .parse()
            .map_err(|_| format!("{text:?} is neither a port nor ADDRESS:PORT")),
    }
}

/// `--follow`'s leader, `HOST:PORT`, its host name looked up.
pub fn parse_leader(text: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    text.to_socket_addrs()
        .map_err(|e| format!("{text:?}: {e}"))?
        .next()
        .ok_or_else(|| format!("{text:?} names no address"))
}

/// What a frame of the driver does, by the ensemble's say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Beat {
    /// Draw a frame of this many seconds.
    Draw(f32),
    /// The leader's next frame has not come: show the last one again.
    Hold,
    /// The leader's show ended.
    End,
}

/// A follower's own state.
struct Following {
    link: LeaderLink,
    /// When the leader sent the frame being drawn.
    sent: f64,
    /// The frame being drawn lasts this long.
    dt: f32,
    /// How far behind the leader each frame was finished, in seconds
    /// (the first [`LAG_SAMPLES`]).
    lags: Vec<f32>,
    /// Frames drawn.
    frames: u64,
    /// How far behind the last one was.
    last_lag: f32,
    /// The leader is out of reach, and why.
    lost: Option<String>,
    /// When the first frame was drawn, and whether the follower stands
    /// within a frame of the leader (else it is replaying or fell behind).
    first: Option<std::time::Instant>,
    in_step: bool,
    /// The run of the leader being followed (its hello's number).
    run: Option<u64>,
    /// The leader started again: its new show's frames are taken from
    /// its first, though this machine has drawn further.
    new_show: bool,
}

enum Part {
    Leading(Leader),
    Following(Box<Following>),
}

/// This show in an ensemble.
pub struct Ensemble {
    part: Part,
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl Ensemble {
    /// `show` taking its `role`: a leader listening, a follower reaching.
    pub fn start(role: Role, show: &mut Show) -> std::io::Result<Self> {
        let errors = &show.ground.errors.clone();
        let part = match role {
            Role::Lead(bind) => {
                let preset = show.preset().unwrap_or_default();
                let leader = Leader::start(bind, show.ground.seed, preset, errors)?;
                show.lead();
                Part::Leading(leader)
            }
            Role::Follow(leader) => {
                show.follow_a_leader();
                Part::Following(Box::new(Following {
                    link: LeaderLink::start(leader, errors)?,
                    sent: 0.0,
                    dt: 0.0,
                    lags: Vec::new(),
                    frames: 0,
                    last_lag: 0.0,
                    lost: None,
                    first: None,
                    in_step: false,
                    run: None,
                    new_show: false,
                }))
            }
        };
        Ok(Self { part })
    }

    /// Before a frame: a leader draws `dt`; a follower the leader's next
    /// frame, its changes applied and its clock and ear taken, once it
    /// comes (within [`FOLLOW_WAIT`]).
    pub fn before_frame(&mut self, show: &mut Show, dt: f32) -> Beat {
        let Part::Following(following) = &mut self.part else {
            return Beat::Draw(dt);
        };
        loop {
            let packet = match following.link.next(FOLLOW_WAIT) {
                None => return Beat::Hold,
                Some(FromLeader::Lost(why)) => {
                    show.ground.errors.report("ensemble", why.clone());
                    following.lost = Some(why);
                    return Beat::Hold;
                }
                Some(FromLeader::Packet(packet)) => packet,
            };
            following.lost = None;
            match packet {
                EnsemblePacket::End => return Beat::End,
                EnsemblePacket::Hello { seed, preset, run } => {
                    following.hello(show, seed, &preset, run);
                }
                // Frames drawn already: the leader replays the show from
                // its start to a follower that connects again.
                EnsemblePacket::Frame(record)
                    if record.frame <= show.clock.frame && !following.new_show => {}
                EnsemblePacket::Frame(record) => return following.take(show, *record),
            }
        }
    }

    /// Whether a follower has more of its leader's frames waiting than
    /// the one it draws: it is behind and should draw on at once.
    pub fn behind(&mut self) -> bool {
        match &mut self.part {
            Part::Leading(_) => false,
            Part::Following(following) => following.link.behind(),
        }
    }

    /// After a frame: a leader sends it to its followers; a follower
    /// notes how far behind the leader it finished.
    pub fn after_frame(&mut self, show: &mut Show) {
        match &mut self.part {
            Part::Leading(leader) => {
                let clock = show.clock;
                leader.send(&EnsemblePacket::Frame(Box::new(FrameRecord {
                    frame: clock.frame,
                    dt: clock.dt,
                    time: clock.time,
                    beats: clock.beats,
                    bpm: clock.bpm,
                    sent: now(),
                    changes: show.take_performed(),
                    heard: show.heard_for_followers(),
                })));
            }
            Part::Following(following) => following.drew(show.clock.frame),
        }
    }

    /// The HUD's line.
    pub fn status(&self) -> String {
        match &self.part {
            Part::Leading(leader) => format!(
                "ensemble: leading {} follower(s) on port {}",
                leader.followers(),
                leader.address().port()
            ),
            Part::Following(following) => match &following.lost {
                Some(why) => format!("ensemble: following, holding the last frame: {why}"),
                None => format!(
                    "ensemble: following{}; frame {} finished {:.1} ms after the leader's",
                    if following.in_step {
                        ", in step"
                    } else {
                        ", catching up"
                    },
                    following.frames,
                    following.last_lag * 1e3
                ),
            },
        }
    }

    /// The end of the show: a leader tells its followers and sends them
    /// the rest; a follower logs how far behind it ran.
    pub fn finish(&mut self) {
        match &mut self.part {
            Part::Leading(leader) => leader.finish(),
            Part::Following(following) => tracing::info!("ensemble: {}", following.lag_line()),
        }
    }
}

impl Following {
    /// The leader's hello, said again at each connection: the first is
    /// held against how this machine started; one from a new run of the
    /// leader starts following its new show.
    fn hello(&mut self, show: &Show, seed: u64, preset: &str, run: u64) {
        match self.run.replace(run) {
            None if show.clock.frame == 0 => check_start(show, seed, preset),
            Some(before) if before != run => {
                self.new_show = true;
                show.ground.errors.report(
                    "ensemble",
                    "the leader started its show again: this machine follows the new show from its first frame, its simulations and scripts as they stood (start it again for them to match)",
                );
            }
            _ => {}
        }
    }

    /// Notes how far behind the leader frame `frame` was finished, and
    /// says when the follower comes into step or falls out of it (more
    /// than two frames behind).
    fn drew(&mut self, frame: u64) {
        let lag = (now() - self.sent) as f32;
        if self.lags.len() < LAG_SAMPLES {
            self.lags.push(lag);
        }
        self.frames += 1;
        self.last_lag = lag;
        let first = *self.first.get_or_insert_with(std::time::Instant::now);
        let frames_behind = lag / self.dt.max(1e-6);
        if !self.in_step && frames_behind < 1.0 {
            self.in_step = true;
            tracing::info!(
                "ensemble: in step with the leader from frame {frame}, {:.1} s after the first frame drawn here",
                first.elapsed().as_secs_f32()
            );
        } else if self.in_step && frames_behind > 2.0 {
            self.in_step = false;
            tracing::warn!(
                "ensemble: {frames_behind:.0} frames behind the leader at frame {frame}"
            );
        }
    }

    fn take(&mut self, show: &mut Show, record: FrameRecord) -> Beat {
        let expected = show.clock.frame + 1;
        self.new_show = false;
        if record.frame > expected {
            show.ground.errors.report(
                "ensemble",
                format!(
                    "joined at the leader's frame {} (its record of the show was full): simulations and scripts start here, not as the leader's",
                    record.frame
                ),
            );
        }
        for change in record.changes {
            if let Err(error) = show.apply(change) {
                show.ground.errors.report("ensemble", error);
            }
        }
        let clock = crate::base::clock::Clock {
            time: record.time,
            dt: record.dt,
            frame: record.frame,
            beats: record.beats,
            bpm: record.bpm,
        };
        show.follow(Led {
            clock,
            heard: record.heard,
        });
        (self.sent, self.dt) = (record.sent, record.dt);
        Beat::Draw(record.dt)
    }

    /// How far behind the leader frames were finished: median and 95th
    /// percentile, in milliseconds and frames.
    fn lag_line(&self) -> String {
        let mut lags = self.lags.clone();
        if lags.is_empty() {
            return "no frame drawn yet".into();
        }
        lags.sort_by(f32::total_cmp);
        let at = |q: f32| lags[((lags.len() - 1) as f32 * q).round() as usize];
        let frame = self.dt.max(1e-6);
        format!(
            "{} frames drawn; of the first {}, each finished behind the leader's by median {:.1} ms ({:.2} frames), p95 {:.1} ms ({:.2} frames)",
            self.frames,
            lags.len(),
            at(0.5) * 1e3,
            at(0.5) / frame,
            at(0.95) * 1e3,
            at(0.95) / frame
        )
    }
}

/// A follower started otherwise than its leader says so on screen:
/// frames then differ from the first.
fn check_start(show: &Show, seed: u64, preset: &str) {
    let own = show.preset().unwrap_or_default();
    if seed != show.ground.seed || preset != own {
        show.ground.errors.report(
            "ensemble",
            format!(
                "the leader started with preset {preset:?} and seed {seed}, this machine with {own:?} and {}: start both with the same show arguments",
                show.ground.seed
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leaders_port_and_address_parse_and_nonsense_is_refused() {
        assert_eq!(
            parse_lead("9100"),
            Ok(SocketAddr::from(([0, 0, 0, 0], 9100)))
        );
        assert_eq!(
            parse_lead("10.0.0.1:9100"),
            Ok(SocketAddr::from(([10, 0, 0, 1], 9100)))
        );
        assert!(parse_lead("wall").is_err());
        assert_eq!(
            parse_leader("127.0.0.1:9100"),
            Ok(SocketAddr::from(([127, 0, 0, 1], 9100)))
        );
        assert!(parse_leader("no port").is_err());
    }
}
