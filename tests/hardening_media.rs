//! Media that are not what they seem, and the ffmpeg children they start,
//! each case as the security review found it: a FIFO named as a clip or a picture, an
//! HLS playlist saved as `x.mp4` naming a file outside the show folder, a
//! truncated clip that kept ffmpeg busy with no frame and no error, and a
//! texture input toggled between a clip and `below` every 40 ms, which
//! left ffmpeg children behind. Needs ffmpeg (`make test` installs it).

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::Command as Program;
use std::time::{Duration, Instant};

use sylva::command::Command;
use sylva::engine::inputs::video::{Decoding, Transport, Video};
use sylva::gpu::{OUTPUT_FORMAT, RenderTarget, read_rgba16f};
use sylva::params::{Source, Value};
use sylva::show::Show;

use crate::hardening_files::mkfifo;
use crate::support::{self, Checked};

/// A show whose one layer passes its texture input through, starting
/// with `below`, and an output for its frames.
fn media_show(name: &str) -> (PathBuf, Show, RenderTarget) {
    let (root, show) = crate::media::media_show(name, "below");
    let output = RenderTarget::new(
        &show.ground.gpu.device,
        "media.output",
        [8, 8],
        OUTPUT_FORMAT,
    );
    (root, show, output)
}

fn name_source(show: &mut Show, source: &str) {
    show.apply(Command::Set(
        "shader.through.picture".into(),
        Value::Text(source.into()),
        Source::Osc("peer".into()),
    ))
    .checked("naming the source");
}

fn frame(show: &mut Show, output: &mut RenderTarget, dt: f32) {
    show.frame(dt, None, output, |_, _| {});
}

fn errors(show: &Show) -> String {
    (show.ground.errors.snapshot().iter())
        .map(|e| format!("{}: {}", e.origin, e.message))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A child process of this one, as /proc tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Child {
    pid: u32,
    name: String,
    zombie: bool,
}

/// This process's child processes.
fn children() -> Vec<Child> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let (head, tail) = stat.rsplit_once(')')?;
            let name = head.split_once('(')?.1.to_string();
            let mut fields = tail.split_whitespace();
            let state = fields.next()?;
            let parent: u32 = fields.next()?.parse().ok()?;
            (parent == me).then(|| Child {
                pid,
                name,
                zombie: state == "Z",
            })
        })
        .collect()
}

/// Whether child `pid` reads `path`: named on its command line, or open
/// as its standard input.
fn reads(pid: u32, path: &Path) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let named = String::from_utf8_lossy(&cmdline).contains(&*path.to_string_lossy());
    let input = std::fs::read_link(format!("/proc/{pid}/fd/0")).is_ok_and(|p| p == path);
    named || input
}

/// Children reading `path`; killed and reaped here (they are this test's
/// own), so a failure leaves nothing running.
fn readers_of(path: &Path) -> Vec<Child> {
    let found: Vec<Child> = (children().into_iter())
        .filter(|c| !c.zombie && reads(c.pid, path))
        .collect();
    for child in &found {
        // SAFETY: a child of this process, found by its id.
        unsafe {
            libc::kill(child.pid as i32, libc::SIGKILL);
            libc::waitpid(child.pid as i32, std::ptr::null_mut(), 0);
        }
    }
    found
}

/// ffmpeg and ffprobe children that are zombies now and a second later:
/// left unreaped, not merely ending.
fn lasting_zombies() -> Vec<Child> {
    let zombies = || -> Vec<Child> {
        (children().into_iter())
            .filter(|c| c.zombie && (c.name == "ffmpeg" || c.name == "ffprobe"))
            .collect()
    };
    let before = zombies();
    std::thread::sleep(Duration::from_secs(1));
    let after = zombies();
    before.into_iter().filter(|c| after.contains(c)).collect()
}

/// A small clip made by ffmpeg from its own test pattern.
fn make_clip(path: &Path, colour: &str, extra: &[&str]) {
    let status = Program::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg(format!("color=c={colour}:s=64x48:r=30"))
        .args(["-t", "2", "-pix_fmt", "yuv420p"])
        .args(extra)
        .arg(path)
        .status()
        .checked("running ffmpeg (make test installs it)");
    assert!(status.success(), "ffmpeg made {}", path.display());
}

#[test]
fn a_fifo_named_as_a_clip_or_a_picture_is_refused_and_starts_no_ffprobe() {
    let (root, mut show, mut output) = media_show("media_fifo");
    let (clip, picture) = (root.join("media/x.mp4"), root.join("media/x.png"));
    mkfifo(&clip);
    mkfifo(&picture);
    for _ in 0..25 {
        name_source(&mut show, "media/x.mp4");
        frame(&mut show, &mut output, 1.0 / 60.0);
        name_source(&mut show, "below");
        frame(&mut show, &mut output, 1.0 / 60.0);
    }
    name_source(&mut show, "media/x.mp4");
    for _ in 0..5 {
        frame(&mut show, &mut output, 1.0 / 60.0);
    }
    let said = errors(&show);
    let probes = readers_of(&clip);
    assert!(
        probes.is_empty(),
        "{} ffprobes wait on the FIFO",
        probes.len()
    );
    assert!(
        said.contains("media/x.mp4") && said.contains("FIFO"),
        "{said}"
    );
    name_source(&mut show, "media/x.png");
    for _ in 0..5 {
        frame(&mut show, &mut output, 1.0 / 60.0);
    }
    let said = errors(&show);
    assert!(
        said.contains("media/x.png") && said.contains("FIFO"),
        "{said}"
    );
}

#[test]
fn an_hls_playlist_saved_as_a_clip_does_not_play_a_file_outside_the_show() {
    let (root, mut show, mut output) = media_show("media_hls");
    let away = root.with_file_name("media_hls-outside");
    std::fs::create_dir_all(&away).checked("the outside folder");
    let segment = away.join("outside.ts");
    make_clip(&segment, "white", &["-f", "mpegts"]);
    let playlist = format!(
        "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\n{}\n#EXT-X-ENDLIST\n",
        segment.display()
    );
    std::fs::write(root.join("media/x.mp4"), playlist).checked("the playlist");
    show.media_in_lockstep();
    name_source(&mut show, "media/x.mp4");
    for _ in 0..4 {
        frame(&mut show, &mut output, 0.1);
    }
    let texels = show
        .compositor()
        .layer_target("shader.through")
        .map(|t| read_rgba16f(&show.ground.gpu, t));
    let Some(Ok(texels)) = texels else {
        panic!("reading the layer back");
    };
    let brightest = texels
        .iter()
        .flat_map(|t| &t[..3])
        .fold(0.0f32, |a, b| a.max(*b));
    assert!(brightest < 1e-3, "the outside file played: {brightest}");
    let said = errors(&show);
    assert!(
        said.contains("media/x.mp4") && said.contains("hls"),
        "{said}"
    );
}

#[test]
fn a_truncated_clip_is_said_to_give_no_frame_and_its_ffmpeg_is_stopped() {
    let root = support::show_folder("media_truncated", &[]);
    std::fs::create_dir_all(root.join("media")).checked("media/");
    let whole = root.join("media/whole.mp4");
    make_clip(&whole, "red", &["-movflags", "+faststart"]);
    // Cut just past the header: ffprobe reads it, ffmpeg finds no frame
    // and, looping, spins for ever.
    let bytes = std::fs::read(&whole).checked("the clip");
    let data = bytes
        .windows(4)
        .position(|w| w == b"mdat")
        .checked("an mdat box");
    let clip = root.join("media/cut.mp4");
    std::fs::write(&clip, &bytes[..data + 104]).checked("the cut clip");
    let decoding = Decoding {
        first_frame: Duration::from_secs(2),
        ..Decoding::default()
    };
    let source = (root.clone(), PathBuf::from("media/cut.mp4"));
    let mut video = Video::open(source, Transport::default(), decoding);
    let started = Instant::now();
    let said = loop {
        match video.advance(1.0 / 30.0, Transport::default(), false) {
            Err(why) => break why.to_string(),
            Ok(_) if started.elapsed() < Duration::from_secs(8) => {
                std::thread::sleep(Duration::from_millis(30));
            }
            Ok(_) => panic!("no error in 8 s"),
        }
    };
    assert!(said.contains("no frame"), "{said}");
    assert!(readers_of(&clip).is_empty(), "its ffmpeg still runs");
    // And it stays said, without starting ffmpeg again.
    assert!(video.advance(0.1, Transport::default(), false).is_err());
    assert!(readers_of(&clip).is_empty(), "ffmpeg started again");
}

#[test]
fn a_clip_toggled_with_below_every_40_ms_leaves_no_ffmpeg_behind() {
    let (root, mut show, mut output) = media_show("media_toggle");
    let clip = root.join("media/clip.mp4");
    make_clip(&clip, "blue", &[]);
    for _ in 0..60 {
        name_source(&mut show, "media/clip.mp4");
        frame(&mut show, &mut output, 0.04);
        std::thread::sleep(Duration::from_millis(40));
        name_source(&mut show, "below");
        frame(&mut show, &mut output, 0.04);
    }
    for _ in 0..10 {
        frame(&mut show, &mut output, 0.04);
        std::thread::sleep(Duration::from_millis(40));
    }
    // Workers called off mid-probe have a moment to notice.
    std::thread::sleep(Duration::from_millis(500));
    let running = readers_of(&clip);
    let zombies = lasting_zombies();
    assert!(
        running.is_empty(),
        "ffmpeg children still decode: {running:?}"
    );
    assert!(zombies.is_empty(), "children left unreaped: {zombies:?}");
}
