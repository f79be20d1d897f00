//! Several machines, one show: a leader and two followers, three `sylva
//! run --headless` processes on this machine, play the colony and then
//! the fluid. Each follower shows its half of the canvas through an
//! outputs file. While the leader's performer dims the picture over OSC
//! and switches the preset, and one follower is killed and started
//! again, every follower's frame matches the leader's frame of the same
//! number (compared by number: the software adapter keeps no wall-clock
//! pace), the canvas byte for byte and each half within a golden image's
//! tolerance.

use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use image::RgbaImage;

use crate::support;
use crate::support::Checked;

/// Frames the leader plays, at [`FPS`].
const FRAMES: u64 = 48;

/// The leader's pace: three processes share the machine's cores.
const FPS: u32 = 8;

/// Every how many frames each process writes its picture.
const EVERY: u64 = 4;

const CANVAS: [u32; 2] = [128, 64];

/// An outputs file showing one half of the canvas, 1:1.
fn half(name: &str, x: f32) -> String {
    format!(
        "[[output]]\nname = \"{name}\"\nsize = [{}, {}]\nregion = [{x}, 0.0, 0.5, 1.0]\n",
        CANVAS[0] / 2,
        CANVAS[1]
    )
}

fn free_port() -> u16 {
    let tcp = TcpListener::bind("127.0.0.1:0").checked("a free TCP port");
    tcp.local_addr().checked("its address").port()
}

fn free_udp_port() -> u16 {
    let udp = UdpSocket::bind("127.0.0.1:0").checked("a free UDP port");
    udp.local_addr().checked("its address").port()
}

fn sylva(project: &Path, frames_to: &Path, log: &Path, role: &[String]) -> Child {
    let size = format!("{}x{}", CANVAS[0], CANVAS[1]);
    Command::new(env!("CARGO_BIN_EXE_sylva"))
        .args(["run", "--headless", "--no-midi", "--no-audio", "--project"])
        .arg(project)
        .args(["--preset", "colony_small", "--size", &size])
        .args([
            "--fps",
            &FPS.to_string(),
            "--frames-every",
            &EVERY.to_string(),
        ])
        .arg("--frames-to")
        .arg(frames_to)
        .args(role)
        .env(sylva::gpu::ADAPTER_ENV, support::adapter_name())
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).checked("the process's log"))
        .spawn()
        .checked("starting sylva")
}

fn follower(project: &Path, root: &Path, name: &str, leader: u16) -> Child {
    let role = [
        "--no-osc".to_string(),
        "--follow".to_string(),
        format!("127.0.0.1:{leader}"),
        "--outputs".to_string(),
        if name.starts_with('a') {
            "left"
        } else {
            "right"
        }
        .to_string(),
    ];
    sylva(
        project,
        &root.join(name),
        &root.join(format!("{name}.log")),
        &role,
    )
}

fn frame_path(folder: &Path, frame: u64) -> PathBuf {
    folder.join(format!("frame_{frame:05}.png"))
}

/// Waits until frame `frame` is written into `folder`, while `leader`
/// (whose log is `log` with `.log`) runs.
fn wait_for(folder: &Path, frame: u64, leader: &mut Child, log: &Path) {
    let until = Instant::now() + Duration::from_secs(240);
    while !frame_path(folder, frame).exists() {
        let ended = leader.try_wait().checked("the leader's state");
        assert!(
            ended.is_none() && Instant::now() < until,
            "frame {frame} was not drawn: {}",
            std::fs::read_to_string(log.with_extension("log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn osc(port: u16, address: &str, args: Vec<rosc::OscType>) {
    let packet = rosc::OscPacket::Message(rosc::OscMessage {
        addr: address.into(),
        args,
    });
    let bytes = rosc::encoder::encode(&packet).checked("encoding OSC");
    let socket = UdpSocket::bind("127.0.0.1:0").checked("an OSC socket");
    socket
        .send_to(&bytes, ("127.0.0.1", port))
        .checked("sending OSC");
}

fn open(path: &Path) -> RgbaImage {
    image::open(path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
        .to_rgba8()
}

/// How far `part` is from the leader's canvas `whole` at column `x`: the
/// largest difference of any channel, and the share of channels more
/// than 2 levels apart.
fn distance(part: &RgbaImage, whole: &RgbaImage, x: u32) -> (u8, f64) {
    let mut largest = 0u8;
    let mut far = 0usize;
    for (px, py, pixel) in part.enumerate_pixels() {
        let theirs = whole.get_pixel(px + x, py);
        for (a, b) in pixel.0.iter().zip(theirs.0) {
            let d = a.abs_diff(b);
            largest = largest.max(d);
            far += usize::from(d > 2);
        }
    }
    (largest, far as f64 / (part.len() as f64))
}

fn wait(child: &mut Child, name: &str, root: &Path) {
    let until = Instant::now() + Duration::from_secs(300);
    loop {
        if let Some(status) = child.try_wait().checked("a process's state") {
            let log = std::fs::read_to_string(root.join(format!("{name}.log"))).unwrap_or_default();
            assert!(status.success(), "{name} failed: {log}");
            return;
        }
        if Instant::now() > until {
            child.kill().ok();
            panic!("{name} did not end");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Compares a follower's frames (those it wrote) with the leader's;
/// returns how many it compared.
fn compare(root: &Path, name: &str, output: &str, x: u32) -> usize {
    let mut compared = 0;
    for frame in (EVERY..=FRAMES).step_by(EVERY as usize) {
        let canvas = frame_path(&root.join(name), frame);
        if !canvas.exists() {
            continue;
        }
        let leader = open(&frame_path(&root.join("leader"), frame));
        let own = open(&canvas);
        let pixels = own.pixels().zip(leader.pixels()).filter(|(a, b)| a != b);
        assert_eq!(
            pixels.count(),
            0,
            "{name}'s canvas at frame {frame} is not the leader's"
        );
        let part = open(&frame_path(&root.join(name).join(output), frame));
        let (largest, far) = distance(&part, &leader, x);
        assert!(
            largest <= 8 && far <= 0.01,
            "{name}'s {output} half at frame {frame}: largest difference {largest}, {:.2}% of channels over 2",
            far * 100.0
        );
        compared += 1;
    }
    compared
}

#[test]
fn a_leader_and_two_followers_draw_one_show_frame_for_frame_through_a_restart() {
    let fixtures = support::fixtures().join("presets");
    let read = |name: &str| {
        std::fs::read_to_string(fixtures.join(name)).checked("reading a fixture preset")
    };
    let (colony, fluid) = (read("colony_small.toml"), read("fluid_small.toml"));
    let project = support::show_folder(
        "ensemble",
        &[
            ("presets/colony_small.toml", &colony),
            ("presets/fluid_small.toml", &fluid),
            ("outputs/left.toml", &half("left", 0.0)),
            ("outputs/right.toml", &half("right", 0.5)),
        ],
    );
    let root = project.join("frames");
    std::fs::create_dir_all(&root).checked("the frames' folder");
    let (port, osc_port, query_port) = (free_port(), free_udp_port(), free_port());
    let lead = [
        "--lead".to_string(),
        format!("127.0.0.1:{port}"),
        "--osc-bind".to_string(),
        "127.0.0.1".to_string(),
        "--osc-port".to_string(),
        osc_port.to_string(),
        "--oscquery-port".to_string(),
        query_port.to_string(),
        "--frames".to_string(),
        FRAMES.to_string(),
    ];
    let leader_frames = root.join("leader");
    let mut leader = sylva(&project, &leader_frames, &root.join("leader.log"), &lead);
    let mut a = follower(&project, &root, "a", port);
    let mut b = follower(&project, &root, "b", port);

    // The leader's performer dims the picture, then one follower dies.
    wait_for(&leader_frames, 12, &mut leader, &root.join("leader"));
    osc(
        osc_port,
        "/sylva/master/brightness",
        vec![rosc::OscType::Float(0.5)],
    );
    wait_for(&leader_frames, 20, &mut leader, &root.join("leader"));
    b.kill().checked("killing follower b");
    b.wait().checked("reaping follower b");
    // It is started again, and the performer switches to the fluid.
    let mut b_again = follower(&project, &root, "b_again", port);
    wait_for(&leader_frames, 28, &mut leader, &root.join("leader"));
    osc(
        osc_port,
        "/sylva/preset",
        vec![
            rosc::OscType::String("fluid_small".into()),
            rosc::OscType::Float(0.0),
        ],
    );

    wait(&mut leader, "leader", &root);
    wait(&mut a, "a", &root);
    wait(&mut b_again, "b_again", &root);

    // The performer's changes reached the leader's picture: the grown
    // colony gave way to the fluid's tank.
    let colony = open(&frame_path(&leader_frames, 28));
    let tank = open(&frame_path(&leader_frames, FRAMES));
    let changed = colony.pixels().zip(tank.pixels()).filter(|(p, q)| p != q);
    assert!(
        changed.count() > colony.len() / 4 / 20,
        "the leader's picture hardly changed"
    );
    let log = std::fs::read_to_string(root.join("leader.log")).checked("the leader's log");
    assert!(log.contains("preset fluid_small"), "{log}");

    // Every frame a follower wrote is the leader's, its half the leader's half.
    let whole = (FRAMES / EVERY) as usize;
    assert_eq!(compare(&root, "a", "left", 0), whole);
    assert_eq!(compare(&root, "b_again", "right", CANVAS[0] / 2), whole);
    // Whatever the killed follower wrote before it died was the leader's.
    compare(&root, "b", "right", CANVAS[0] / 2);
    for name in ["a", "b_again"] {
        let log = std::fs::read_to_string(root.join(format!("{name}.log"))).checked("a log");
        assert!(log.contains("frames drawn"), "{name}: {log}");
    }
}

/// A leader keeps what its performers change, not what its script or
/// its own playlist does; a follower refuses its own performers.
#[test]
fn a_leader_forwards_performers_alone_and_a_follower_refuses_them() {
    use sylva::command::Command;
    use sylva::params::{Source, Value};
    let set = |source| Command::Set("master.brightness".into(), Value::Float(0.5), source);
    let mut leader = support::show(
        support::fixtures(),
        "colony_small",
        sylva::gpu::OUTPUT_FORMAT,
    );
    leader.lead();
    leader
        .perform(set(Source::Midi))
        .checked("a performer's change");
    leader
        .apply(set(Source::Script))
        .checked("the script's change");
    leader
        .perform(Command::SavePreset("kept_here".into()))
        .checked("a save");
    assert_eq!(leader.take_performed(), vec![set(Source::Midi)]);
    assert!(leader.take_performed().is_empty());

    let mut follower = support::show(
        support::fixtures(),
        "colony_small",
        sylva::gpu::OUTPUT_FORMAT,
    );
    follower.follow_a_leader();
    let refused = follower.perform(set(Source::Ui));
    assert!(
        matches!(refused, Err(sylva::show::CommandError::Following)),
        "{refused:?}"
    );
    follower
        .apply(set(Source::Osc("leader".into())))
        .checked("the leader's change");
}

/// A "leader" that sends a packet longer than any a leader sends is cut
/// off, the reason on screen; the follower holds its last frame.
#[test]
fn a_follower_refuses_a_stream_that_is_not_a_leaders() {
    use std::io::Write;
    use sylva::show::ensemble::{Beat, Ensemble, Role};
    let listener = TcpListener::bind("127.0.0.1:0").checked("a fake leader");
    let address = listener.local_addr().checked("its address");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten().take(1) {
            let mut stream = stream;
            stream.write_all(&u32::MAX.to_be_bytes()).ok();
            stream.write_all(&[0xAB; 64]).ok();
            std::thread::sleep(Duration::from_secs(5));
        }
    });
    let mut show = support::show(
        support::fixtures(),
        "colony_small",
        sylva::gpu::OUTPUT_FORMAT,
    );
    let mut ensemble = Ensemble::start(Role::Follow(address), &mut show).checked("following");
    let until = Instant::now() + Duration::from_secs(20);
    let said = loop {
        assert_eq!(ensemble.before_frame(&mut show, 0.1), Beat::Hold);
        let errors = support::error_messages(&show);
        if let Some(said) = errors.iter().find(|e| e.contains("bytes (at most")) {
            break said.clone();
        }
        assert!(Instant::now() < until, "no error said: {errors:?}");
    };
    assert!(
        ensemble.status().contains("holding the last frame"),
        "{said}"
    );
}

/// What the leader's ear heard reaches a deaf follower whole: its
/// `audio.*` parameters and the beat its script hears are the leader's,
/// frame by frame, through the wire's bytes.
#[test]
fn a_follower_hears_what_its_leader_heard() {
    use sylva::audio::file::{FileFeed, Sound};
    use sylva::audio::{AnalysisSettings, Feed};
    use sylva::show::Led;
    use sylva::show::ensemble::wire::{EnsemblePacket, FrameRecord, decode, encode};
    const RATE: usize = 48_000;
    // A kick every half second.
    let samples: Vec<f32> = (0..RATE * 3)
        .map(|n| {
            let t = (n % (RATE / 2)) as f32 / RATE as f32;
            0.9 * (-t * 18.0).exp() * (std::f32::consts::TAU * 60.0 * t).sin()
        })
        .collect();
    let sound = Sound {
        rate: RATE as u32,
        samples,
        channels: 1,
    };
    let format = sylva::gpu::OUTPUT_FORMAT;
    let mut leader = support::show(support::fixtures(), "colony_small", format);
    leader.hear_from(Feed::File(Box::new(FileFeed::new(
        sound,
        AnalysisSettings::default(),
    ))));
    let mut follower = support::show(support::fixtures(), "colony_small", format);
    let size = [32, 18];
    let target = |show: &sylva::show::Show| {
        sylva::gpu::RenderTarget::new(&show.ground.gpu.device, "ear", size, format)
    };
    let (mut lead_out, mut follow_out) = (target(&leader), target(&follower));
    let mut loud = 0;
    for _ in 0..90 {
        leader.frame(1.0 / 30.0, None, &mut lead_out, |_, _| {});
        let sent = encode(&EnsemblePacket::Frame(Box::new(FrameRecord {
            heard: leader.heard_for_followers(),
            ..FrameRecord::default()
        })));
        let Ok(EnsemblePacket::Frame(record)) = decode(&sent) else {
            panic!("the frame did not come back");
        };
        follower.follow(Led {
            clock: leader.clock,
            heard: record.heard,
        });
        follower.frame(1.0 / 30.0, None, &mut follow_out, |_, _| {});
        for name in ["audio.level", "audio.bass", "audio.onset", "audio.bands"] {
            assert_eq!(
                follower.registry.get(name),
                leader.registry.get(name),
                "{name} at {}",
                leader.clock.time
            );
        }
        assert_eq!(follower.clock, leader.clock);
        loud += usize::from(leader.registry.float("audio.bass") > 0.1);
    }
    assert!(loud > 10, "the leader heard its kicks in {loud} frames");
}

/// The leader killed and started again begins a new show; its follower,
/// still running, follows the new show from its first frame and ends
/// with it.
#[test]
fn a_follower_follows_its_leader_started_again() {
    let project = support::show_folder("ensemble_again", &[]);
    let root = project.join("frames");
    std::fs::create_dir_all(&root).checked("the frames' folder");
    let port = free_port();
    let start = |name: &str, role: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_sylva"))
            .args([
                "run",
                "--headless",
                "--no-midi",
                "--no-audio",
                "--no-osc",
                "--project",
            ])
            .arg(&project)
            .args(["--preset", "default", "--size", "64x36", "--fps", "10"])
            .args(role)
            .env(sylva::gpu::ADAPTER_ENV, support::adapter_name())
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(root.join(format!("{name}.log"))).checked("a log"))
            .spawn()
            .checked("starting sylva")
    };
    let lead = format!("127.0.0.1:{port}");
    let frames = root.join("follower");
    let frames_to = frames.to_string_lossy().to_string();
    let mut follower = start(
        "follower",
        &[
            "--follow",
            &lead,
            "--frames-to",
            &frames_to,
            "--frames-every",
            "5",
        ],
    );
    let mut first = start("first", &["--lead", &lead, "--frames", "400"]);
    wait_for(&frames, 20, &mut first, &root.join("first"));
    first.kill().checked("killing the first leader");
    first.wait().checked("reaping it");
    let again = std::time::SystemTime::now();
    let mut second = start("second", &["--lead", &lead, "--frames", "15"]);
    wait(&mut second, "second", &root);
    wait(&mut follower, "follower", &root);
    let log = std::fs::read_to_string(root.join("follower.log")).checked("the follower's log");
    assert!(log.contains("started its show again"), "{log}");
    let redrawn = std::fs::metadata(frame_path(&frames, 10))
        .and_then(|m| m.modified())
        .checked("the follower's frame 10");
    assert!(
        redrawn > again,
        "the follower did not draw the new show's frame 10"
    );
}
