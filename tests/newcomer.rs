//! What a newcomer meets running the binary for the first time: no
//! stray lines from system libraries on stderr (alsa-lib's sequencer
//! with `--no-midi`, libwayland's `XDG_RUNTIME_DIR` through Mesa's
//! device selection), a mistyped preset or playlist answered with the
//! names there are and the one meant, and a log that says which show
//! plays.

use std::net::UdpSocket;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::support;
use crate::support::Checked;

/// `sylva args` with the test adapter and `XDG_RUNTIME_DIR` unset, as a
/// person starting it from a bare shell (a service, `su`, ssh) has it.
fn sylva(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sylva"));
    command
        .args(args)
        .env(sylva::gpu::ADAPTER_ENV, support::adapter_name())
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("NODEVICE_SELECT");
    command
}

fn run(args: &[&str]) -> (Output, String) {
    let output = sylva(args).output().checked("running sylva");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output, stderr)
}

/// Lines a system library printed on its own rather than through the log.
fn stray_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("ALSA lib") || l.contains("XDG_RUNTIME_DIR is invalid"))
        .collect()
}

/// A port free now for UDP (OSC) and TCP (OSCQuery).
fn free_port() -> u16 {
    let socket = UdpSocket::bind("127.0.0.1:0").checked("a free UDP port");
    let port = socket.local_addr().checked("its address").port();
    match std::net::TcpListener::bind(("127.0.0.1", port)) {
        Ok(_) => port,
        Err(_) => free_port(),
    }
}

#[test]
fn without_midi_a_show_prints_nothing_of_alsa_or_wayland() {
    // A layer switch that the shipped nanoKONTROL2 mapping lights an LED
    // for: its feedback must not open the sequencer under --no-midi.
    let root = support::show_folder(
        "newcomer_no_midi",
        &[("presets/first.toml", "layers = [\"shader.aurora\"]\n")],
    );
    let project = root.to_string_lossy().into_owned();
    let osc = free_port().to_string();
    let oscquery = free_port().to_string();
    let mut child = sylva(&[
        "run",
        "--headless",
        "--no-midi",
        "--exit-after",
        "4",
        "--size",
        "32x18",
        "--preset",
        "first",
        "--project",
        &project,
        "--osc-bind",
        "127.0.0.1",
        "--osc-port",
        &osc,
        "--oscquery-port",
        &oscquery,
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .checked("starting the show");
    let socket = UdpSocket::bind("127.0.0.1:0").checked("a socket to send OSC from");
    let toggle = |on: f32| {
        let message = rosc::OscPacket::Message(rosc::OscMessage {
            addr: "/sylva/shader/aurora/enabled".into(),
            args: vec![rosc::OscType::Float(on)],
        });
        let bytes = rosc::encoder::encode(&message).checked("encoding OSC");
        socket.send_to(&bytes, format!("127.0.0.1:{osc}")).ok();
    };
    let mut on = 0.0;
    while child.try_wait().checked("waiting for the show").is_none() {
        toggle(on);
        on = 1.0 - on;
        std::thread::sleep(Duration::from_millis(200));
    }
    let output = child.wait_with_output().checked("the show's output");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stray_lines(&stderr).is_empty(), "{stderr}");
    // Its phone page is logged at addresses a phone can open.
    assert!(
        stderr.contains(&format!("http://localhost:{oscquery}/ui")) && !stderr.contains("HOST:"),
        "{stderr}"
    );
}

#[test]
fn a_mistyped_preset_or_playlist_names_the_ones_there_are() {
    let out = support::out_dir().join("newcomer_typo");
    let out = out.to_string_lossy().into_owned();
    let (output, stderr) = run(&[
        "render", "--preset", "colny", "--frames", "1", "--out", &out,
    ]);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("unknown preset \"colny\""), "{stderr}");
    assert!(stderr.contains("did you mean \"colony\"?"), "{stderr}");
    assert!(
        stderr.contains("kaleidoscope"),
        "the presets are listed: {stderr}"
    );
    assert!(stray_lines(&stderr).is_empty(), "{stderr}");
    let (output, stderr) = run(&[
        "render",
        "--playlist",
        "defualt",
        "--frames",
        "1",
        "--out",
        &out,
    ]);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("unknown playlist \"defualt\" (did you mean \"default\"?)"),
        "{stderr}"
    );
}

#[test]
fn a_headless_show_says_which_show_plays() {
    let headless = [
        "run",
        "--headless",
        "--no-midi",
        "--no-osc",
        "--no-audio",
        "--frames",
        "2",
        "--size",
        "32x18",
    ];
    // Without a preset: the default show, as in the window (on a software
    // adapter its light version).
    let (output, stderr) = run(&headless);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("playing the playlist default (the default show)")
            || stderr.contains("the light show (playlist light)"),
        "{stderr}"
    );
    // A preset mistyped in a live show: said to be unknown, and the
    // fallback named for what it is.
    let mut mistyped = headless.to_vec();
    mistyped.extend(["--preset", "colny"]);
    let (output, stderr) = run(&mistyped);
    assert!(output.status.success(), "a live show goes on: {stderr}");
    assert!(
        stderr.contains("unknown preset \"colny\" (did you mean \"colony\"?)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the built-in default preset runs instead"),
        "{stderr}"
    );
    assert!(!stderr.contains("default show runs"), "{stderr}");
}
