//! The picture out of a live show: frames read back off the main thread
//! reach an NDI runtime (a stub library the test builds with the C
//! compiler, recording what it is sent), a UDP stream listener on
//! 127.0.0.1 through ffmpeg, a PipeWire client of a private PipeWire
//! daemon the test starts, and a recording whose length and streams
//! ffprobe checks; a failing target never stops the frames.

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use sylva::gpu::{OUTPUT_FORMAT, RenderTarget, read_rgba8};
use sylva::outputs::send::ndi::NdiSender;
use sylva::outputs::send::record::Recording;
use sylva::outputs::send::tap::{MakeSink, Sink, SinkError, Tap};
use sylva::outputs::video::VideoWriter;
use sylva::show::Show;

use crate::support;
use crate::support::Checked;

const SIZE: [u32; 2] = [64, 32];

fn show(name: &str) -> Show {
    let preset = "layers = [\"shader.ramp\"]\n[params]\n\"shader.ramp.file\" = \"shader/ramp.wgsl\"\n\"master.tonemap\" = \"clamp\"\n";
    let shader = "@fragment\nfn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {\n    return vec4<f32>(in.uv.x, 0.5, 0.25 + 0.5 * fract(frame.time), 1.0);\n}\n";
    let root = support::show_folder(
        name,
        &[
            ("presets/ramp.toml", preset),
            ("shaders/shader/ramp.wgsl", shader),
        ],
    );
    support::show(root, "ramp", OUTPUT_FORMAT)
}

/// Runs `frames` frames at 30 fps, each read back into `tap`; the last
/// canvas.
fn play(show: &mut Show, tap: &mut Tap, frames: u32) -> image::RgbaImage {
    let mut canvas = RenderTarget::new(&show.ground.gpu.device, "send.canvas", SIZE, OUTPUT_FORMAT);
    for _ in 0..frames {
        show.frame(1.0 / 30.0, None, &mut canvas, |show, encoder| {
            if let Some(picture) = show.picture() {
                tap.capture(encoder, picture.texture(), show.clock.time);
            }
        });
        tap.submitted();
        // Lets the worker keep up, as a show's frame period does.
        std::thread::sleep(Duration::from_millis(5));
    }
    read_rgba8(&show.ground.gpu, &canvas.texture).checked("reading the canvas")
}

fn tap(show: &Show, make: MakeSink) -> Tap {
    Tap::start(
        &show.ground.gpu.device,
        "send-test",
        SIZE,
        make,
        show.ground.errors.clone(),
    )
    .checked("a tap")
}

#[test]
fn an_ndi_runtime_receives_every_frame_the_tap_reads_back() {
    let log = support::out_dir().join("ndi_stub.log");
    let library = support::ndi_stub("send", &log);
    let mut show = show("send_ndi");
    let make: MakeSink = Box::new(move |_| {
        NdiSender::open_from(std::slice::from_ref(&library), "sylva test", 30.0)
            .map(|s| Box::new(s) as Box<dyn Sink>)
            .map_err(SinkError::from)
    });
    let mut tap = tap(&show, make);
    let canvas = play(&mut show, &mut tap, 40);
    let counts = tap.finish();
    let sent = counts.sent.load(std::sync::atomic::Ordering::Relaxed);
    let dropped = counts.dropped.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(counts.failure(), None);
    assert_eq!(sent + dropped, 40, "{sent} sent, {dropped} dropped");
    assert!(sent >= 30, "{sent} of 40 frames sent");
    let text = std::fs::read_to_string(&log).checked("the stub's log");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.first(), Some(&"create sylva test"), "{text}");
    assert_eq!(lines.last(), Some(&"destroy"), "{text}");
    let frames: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("frame"))
        .copied()
        .collect();
    assert_eq!(frames.len() as u64, sent);
    let first = canvas.get_pixel(0, 0).0;
    let last = frames.last().copied().unwrap_or_default();
    assert!(
        last.starts_with("frame 64 32 RGBA 256 30000/1000 "),
        "{last}"
    );
    // The frame sent last is the canvas of the last frame, pixel for pixel.
    let pixel: Vec<u8> = last
        .split(' ')
        .skip(6)
        .map(|v| v.parse().checked("a pixel value"))
        .collect();
    assert_eq!(pixel, first.to_vec(), "{last}");
}

#[test]
fn a_stream_reaches_a_listener_on_loopback() {
    let listener = UdpSocket::bind("127.0.0.1:0").checked("a UDP listener");
    listener
        .set_read_timeout(Some(Duration::from_secs(5)))
        .checked("a timeout");
    let url = format!(
        "udp://127.0.0.1:{}?pkt_size=1316",
        listener.local_addr().checked("its port").port()
    );
    let mut show = show("send_stream");
    let make: MakeSink = Box::new(move |size| {
        VideoWriter::stream(&url, size, 30.0)
            .map(|w| Box::new(StreamSink(Some(w))) as Box<dyn Sink>)
            .map_err(SinkError::Stream)
    });
    let mut tap = tap(&show, make);
    play(&mut show, &mut tap, 45);
    let counts = tap.finish();
    assert_eq!(counts.failure(), None);
    let mut packet = [0u8; 2048];
    let got = listener.recv(&mut packet).checked("a datagram from ffmpeg");
    // MPEG-TS: 188-byte packets, each starting with the sync byte.
    assert_eq!(got % 188, 0, "{got} bytes");
    assert!(packet[..got].chunks(188).all(|p| p[0] == 0x47));
}

#[test]
fn a_target_keeps_sending_after_the_canvas_is_resized() {
    use sylva::drivers::from_show::keep_recording;
    use sylva::outputs::send::{self, SendOptions, SendSetup};
    use sylva::outputs::{Both, Output};
    let mut show = show("send_resize");
    // A stream to the discard port: ffmpeg sends whether or not anyone
    // listens, a new one for each size.
    let options = SendOptions {
        sends: vec!["udp://127.0.0.1:9?pkt_size=1316".into()],
        ..SendOptions::default()
    };
    let (mut senders, mut recorder) = send::open(SendSetup::of(&mut show), &options, 30.0);
    for size in [[64, 32], [32, 16], [64, 32]] {
        let mut canvas =
            RenderTarget::new(&show.ground.gpu.device, "send.canvas", size, OUTPUT_FORMAT);
        let sent = |senders: &Vec<Box<dyn Output>>| -> u64 {
            let status = senders.status();
            let line = status.first().cloned().unwrap_or_default();
            line.split(": ")
                .nth(1)
                .and_then(|s| s.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        let started = std::time::Instant::now();
        // The first frame of a new size finishes the last size's tap and
        // starts one of its own, which counts from zero.
        let mut frames = 0;
        while frames < 2 || sent(&senders) < 10 {
            frames += 1;
            assert!(
                // A hang guard, not a speed: a loaded machine's ffmpeg
                // may take many seconds to start.
                started.elapsed() < Duration::from_secs(60),
                "at {size:?}: {:?}",
                senders.status()
            );
            let mut sent_to = Both(&mut senders, &mut recorder);
            let mut outputs = Both(&mut canvas, &mut sent_to);
            show.frame(1.0 / 30.0, None, &mut outputs, |_, _| {});
            outputs.submitted();
            keep_recording(&mut recorder, &mut show);
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    senders.finish();
}

/// A PipeWire daemon of the test's own, stopped when dropped.
struct PrivatePipeWire {
    daemon: std::process::Child,
    socket: PathBuf,
}

impl PrivatePipeWire {
    fn start(dir: &Path) -> Self {
        std::fs::create_dir_all(dir).checked("the daemon's folder");
        let daemon = Command::new("pipewire")
            .env("XDG_RUNTIME_DIR", dir)
            .env("PIPEWIRE_RUNTIME_DIR", dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .checked("starting pipewire (make test installs it)");
        let socket = dir.join("pipewire-0");
        let started = std::time::Instant::now();
        while !socket.exists() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "no socket at {socket:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { daemon, socket }
    }

    /// A PipeWire tool on this daemon.
    fn tool(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.env("PIPEWIRE_REMOTE", &self.socket);
        command
    }
}

impl Drop for PrivatePipeWire {
    fn drop(&mut self) {
        self.daemon.kill().ok();
        self.daemon.wait().ok();
    }
}

#[test]
fn a_pipewire_client_receives_the_shows_frames() {
    use sylva::outputs::send::pipewire::PipeWireSource;
    let dir = support::out_dir().join("send_pipewire");
    std::fs::remove_dir_all(&dir).ok();
    let pipewire = PrivatePipeWire::start(&dir);
    let got = dir.join("got.raw");
    // A client taking three frames, as OBS or a browser would once linked
    // (a session manager links them on a desktop; here pw-link does).
    let mut taker = pipewire
        .tool("gst-launch-1.0")
        .args([
            "-q",
            "pipewiresrc",
            "client-name=taker",
            "num-buffers=3",
            "!",
        ])
        .args(["video/x-raw,format=RGBA", "!", "filesink"])
        .arg(format!("location={}", got.display()))
        .spawn()
        .checked("gst-launch-1.0 (make test installs it)");
    let mut show = show("send_pipewire_show");
    let socket = pipewire.socket.clone();
    let make: MakeSink = Box::new(move |size| {
        PipeWireSource::open("sylva-test", size, 30.0, Some(&socket))
            .map(|s| Box::new(s) as Box<dyn Sink>)
            .map_err(SinkError::from)
    });
    let mut tap = tap(&show, make);
    play(&mut show, &mut tap, 15);
    let started = std::time::Instant::now();
    loop {
        let linked = pipewire
            .tool("pw-link")
            .args(["sylva-test:out_0", "taker:in_0"])
            .output()
            .checked("pw-link (make test installs it)");
        if linked.status.success() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the node and the client never met: {}",
            String::from_utf8_lossy(&linked.stderr)
        );
        play(&mut show, &mut tap, 3);
    }
    let canvas = play(&mut show, &mut tap, 60);
    let waited = std::time::Instant::now();
    while taker.try_wait().checked("the client").is_none() {
        if waited.elapsed() > Duration::from_secs(10) {
            taker.kill().ok();
            panic!("the client did not get three frames");
        }
        play(&mut show, &mut tap, 3);
    }
    let counts = tap.finish();
    assert_eq!(counts.failure(), None);
    let bytes = std::fs::read(&got).checked("the client's frames");
    let frame = (SIZE[0] * SIZE[1] * 4) as usize;
    assert_eq!(bytes.len(), 3 * frame, "three whole frames");
    // Red (the ramp across) and green are the same in every frame; blue
    // moves with time.
    for received in bytes.chunks_exact(frame) {
        for (sent, got) in canvas
            .as_raw()
            .chunks_exact(4)
            .zip(received.chunks_exact(4))
        {
            assert!(
                sent[0].abs_diff(got[0]) <= 1 && sent[1] == got[1],
                "{sent:?} {got:?}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The stream sink as the show makes it (a `Sender` wraps the writer the
/// same way).
struct StreamSink(Option<VideoWriter>);

impl Sink for StreamSink {
    fn send(&mut self, frame: &sylva::outputs::send::tap::Frame) -> Result<(), SinkError> {
        let writer = self.0.as_mut().ok_or(SinkError::StreamEnded)?;
        writer.frame(&frame.rgba).map_err(SinkError::Stream)
    }

    fn finish(&mut self) -> Result<Option<String>, SinkError> {
        if let Some(writer) = self.0.take() {
            writer.finish().map_err(SinkError::Stream)?;
        }
        Ok(None)
    }
}

/// ffprobe's answer for `entries` of `path`, one value a line.
fn probe(path: &Path, entries: &str) -> String {
    let output = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-show_entries",
            entries,
            "-of",
            "default=nw=1:nk=1",
        ])
        .arg(path)
        .output()
        .checked("running ffprobe");
    String::from_utf8_lossy(&output.stdout).to_string()
}

#[test]
fn a_recording_has_the_shows_length_and_its_sound() {
    let path = support::out_dir().join("send_recording.mp4");
    std::fs::remove_file(&path).ok();
    let (blocks, sound) = std::sync::mpsc::sync_channel(512);
    // A second of a 440 Hz tone at 48 kHz, as the input's thread hands it.
    for block in 0..100 {
        let samples: Vec<f32> = (0..480)
            .map(|i| {
                (f64::from(block * 480 + i) * 440.0 * std::f64::consts::TAU / 48_000.0).sin() as f32
                    * 0.5
            })
            .collect();
        blocks.send((48_000, samples)).checked("queueing sound");
    }
    let mut show = show("send_record");
    let file = path.clone();
    let mut sound = Some(sound);
    let make: MakeSink = Box::new(move |size| {
        Recording::start(&file, size, 30.0, sound.take())
            .map(|r| Box::new(r) as Box<dyn Sink>)
            .map_err(SinkError::from)
    });
    let mut tap = tap(&show, make);
    // 60 frames at 1/30 s: two seconds of show time, with a pause for
    // ffmpeg to start (frames that find every buffer waiting on it are
    // dropped, and the recording holds the last one it had).
    play(&mut show, &mut tap, 5);
    std::thread::sleep(Duration::from_millis(1500));
    play(&mut show, &mut tap, 55);
    drop(blocks);
    let counts = tap.finish();
    assert_eq!(counts.failure(), None);
    assert!(path.is_file(), "no recording at {}", path.display());
    let codecs = probe(&path, "stream=codec_name");
    assert_eq!(
        codecs.lines().collect::<Vec<_>>(),
        vec!["h264", "aac"],
        "{codecs}"
    );
    // Frames are held to 30 fps by show time, whatever was dropped: the
    // recording lasts the show's two seconds (less the first frame's
    // start), the shorter sound padded.
    let frames: u32 = probe(&path, "stream=nb_frames")
        .lines()
        .next()
        .unwrap_or("0")
        .trim()
        .parse()
        .unwrap_or(0);
    assert!((57..=60).contains(&frames), "{frames} frames");
    let duration: f64 = probe(&path, "format=duration")
        .trim()
        .parse()
        .unwrap_or(0.0);
    assert!((1.85..=2.1).contains(&duration), "{duration} s");
    let parts: Vec<_> = std::fs::read_dir(support::out_dir())
        .checked("the folder")
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("send_recording.part")
        })
        .collect();
    assert!(parts.is_empty(), "the recording's parts were left behind");
}

#[test]
fn a_target_that_cannot_start_drops_frames_and_the_show_goes_on() {
    let mut show = show("send_missing");
    let make: MakeSink = Box::new(|_| {
        NdiSender::open_from(&[PathBuf::from("/nonexistent/libndi.so.6")], "nobody", 30.0)
            .map(|s| Box::new(s) as Box<dyn Sink>)
            .map_err(SinkError::from)
    });
    let mut tap = tap(&show, make);
    play(&mut show, &mut tap, 20);
    let counts = tap.finish();
    assert_eq!(counts.sent.load(std::sync::atomic::Ordering::Relaxed), 0);
    let failure = counts.failure().unwrap_or_default();
    assert!(failure.contains("no NDI runtime found"), "{failure}");
}
