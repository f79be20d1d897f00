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
fn browse(script: &str, osc: u16, oscquery: u16, more: &[&std::ffi::OsStr]) -> Child {
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

/// The exit status of a browser test, which must end within `limit`: one
/// that hangs (a page waiting on a socket that never opens) is killed and
/// fails, instead of holding the whole run until CI gives up.
fn ended_within(browser: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = browser.try_wait().checked("waiting for the browser") {
            return status;
        }
        if started.elapsed() > limit {
            browser.kill().ok();
            browser.wait().ok();
            panic!("the browser test hung past {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
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
fn show(root: &Path, osc: u16, oscquery: u16, more: &[&str], log: &Path) -> Child {
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

/// A 16x9 thumbnail for preset `name` in the show folder `root`, as
/// `sylva thumbs` keeps one.
fn thumbnail(root: &Path, name: &str) -> Vec<u8> {
    let folder = root.join("presets/thumbs");
    std::fs::create_dir_all(&folder).checked("the thumbnails folder");
    let picture = image::RgbaImage::from_pixel(16, 9, image::Rgba([200, 80, 40, 255]));
    let file = folder.join(format!("{name}.png"));
    picture.save(&file).checked("a thumbnail");
    std::fs::read(&file).checked("the thumbnail's bytes")
}

/// One GET to the show on `port`: the status and the whole response's
/// bytes (a picture is not text).
fn raw_get(port: u16, path: &str) -> (u16, Vec<u8>) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).checked("connecting");
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .checked("sending the request");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).ok();
    let status = String::from_utf8_lossy(&response[..response.len().min(16)])
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, response)
}

#[test]
fn the_page_s_server_hands_out_a_preset_s_thumbnail_and_nothing_else() {
    let root = support::show_folder(
        "phone_thumbs",
        &[("presets/first.toml", "layers = [\"shader.aurora\"]\n")],
    );
    let bytes = thumbnail(&root, "first");
    std::fs::write(root.join("secret.png"), &bytes).checked("a file outside the thumbnails");
    let (osc, oscquery) = (free_port(), free_port());
    let mut running = show(&root, osc, oscquery, &[], &root.join("show.log"));
    let got = |path: &str| raw_get(oscquery, path);
    let (status, body) = got("/thumbs/first.png");
    assert_eq!(status, 200);
    assert!(body.ends_with(&bytes), "the thumbnail's bytes, whole");
    for refused in [
        "/thumbs/second.png",
        "/thumbs/../secret.png",
        "/thumbs/..%2Fsecret.png",
        "/thumbs/first.toml",
        "/thumbs/.png",
    ] {
        let (status, _) = got(refused);
        assert_eq!(status, 404, "{refused}");
    }
    running.kill().ok();
    running.wait().ok();
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
    thumbnail(&root, "first");
    let (osc, oscquery) = (free_port(), free_port());
    let log = root.join("show.log");
    let mut running = show(&root, osc, oscquery, &[], &log);
    let restart: PathBuf = root.join("restart-now");
    let shot = support::out_dir().join("phone_390x844.png");
    let mut browser = browse(
        "phone.py",
        osc,
        oscquery,
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
            running = show(&root, osc, oscquery, &[], &root.join("show-again.log"));
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
    let (osc, oscquery) = (free_port(), free_port());
    let log = root.join("show.log");
    let mut running = show(&root, osc, oscquery, &["--ui-pin", "2468"], &log);
    let mut browser = browse("pin.py", osc, oscquery, &[]);
    let status = ended_within(&mut browser, Duration::from_secs(150));
    running.kill().ok();
    running.wait().ok();
    assert!(
        status.success(),
        "the PIN's browser test failed; the show's log is {}",
        log.display()
    );
}
