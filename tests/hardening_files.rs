//! Files that are not what they seem, each case as the security review found it: a
//! show folder's favourites, outputs file, mask, point cloud, species
//! file and density map that are a link out of the folder, a FIFO, a
//! device or a (sparse) file just over their cap; writes a UDP peer
//! triggers through a planted link; media that are FIFOs or playlists of
//! files elsewhere, a clip that never gives a frame, and ffmpeg children
//! left behind by a texture input toggled every 40 ms. The show must
//! refuse each on screen, never stall a frame on one, never write or
//! play outside its folder, and leave no child process behind.
//!
//! A FIFO is unblocked after two seconds by a writer of the test's own,
//! so a reader that opened it (the bug) fails on its time instead of
//! hanging the test.

#![cfg(unix)]

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sylva::command::Command;
use sylva::gpu::{OUTPUT_FORMAT, RenderTarget};
use sylva::params::{Source, Value};
use sylva::show::Show;

use crate::support::{self, Checked};

/// How long a FIFO waits before the test's writer unblocks a reader.
const RESCUE: Duration = Duration::from_secs(2);

/// A frame or a read that took this long waited on a file.
const STALLED: Duration = Duration::from_millis(1500);

/// Makes a FIFO at `path`.
pub fn mkfifo(path: &Path) {
    let name = CString::new(path.as_os_str().as_bytes()).checked("a path without NUL");
    // SAFETY: a NUL-terminated path; mkfifo only creates the node.
    let made = unsafe { libc::mkfifo(name.as_ptr(), 0o644) };
    assert_eq!(made, 0, "mkfifo {}", path.display());
}

/// Makes `path` a sparse file of `bytes` (no disk used).
pub fn sparse(path: &Path, bytes: u64) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).checked("making the folder");
    }
    let file = std::fs::File::create(path).checked("a sparse file");
    file.set_len(bytes).checked("sizing the sparse file");
}

/// Makes `link` a symbolic link to `target`.
pub fn link(target: &Path, link: &Path) {
    if let Some(parent) = link.parent() {
        std::fs::create_dir_all(parent).checked("making the folder");
    }
    std::os::unix::fs::symlink(target, link).checked("a symbolic link");
}

/// After [`RESCUE`], writes `bytes` into the FIFO at `path` once a reader
/// has it open, then closes it: a reader stuck on it goes on. Gives up
/// two seconds later when nobody opened it (the fixed show never does).
pub fn rescue(path: PathBuf, bytes: Vec<u8>) {
    std::thread::spawn(move || {
        std::thread::sleep(RESCUE);
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            let opened = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&path);
            if let Ok(mut file) = opened {
                std::io::Write::write_all(&mut file, &bytes).ok();
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    });
}

/// A folder outside the show folder `root`, for links to aim at.
fn outside(root: &Path) -> PathBuf {
    let dir = root.with_file_name(format!(
        "{}-outside",
        root.file_name().map_or("x".into(), |n| n.to_string_lossy())
    ));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).checked("the outside folder");
    dir
}

fn errors(show: &Show) -> String {
    (show.ground.errors.snapshot().iter())
        .map(|e| format!("{}: {}", e.origin, e.message))
        .collect::<Vec<_>>()
        .join("\n")
}

fn frame(show: &mut Show, output: &mut RenderTarget, dt: f32) -> Duration {
    let started = Instant::now();
    show.frame(dt, None, output, |_, _| {});
    started.elapsed()
}

/// A show of one plain shader layer in a fresh folder holding `files`.
fn plain_show(name: &str, files: &[(&str, &str)]) -> (PathBuf, Show, RenderTarget) {
    let mut all = vec![("presets/plain.toml", "layers = [\"shader.aurora\"]\n")];
    all.extend_from_slice(files);
    let root = support::show_folder(name, &all);
    let show = support::show(root.clone(), "plain", OUTPUT_FORMAT);
    let output = RenderTarget::new(
        &show.ground.gpu.device,
        "files.output",
        [8, 8],
        OUTPUT_FORMAT,
    );
    (root, show, output)
}

/// The favourites the page is offered once the read started now is in
/// (within two seconds), and how long the longest refresh took.
fn favourites_read(show: &mut Show) -> (String, Duration) {
    let mut longest = Duration::ZERO;
    let deadline = Instant::now() + Duration::from_secs(4);
    loop {
        let started = Instant::now();
        let favourites = show.catalogue().favourites.clone();
        longest = longest.max(started.elapsed());
        if !favourites.is_empty() || Instant::now() > deadline {
            return (favourites, longest);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn favourites_that_are_a_link_a_fifo_or_over_their_cap_are_refused_without_a_stall() {
    // A link to a file outside: read through today, it offered its list.
    let (root, mut show, _) = plain_show("files_favourites_link", &[]);
    let away = outside(&root);
    std::fs::write(away.join("list.json"), "[\"/outside\"]").checked("the outside list");
    link(&away.join("list.json"), &root.join("ui/favourites.json"));
    let (favourites, _) = favourites_read(&mut show);
    assert_eq!(favourites, "[]", "{}", errors(&show));
    assert!(errors(&show).contains("symbolic link"), "{}", errors(&show));
    // A folder on the way that is a link: the same.
    let (root, mut show, _) = plain_show("files_favourites_folder", &[]);
    let away = outside(&root);
    std::fs::write(away.join("favourites.json"), "[\"/outside\"]").checked("the list");
    link(&away, &root.join("ui"));
    let (favourites, _) = favourites_read(&mut show);
    assert_eq!(favourites, "[]", "{}", errors(&show));
    assert!(errors(&show).contains("symbolic link"), "{}", errors(&show));
    // Just over the cap (sparse): said, not read.
    let (root, mut show, _) = plain_show("files_favourites_huge", &[]);
    sparse(&root.join("ui/favourites.json"), (64 << 10) + 1);
    let (favourites, _) = favourites_read(&mut show);
    assert_eq!(favourites, "[]");
    assert!(errors(&show).contains("65536"), "{}", errors(&show));
    // A FIFO: never opened, so no refresh waits on it.
    let (root, mut show, _) = plain_show("files_favourites_fifo", &[]);
    std::fs::create_dir_all(root.join("ui")).checked("ui/");
    mkfifo(&root.join("ui/favourites.json"));
    rescue(root.join("ui/favourites.json"), b"[\"/fifo\"]".to_vec());
    let (favourites, longest) = favourites_read(&mut show);
    assert!(longest < STALLED, "a refresh waited {longest:?} on a FIFO");
    assert_eq!(favourites, "[]");
    assert!(errors(&show).contains("FIFO"), "{}", errors(&show));
}

#[test]
fn writes_a_peer_triggers_never_follow_a_link_out_of_the_show_folder() {
    let outputs = "[[output]]\nname = \"a\"\nsize = [16, 8]\n";
    let files = [("outputs/good2.toml", outputs)];
    let (root, mut show, mut output) = plain_show("files_writes", &files);
    let away = outside(&root);
    let target = away.join("target.txt");
    let untouched = "not the show's\n";
    std::fs::write(&target, untouched).checked("the outside file");
    // The favourites a link to a file outside (even with --ui-pin the
    // command arrives as this).
    link(&target, &root.join("ui/favourites.json"));
    let kept = show.apply(Command::KeepFavourites("[\"/bin/echo pwned\"]".into()));
    assert!(kept.is_ok(), "the list itself is fine: {kept:?}");
    assert!(errors(&show).contains("symbolic link"), "{}", errors(&show));
    // A planted `.partial` link beside the outputs file.
    show.use_outputs("good2");
    link(&target, &root.join("outputs/good2.toml.partial"));
    let saved = show.apply(Command::SaveOutputs);
    assert!(saved.is_ok(), "{saved:?}: {}", errors(&show));
    let written = std::fs::symlink_metadata(root.join("outputs/good2.toml")).checked("good2");
    assert!(written.file_type().is_file(), "good2.toml is still a file");
    // A preset that is a link (saved at the next frame's start).
    link(&target, &root.join("presets/evil.toml"));
    show.apply(Command::SavePreset("evil".into()))
        .checked("asking for the save");
    frame(&mut show, &mut output, 1.0 / 60.0);
    assert!(errors(&show).contains("evil"), "{}", errors(&show));
    assert_eq!(
        std::fs::read_to_string(&target).checked("the outside file"),
        untouched,
        "a write went outside the show folder"
    );
    // A folder on the way that is a link: nothing lands outside.
    let (root, mut show, _) = plain_show("files_writes_folder", &[]);
    let away = outside(&root);
    link(&away, &root.join("ui"));
    show.apply(Command::KeepFavourites("[\"/a\"]".into())).ok();
    assert!(
        !away.join("favourites.json").exists(),
        "written through ui/"
    );
    assert!(errors(&show).contains("symbolic link"), "{}", errors(&show));
}

#[test]
fn an_outputs_file_or_mask_that_is_a_device_a_link_or_a_fifo_is_refused_without_a_stall() {
    let mask = "[[output]]\nname = \"a\"\nsize = [16, 8]\nmask = \"media/mask.png\"\n";
    let (root, mut show, mut output) = plain_show("files_outputs", &[("outputs/m.toml", mask)]);
    // outputs/zero.toml a link to a device.
    link(Path::new("/dev/null"), &root.join("outputs/zero.toml"));
    show.use_outputs("zero");
    assert!(errors(&show).contains("symbolic link"), "{}", errors(&show));
    // A mask that is a FIFO: the output runs unmasked, said, at once.
    std::fs::create_dir_all(root.join("media")).checked("media/");
    mkfifo(&root.join("media/mask.png"));
    rescue(root.join("media/mask.png"), b"not a picture".to_vec());
    let started = Instant::now();
    show.use_outputs("m");
    frame(&mut show, &mut output, 1.0 / 60.0);
    assert!(
        started.elapsed() < STALLED,
        "waited {:?}",
        started.elapsed()
    );
    assert!(show.outputs().is_some(), "{}", errors(&show));
    assert!(errors(&show).contains("FIFO"), "{}", errors(&show));
}

#[test]
fn a_point_cloud_named_over_osc_that_is_a_link_a_fifo_or_over_its_cap_is_refused() {
    use sylva::layers::colony::attractors::MAX_CLOUD_BYTES;
    let preset = "layers = [\"colony\"]\n[params]\n\"colony.attraction_count\" = 64\n\"colony.node_capacity\" = 256\n";
    let root = support::show_folder("files_cloud", &[("presets/c.toml", preset)]);
    let away = outside(&root);
    sparse(&away.join("huge.ply"), MAX_CLOUD_BYTES + 1);
    link(&away.join("huge.ply"), &root.join("assets/cloud.ply"));
    sparse(&root.join("assets/big.ply"), MAX_CLOUD_BYTES + 1);
    mkfifo(&root.join("assets/fifo.ply"));
    rescue(root.join("assets/fifo.ply"), b"ply\n".to_vec());
    let mut show = support::show(root, "c", OUTPUT_FORMAT);
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "files.output",
        [8, 8],
        OUTPUT_FORMAT,
    );
    for (name, says) in [
        ("fifo.ply", "FIFO"),
        ("cloud.ply", "symbolic link"),
        ("big.ply", &MAX_CLOUD_BYTES.to_string()[..]),
    ] {
        show.apply(Command::Set(
            "colony.attractors".into(),
            Value::Text(name.into()),
            Source::Osc("peer".into()),
        ))
        .checked("naming the cloud");
        // The cloud is read on a worker once the name has rested: its
        // refusal is said within a few frames, none of which waits for it.
        for _ in 0..30 {
            let took = frame(&mut show, &mut output, 0.1);
            assert!(took < STALLED, "{name}: a frame took {took:?}");
            if errors(&show).contains(says) {
                break;
            }
        }
        assert!(errors(&show).contains(says), "{name}: {}", errors(&show));
    }
}

#[test]
fn a_species_file_or_density_map_that_is_a_fifo_or_over_its_cap_is_refused() {
    let forest = |extra: &str| {
        format!(
            "layers = [\"forest\"]\n[params]\n\"forest.map_size\" = 16\n\"forest.initial_trees\" = 10\n\"forest.capacity\" = 64\n{extra}"
        )
    };
    let preset_big = forest("\"forest.species\" = \"big.toml\"\n");
    let preset_fifo = forest("\"forest.species\" = \"fifo.toml\"\n");
    let preset_map = forest("\"forest.density_maps\" = \"map.png\"\n");
    let root = support::show_folder(
        "files_forest",
        &[
            ("presets/big.toml", &preset_big),
            ("presets/fifo.toml", &preset_fifo),
            ("presets/map.toml", &preset_map),
        ],
    );
    let cap = sylva::base::MAX_FILE_BYTES;
    sparse(&root.join("assets/big.toml"), cap + 1);
    mkfifo(&root.join("assets/fifo.toml"));
    mkfifo(&root.join("assets/map.png"));
    let cap = cap.to_string();
    for (preset, fifo, says) in [
        ("big", None, cap.as_str()),
        ("fifo", Some("assets/fifo.toml"), "FIFO"),
        ("map", Some("assets/map.png"), "FIFO"),
    ] {
        if let Some(fifo) = fifo {
            rescue(root.join(fifo), b"[[species]]\n".to_vec());
        }
        let started = Instant::now();
        let mut show = support::show(root.clone(), preset, OUTPUT_FORMAT);
        let mut output = RenderTarget::new(
            &show.ground.gpu.device,
            "files.output",
            [8, 8],
            OUTPUT_FORMAT,
        );
        frame(&mut show, &mut output, 0.1);
        // Sown at the first frame: a forest refused for its species never
        // waited on the file (one whose map is refused builds in full).
        let took = started.elapsed();
        assert!(
            preset == "map" || took < STALLED,
            "{preset}: waited {took:?}"
        );
        assert!(errors(&show).contains(says), "{preset}: {}", errors(&show));
    }
}

#[test]
fn a_take_is_never_written_through_a_link_planted_under_its_names() {
    use sylva::outputs::send::record::Recording;
    use sylva::outputs::send::tap::{Frame, Sink};
    let root = support::show_folder("files_take", &[]);
    let away = outside(&root);
    let target = away.join("target.txt");
    let untouched = "not the show's\n";
    std::fs::write(&target, untouched).checked("the outside file");
    // The picture's part planted: refused before ffmpeg starts.
    link(&target, &root.join("recordings/take.part.video.mp4"));
    let started = Recording::start(&root.join("recordings/take.mp4"), [16, 16], 30.0, None);
    assert!(started.is_err(), "a take started through a planted link");
    drop(started);
    // The sound's part planted: the take fails, said.
    link(&target, &root.join("recordings/sound.part.sound.wav"));
    let (blocks, heard) = std::sync::mpsc::sync_channel(4);
    blocks
        .send((48_000, vec![0.25; 480]))
        .checked("a block of sound");
    let path = root.join("recordings/sound.mp4");
    let mut take = Recording::start(&path, [16, 16], 30.0, Some(heard)).checked("a take");
    let frame = Frame {
        size: [16, 16],
        rgba: vec![128; 16 * 16 * 4],
        time: 0.0,
    };
    take.send(&frame).checked("a frame");
    drop(blocks);
    let finished = take.finish();
    assert!(finished.is_err(), "{finished:?}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        std::fs::read_to_string(&target).checked("the outside file"),
        untouched,
        "a take was written outside the show folder"
    );
}
