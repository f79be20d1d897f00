//! The phone page in a real browser (`tests/browser/phone.py`: Debian's
//! headless Chromium driven by Playwright) against the show binary: a
//! fader dragged moves the parameter, two faders under two fingers at
//! once, an OSC write moves the fader, a tapped preset loads and its
//! layer's controls appear, a size the layer rebuilds for is a number
//! typed in and a texture input a picker of sources, a favourite is kept,
//! nothing is asked of any host but the show, after the show restarts
//! the page finds it again, and a page from another origin cannot open
//! the WebSocket.

use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support;
use crate::support::Checked;

/// The browser test `script` run against a show with its ports, and
/// `more` arguments; its exit status.
fn browse(script: &str, (osc, oscquery): (u16, u16), more: &[&std::ffi::OsStr]) -> Child {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/browser")
        .join(script);
    Command::new("python3")
        .arg(&script)
        .arg(format!("http://127.0.0.1:{oscquery}/ui"))
        .arg(osc.to_string())
        .args(more)
        .spawn()
        .checked("running python3 (the browser test needs python3 with playwright and Debian's chromium: make test installs them)")
}

/// A port free now on 127.0.0.1.
fn free_port() -> u16 {
    let tcp = TcpListener::bind("127.0.0.1:0").checked("a free TCP port");
    let port = tcp.local_addr().checked("its address").port();
    // The OSC port must be free for UDP too.
    UdpSocket::bind(("127.0.0.1", port)).map_or_else(|_| free_port(), |_| port)
}

/// The show binary, headless, on `osc`/`oscquery` ports with `more`
/// arguments, its log in `log`.
fn show(root: &Path, (osc, oscquery): (u16, u16), more: &[&str], log: &Path) -> Child {
    let log = std::fs::File::create(log).checked("the show's log");
    let child = Command::new(env!("CARGO_BIN_EXE_sylva"))
        .args([
            "run",
            "--headless",
            "--no-audio",
            "--no-midi",
            "--size",
            "64x36",
        ])
        .args(["--preset", "first", "--osc-bind", "127.0.0.1"])
        .args([
            "--osc-port",
            &osc.to_string(),
            "--oscquery-port",
            &oscquery.to_string(),
        ])
        .args(more)
        .arg("--project")
        .arg(root)
        .env("SYLVA_ADAPTER", support::adapter_name())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .checked("starting the show");
    let up = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", oscquery)).is_err() {
        assert!(
            up.elapsed() < Duration::from_secs(60),
            "the show did not open its OSCQuery port"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child
}

#[test]
fn the_phone_page_plays_the_show_in_a_real_browser() {
    let root = support::show_folder(
        "phone",
        &[
            ("presets/first.toml", "layers = [\"shader.aurora\"]\n"),
            (
                "presets/second.toml",
                "layers = [\"shader.aurora\", \"shader.echo\"]\n",
            ),
            // A size the layer rebuilds for, and a texture input.
            (
                "presets/third.toml",
                "layers = [\"shader.picture\", \"colony\"]\n[params]\n\
                 \"colony.attraction_count\" = 200\n\"colony.node_capacity\" = 2000\n\
                 \"shader.picture.picture\" = \"below\"\n",
            ),
        ],
    );
    let (osc, oscquery) = (free_port(), free_port());
    let log = root.join("show.log");
    let mut running = show(&root, (osc, oscquery), &[], &log);
    let restart: PathBuf = root.join("restart-now");
    let shot = support::out_dir().join("phone_390x844.png");
    let mut browser = browse(
        "phone.py",
        (osc, oscquery),
        &[shot.as_os_str(), restart.as_os_str()],
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = browser.try_wait().checked("waiting for the browser") {
            break status;
        }
        if restart.exists() {
            running.kill().ok();
            running.wait().ok();
            std::thread::sleep(Duration::from_millis(500));
            running = show(&root, (osc, oscquery), &[], &root.join("show-again.log"));
            std::fs::remove_file(&restart).checked("telling the page the show is back");
        }
        assert!(
            started.elapsed() < Duration::from_secs(150),
            "the browser test hung"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    running.kill().ok();
    running.wait().ok();
    assert!(
        status.success(),
        "the browser test failed; the show's log is {}",
        log.display()
    );
    let kept =
        std::fs::read_to_string(root.join("ui/favourites.json")).checked("the favourites file");
    assert!(kept.contains("/sylva/master/blackout"), "{kept}");
}

#[test]
fn a_ui_pin_guards_the_page_s_writes_in_a_real_browser() {
    let root = support::show_folder(
        "phone-pin",
        &[("presets/first.toml", "layers = [\"shader.aurora\"]\n")],
    );
    let ports = (free_port(), free_port());
    let log = root.join("show.log");
    let mut running = show(&root, ports, &["--ui-pin", "2468"], &log);
    let status = browse("pin.py", ports, &[])
        .wait()
        .checked("waiting for the browser");
    running.kill().ok();
    running.wait().ok();
    assert!(
        status.success(),
        "the PIN's browser test failed; the show's log is {}",
        log.display()
    );
}
