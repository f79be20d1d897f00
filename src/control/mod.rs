//! The control surface: MIDI controllers, OSC peers and a lighting desk
//! (DMX over Art-Net and sACN) playing the show
//! (step 1 of the frame, docs/dev/frame.md). Input threads only send [`ControlEvent`]s;
//! at the start of each frame the show hands the surface a [`ShowView`]
//! (the registry to read, the changes of the frame before, the mappings
//! the show loaded) and the surface answers with [`Command`]s for the show
//! to carry out, through mappings, aliases and soft takeover. It sends
//! feedback (OSC to the configured targets, LEDs to MIDI outputs) and
//! publishes the OSCQuery snapshot; it never touches the show's clock,
//! files or presets.

pub mod allow;
pub mod dmx_in;
mod event;
pub mod midi_apply;
mod midi_io;
pub mod midi_map;
pub mod midi_parse;
pub mod osc;
mod osc_apply;
pub mod osc_commands;
pub mod osc_wire;
pub mod oscquery;
pub mod reach;
mod tempo;
pub mod timecode;
pub mod writes;
mod zeroconf;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use allow::AllowList;
pub use event::{ControlEvent, ControlInput, Datagram};

use crate::mapping::OscAlias;
use midi_io::{MidiOutputs, MidiStatus, SharedStatus};
use midi_map::MidiMapper;
use osc::{Feedback, OscReceived, OscStats, RateLimitedLog};
use oscquery::SharedNamespace;
use tempo::{MidiClock, TapTempo};

use crate::base::status::ErrorLog;
use crate::command::Command;
use crate::mapping::LoadedMappings;
use crate::params::{Change, Registry, Source};

/// What the control surface reads of the show at the start of a frame.
pub struct ShowView<'a> {
    /// Every parameter, read-only.
    pub registry: &'a Registry,
    /// The preset on stage, for status replies.
    pub preset: Option<&'a str>,
    /// The mapping files the show read.
    pub mappings: &'a LoadedMappings,
    /// Parameter changes since the last frame, for feedback.
    pub changes: Vec<Change>,
    /// A parameter to arm MIDI learn for (asked through a command).
    pub learn: Option<String>,
    /// The presets and playlists a control surface can offer.
    pub catalogue: &'a Catalogue,
    /// The show follows another machine's: its leader sends the timecode.
    pub follows: bool,
}

/// What a control surface can offer besides parameters: the show's
/// presets and playlists, and which of each is playing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalogue {
    /// Preset names in `presets/`.
    pub presets: Vec<String>,
    /// Playlist names in `presets/playlists/`.
    pub playlists: Vec<String>,
    /// The preset on stage.
    pub preset: Option<String>,
    /// The playlist playing.
    pub playlist: Option<String>,
    /// What a shader layer's `file` may name: the show's shader library.
    pub shaders: Vec<String>,
    /// The NDI sources on the network, as texture inputs name them
    /// (`ndi:NAME`).
    pub ndi_sources: Vec<String>,
    /// The controls pinned to the phone page's favourites, as the JSON
    /// list of their addresses kept in the show folder.
    pub favourites: String,
}

/// Where OSC that arrives other than over UDP (binary frames on the
/// OSCQuery WebSocket) joins the show's one queue of events.
#[derive(Debug, Clone)]
pub struct Inbox {
    /// The queue the UDP receiver and MIDI fill too.
    pub events: SyncSender<ControlEvent>,
    /// The OSC counters and the bytes queued (bounded the same way).
    pub stats: Arc<OscStats>,
    /// The PIN a client gives before its writes join the queue.
    pub pin: Option<Arc<oscquery::Pin>>,
}

/// How the control surface listens and talks.
#[derive(Debug, Clone)]
pub struct ControlOptions {
    /// Open MIDI inputs at all.
    pub midi: bool,
    /// Only inputs whose name contains this.
    pub midi_filter: Option<String>,
    /// OSC bind address.
    pub osc_bind: String,
    /// OSC port; 0 picks a free one, `None` turns OSC off.
    pub osc_port: Option<u16>,
    /// Feedback targets.
    pub osc_out: Vec<SocketAddr>,
    /// Where the show's own timecode goes when `master.timecode_out`
    /// asks (`--timecode-to`).
    pub timecode_to: SocketAddr,
    /// OSCQuery HTTP port; 0 picks a free one, `None` turns it off.
    pub oscquery_port: Option<u16>,
    /// Advertise OSCQuery and OSC over zeroconf (mDNS).
    pub zeroconf: bool,
    /// Hosts allowed to send OSC and query OSCQuery (empty: all).
    pub allow: AllowList,
    /// The PIN a WebSocket client (the phone page) gives before its
    /// writes count (`--ui-pin`); `None` asks for none.
    pub ui_pin: Option<String>,
    /// Pages served elsewhere that may open the WebSocket besides the
    /// show's own (`--allow-origin`).
    pub allow_origins: Vec<oscquery::Origin>,
    /// The folder of the presets' thumbnails the phone page shows on its
    /// preset buttons (`presets/thumbs`, made by `sylva thumbs`); none: the
    /// buttons show names alone.
    pub thumbs: Option<std::path::PathBuf>,
}

impl Default for ControlOptions {
    fn default() -> Self {
        Self {
            midi: true,
            midi_filter: None,
            osc_bind: "0.0.0.0".into(),
            osc_port: Some(9000),
            osc_out: Vec::new(),
            timecode_to: timecode::TIMECODE_TO,
            oscquery_port: Some(9001),
            zeroconf: false,
            allow: AllowList::default(),
            ui_pin: None,
            allow_origins: Vec::new(),
            thumbs: None,
        }
    }
}

/// Samples kept for the control latency figure (the most recent ones).
const LATENCY_SAMPLES: usize = 8_192;

/// Events the input threads may queue ahead of the main thread; beyond
/// this they drop and count, so a flood costs bounded memory.
pub const EVENT_QUEUE: usize = 8_192;

/// Events one frame starts at most (a datagram started is finished); the
/// rest wait in the queue.
pub const EVENTS_PER_FRAME: usize = 4_096;

/// Time one frame spends applying events at most.
pub const CONTROL_TIME_PER_FRAME: Duration = Duration::from_millis(4);

/// Messages time-tagged for later that the schedule holds at most.
pub const MAX_SCHEDULED: usize = 4_096;

/// Bytes of time-tagged messages the schedule holds at most.
pub const MAX_SCHEDULED_BYTES: usize = 1 << 20;

/// Longest a frame waits for the rest of a datagram the receiver is still
/// queueing.
const DATAGRAM_REST_WAIT: Duration = Duration::from_millis(5);

/// Status replies one host gets per second at most.
const STATUS_REPLIES_PER_SECOND: u32 = 5;

/// A message waiting for its time tag, ordered by when it is due (then
/// by arrival).
struct Scheduled {
    due: Instant,
    order: u64,
    received: OscReceived,
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        (self.due, self.order) == (other.due, other.order)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.due, self.order).cmp(&(other.due, other.order))
    }
}

/// Messages time-tagged for later, earliest first, bounded in count and
/// bytes.
#[derive(Default)]
struct TimeTagQueue {
    heap: BinaryHeap<Reverse<Scheduled>>,
    bytes: usize,
    order: u64,
}

impl TimeTagQueue {
    /// Keeps `received` until `due`; false (and nothing kept) when full.
    fn push(&mut self, due: Instant, received: OscReceived) -> bool {
        let size = received.size();
        if self.heap.len() >= MAX_SCHEDULED || self.bytes + size > MAX_SCHEDULED_BYTES {
            return false;
        }
        self.bytes += size;
        self.order += 1;
        self.heap.push(Reverse(Scheduled {
            due,
            order: self.order,
            received,
        }));
        true
    }

    /// The earliest message if it is due by `now`.
    fn pop_due(&mut self, now: Instant) -> Option<OscReceived> {
        if self.heap.peek().is_none_or(|Reverse(s)| s.due > now) {
            return None;
        }
        let Reverse(scheduled) = self.heap.pop()?;
        self.bytes -= scheduled.received.size();
        Some(scheduled.received)
    }
}

/// MIDI and OSC, applied on the main thread.
pub struct ControlSurface {
    events: Receiver<ControlEvent>,
    sender: SyncSender<ControlEvent>,
    stop: Arc<AtomicBool>,
    mapper: MidiMapper,
    mtc: timecode::MtcReader,
    timecode_out: timecode::TimecodeOut,
    desk: dmx_in::Desk,
    aliases: Vec<OscAlias>,
    mapping_revision: u64,
    commands: Vec<Command>,
    deferred: Option<ControlEvent>,
    errors: ErrorLog,
    midi_clock: MidiClock,
    tap: TapTempo,
    outputs: MidiOutputs,
    feedback: Feedback,
    namespace: SharedNamespace,
    scheduled: TimeTagQueue,
    midi_status: SharedStatus,
    osc_stats: Arc<OscStats>,
    osc_port: Option<u16>,
    oscquery_port: Option<u16>,
    latency: VecDeque<Duration>,
    warnings: RateLimitedLog,
    status_replies: HashMap<IpAddr, (Instant, u32)>,
    writes: writes::PeerWrites,
    last_frame_events: usize,
    _advertisement: Option<zeroconf::Advertisement>,
}

impl ControlSurface {
    /// Opens the MIDI inputs, the OSC socket and the OSCQuery server. A port
    /// that cannot be opened is reported and that part stays off.
    pub fn start(options: &ControlOptions, registry: &Registry, errors: &ErrorLog) -> Self {
        let (sender, events) = sync_channel(EVENT_QUEUE);
        let stop = Arc::new(AtomicBool::new(false));
        let midi_status = SharedStatus::default();
        if options.midi {
            midi_io::spawn_inputs(
                options.midi_filter.clone(),
                sender.clone(),
                midi_status.clone(),
                stop.clone(),
                errors.clone(),
            );
        }
        let osc_stats = Arc::new(OscStats::default());
        let osc_port = options.osc_port.and_then(|port| {
            let opened = UdpSocket::bind((options.osc_bind.as_str(), port)).and_then(|socket| {
                let port = socket.local_addr()?.port();
                osc::spawn_receiver(
                    socket,
                    sender.clone(),
                    osc_stats.clone(),
                    options.allow.clone(),
                    stop.clone(),
                    errors.clone(),
                )?;
                Ok(port)
            });
            match opened {
                Ok(port) => {
                    tracing::info!("OSC listening on {}:{port}", options.osc_bind);
                    Some(port)
                }
                Err(error) => {
                    errors.report(
                        "osc",
                        format!("cannot listen on {}:{port}: {error}", options.osc_bind),
                    );
                    None
                }
            }
        });
        let namespace = SharedNamespace::default();
        namespace.publish(registry, &Catalogue::default());
        let pin = match options
            .ui_pin
            .as_deref()
            .map(oscquery::Pin::new)
            .transpose()
        {
            Ok(pin) => Ok(pin.map(Arc::new)),
            Err(error) => {
                errors.report("oscquery", format!("--ui-pin: {error}; OSCQuery stays off"));
                Err(())
            }
        };
        let oscquery_port = options.oscquery_port.zip(pin.ok()).and_then(|(port, pin)| {
            match oscquery::serve(
                &options.osc_bind,
                (port, osc_port.unwrap_or(0)),
                (
                    namespace.clone(),
                    Some(Inbox {
                        events: sender.clone(),
                        stats: osc_stats.clone(),
                        pin,
                    }),
                    options.thumbs.clone(),
                ),
                (
                    options.allow.clone(),
                    Arc::new(oscquery::Origins::new(
                        options.allow_origins.clone(),
                        &options.osc_bind,
                    )),
                ),
                errors.clone(),
            ) {
                Ok(port) => {
                    let urls = reach::phone_page_urls(
                        &options.osc_bind,
                        port,
                        &reach::interface_addresses(),
                    );
                    tracing::info!("the phone page: {}", urls.join("  "));
                    Some(port)
                }
                Err(error) => {
                    errors.report("oscquery", format!("cannot serve on port {port}: {error}"));
                    None
                }
            }
        });
        let advertisement = match (options.zeroconf, oscquery_port, osc_port) {
            (true, Some(query), Some(osc)) => zeroconf::advertise(query, osc)
                .inspect_err(|e| errors.report("zeroconf", e))
                .ok(),
            _ => None,
        };
        Self {
            events,
            sender,
            stop,
            mapper: MidiMapper::default(),
            mtc: timecode::MtcReader::default(),
            timecode_out: timecode::TimecodeOut::new(options.timecode_to),
            desk: dmx_in::Desk::default(),
            aliases: Vec::new(),
            mapping_revision: 0,
            commands: Vec::new(),
            deferred: None,
            errors: errors.clone(),
            midi_clock: MidiClock::default(),
            tap: TapTempo::default(),
            outputs: MidiOutputs::new(options.midi),
            feedback: Feedback::new(options.osc_out.clone()),
            namespace,
            scheduled: TimeTagQueue::default(),
            midi_status,
            osc_stats,
            osc_port,
            oscquery_port,
            latency: VecDeque::new(),
            warnings: RateLimitedLog::default(),
            status_replies: HashMap::new(),
            writes: writes::PeerWrites::default(),
            last_frame_events: 0,
            _advertisement: advertisement,
        }
    }

    /// The OSC port listened on.
    pub fn osc_port(&self) -> Option<u16> {
        self.osc_port
    }

    /// The OSCQuery port served.
    pub fn oscquery_port(&self) -> Option<u16> {
        self.oscquery_port
    }

    /// A sender for events made in process (tests, the HUD).
    pub fn sender(&self) -> SyncSender<ControlEvent> {
        self.sender.clone()
    }

    /// MIDI ports and problems.
    pub fn midi_status(&self) -> MidiStatus {
        self.midi_status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Lines for the HUD: MIDI ports, clock, OSC and OSCQuery.
    pub fn status_lines(&self) -> Vec<String> {
        let midi = self.midi_status();
        let mut lines = vec![match (&midi.problem, midi.inputs.is_empty()) {
            (Some(problem), _) => format!("MIDI: unavailable ({problem})"),
            (None, true) => "MIDI: no input ports (rescanning)".to_string(),
            (None, false) => format!("MIDI: {}", midi.inputs.join(", ")),
        }];
        if self.midi_clock.running() {
            lines.push("MIDI clock: playing".to_string());
        }
        if let Some(param) = self.mapper.learning() {
            lines.push(format!("MIDI learn: move a control for {param}"));
        }
        let (datagrams, malformed) = self.osc_counts();
        let refused = self.osc_stats.refused.load(Ordering::Relaxed);
        let dropped = self.osc_stats.dropped.load(Ordering::Relaxed);
        lines.push(match self.osc_port {
            Some(port) => format!(
                "OSC: port {port}, {datagrams} datagrams, {malformed} malformed, {refused} refused, {dropped} dropped"
            ),
            None => "OSC: off".to_string(),
        });
        if let Some(port) = self.oscquery_port {
            lines.push(format!("OSCQuery: http port {port}"));
        }
        lines
    }

    /// OSC datagrams received and malformed.
    pub fn osc_counts(&self) -> (u64, u64) {
        (
            self.osc_stats.datagrams.load(Ordering::Relaxed),
            self.osc_stats.malformed.load(Ordering::Relaxed),
        )
    }

    /// Time-tagged messages waiting for their time.
    pub fn scheduled(&self) -> usize {
        self.scheduled.heap.len()
    }

    /// Events the last frame applied.
    pub fn last_frame_events(&self) -> usize {
        self.last_frame_events
    }

    /// Messages dropped because the queue or the schedule was full.
    pub fn osc_dropped(&self) -> u64 {
        self.osc_stats.dropped.load(Ordering::Relaxed)
    }

    /// Bytes of OSC messages waiting in the event queue (at most
    /// [`osc::MAX_QUEUED_BYTES`]).
    pub fn osc_queued_bytes(&self) -> usize {
        self.osc_stats.queued_bytes.load(Ordering::Relaxed)
    }

    /// Bytes of the paths the OSCQuery WebSocket clients listen to.
    pub fn oscquery_listened_bytes(&self) -> usize {
        self.namespace.listened_bytes()
    }

    /// The `q` quantile (0..1) of the delay from receipt to applied, over
    /// the most recent parameter writes.
    pub fn latency(&self, q: f64) -> Option<Duration> {
        let mut sorted: Vec<Duration> = self.latency.iter().copied().collect();
        sorted.sort();
        let index = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1)) - 1;
        sorted.get(index).copied()
    }

    /// Number of latency samples.
    pub fn latency_samples(&self) -> usize {
        self.latency.len()
    }

    /// Step 1 of a frame, plus feedback and the OSCQuery snapshot:
    /// the commands the frame's MIDI and OSC ask of the show, in arrival
    /// order. At most [`EVENTS_PER_FRAME`] events or
    /// [`CONTROL_TIME_PER_FRAME`] per frame: what does not fit waits in the
    /// bounded queue, so a flood slows control, never the frames.
    pub fn poll(&mut self, view: ShowView<'_>) -> Vec<Command> {
        self.take_mappings(view.mappings);
        let artnet_timecode = (view.registry.enum_index("master.timecode_source"))
            .and_then(crate::base::timecode::TimecodeSource::at)
            == Some(crate::base::timecode::TimecodeSource::Artnet);
        (self.desk).timecode(artnet_timecode, &self.sender, &self.errors);
        if !view.follows {
            self.timecode_out.send(view.registry, &self.errors);
        }
        if let Some(param) = &view.learn {
            tracing::info!("MIDI learn armed for {param}: move a control");
            self.mapper.learn(param);
        }
        self.send_feedback(&view);
        let started = Instant::now();
        let within_budget = |applied: usize| {
            applied < EVENTS_PER_FRAME && started.elapsed() < CONTROL_TIME_PER_FRAME
        };
        let mut applied = 0;
        while within_budget(applied) {
            let Some(message) = self.scheduled.pop_due(started) else {
                break;
            };
            self.handle_osc(message, &view);
            applied += 1;
        }
        // A bundle is applied whole (OSC's atomicity): the budget is only
        // checked between datagrams, so a frame does at most the budget
        // plus the rest of one datagram (65,507 bytes).
        let mut datagram: Option<Instant> = None;
        let mut rest = 0;
        while let Some(event) = self.deferred.take().or_else(|| self.take_event(rest)) {
            let within = event.datagram();
            let received = within.map(|d| d.received);
            rest = within.map_or(0, |d| d.rest);
            if !within_budget(applied) && (received.is_none() || received != datagram) {
                self.deferred = Some(event);
                break;
            }
            datagram = received;
            applied += 1;
            event.apply(self, &view, started);
        }
        self.last_frame_events = applied;
        self.namespace.publish(view.registry, view.catalogue);
        std::mem::take(&mut self.commands)
    }

    /// Logs a command the show refused, at most once a second whatever a
    /// sender or a controller floods.
    pub fn refused(&mut self, error: &str) {
        self.warn_control(error);
    }

    /// Rebuilds the mapper and the aliases when the show has read its
    /// mapping files again; a MIDI learn in progress stays armed.
    /// The next queued event, its bytes taken off the queue's count (an
    /// event sent past the count, through [`ControlSurface::sender`], takes
    /// off nothing it did not add).
    fn take_event(&mut self, rest: usize) -> Option<ControlEvent> {
        // The rest of a datagram being queued arrives within microseconds;
        // one that was dropped never does, so the wait is short.
        let event = match rest {
            0 => self.events.try_recv().ok()?,
            _ => self.events.recv_timeout(DATAGRAM_REST_WAIT).ok()?,
        };
        let size = event.queued_bytes();
        let queued = &self.osc_stats.queued_bytes;
        queued
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |q| {
                Some(q.saturating_sub(size))
            })
            .ok();
        Some(event)
    }

    fn take_mappings(&mut self, loaded: &LoadedMappings) {
        if loaded.revision == self.mapping_revision {
            return;
        }
        self.mapping_revision = loaded.revision;
        self.aliases = loaded.mappings.osc.clone();
        let learning = self.mapper.learning().map(str::to_string);
        self.mapper = MidiMapper::new(loaded.mappings.midi.clone());
        (self.desk).follow(&loaded.mappings.dmx, &self.sender, &self.errors);
        if let Some(param) = learning {
            self.mapper.learn(&param);
        }
    }

    fn send_feedback(&mut self, view: &ShowView<'_>) {
        for change in &view.changes {
            for (port, bytes) in self.mapper.feedback(&change.name, view.registry) {
                self.outputs.send(&port, &bytes);
            }
            let Some(spec) = view.registry.spec(&change.name) else {
                continue;
            };
            let origin = match &change.source {
                Source::Osc(from) => from.parse::<SocketAddr>().ok(),
                _ => None,
            };
            self.feedback.send(spec, &change.value, origin.as_ref());
            self.namespace.notify(spec, &change.value);
        }
    }

    /// Queues `command` for the show.
    fn command(&mut self, command: Command) {
        self.commands.push(command);
    }

    /// Logs a control problem, at most once a second whatever a sender or
    /// a controller floods.
    fn warn_control(&mut self, message: &str) {
        self.warnings.warn(|| message.to_string());
    }
}

impl Drop for ControlSurface {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
