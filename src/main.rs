//! The `sylva` command line: parses arguments with clap and hands over to
//! the library. `sylva` with no arguments plays the default show (the
//! playlist `default`) in a window.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use sylva::base::Assets;
use sylva::control::ControlOptions;
use sylva::drivers::bench::{self, BenchOptions};
use sylva::drivers::cli::{AnalysisArgs, FolderArgs, ListenArgs, ShowArgs};
use sylva::drivers::headless::{self, HeadlessOptions, RenderOptions, parse_size};
use sylva::drivers::thumbs::ThumbsOptions;
use sylva::drivers::whole_frame::{self, WholeFrameOptions};
use sylva::drivers::window::{self, NoDisplay, WindowOptions};
use sylva::outputs::send::{RecordOptions, SendOptions};
use sylva::show::installation::{InstallOptions, Schedule};
use sylva::tools::ToolVerb;
use sylva::tools::{run_tool, tools_command};

/// A live-coding and VJ runtime: GPU simulation layers choreographed by Lua
/// and WGSL, played from MIDI and OSC.
#[derive(Parser)]
#[command(name = "sylva", version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<CliCommand>,
    /// Without a subcommand, `sylva` takes the options of `sylva run`.
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum CliCommand {
    /// Run the show in a window (the default), or headless.
    Run(RunArgs),
    /// Play a playlist; with --install, as an installation left running for weeks.
    Play(PlayArgs),
    /// Render frames to PNG files without a window, deterministically.
    Render(RenderArgs),
    /// Measure a layer's GPU time per pass at several sizes.
    Bench(BenchArgs),
    /// Validate every shader, script and preset without a window; exit 1 on any problem.
    Check(CheckArgs),
    /// List the show's ISF and Shadertoy shaders with their inputs and whether each compiles.
    Shaders(ShadersArgs),
    /// Render each preset's thumbnail into presets/thumbs/NAME.png (the phone page's preset buttons show them).
    Thumbs(ThumbsArgs),
    /// What a glTF file holds (meshes, joints, clips); with --obj, its mesh skinned at a time.
    Asset(sylva::layers::skinned::asset::AssetArgs),
}

#[derive(Args)]
struct CheckArgs {
    /// Show folder to check (its files and the built-in ones they override).
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
    #[command(flatten)]
    folders: FolderArgs,
}

#[derive(Args)]
struct ShadersArgs {
    /// Show folder whose shaders to list (its files and the built-in ones).
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
}

#[derive(Args)]
struct ThumbsArgs {
    /// Presets to picture (default: every preset in presets/).
    #[arg(value_name = "PRESET")]
    names: Vec<String>,
    #[command(flatten)]
    show: ShowArgs,
    /// Seconds of show time before the picture is taken.
    #[arg(long, default_value_t = 8.0)]
    at: f32,
    /// Frames a second played until then.
    #[arg(long, default_value_t = 30.0)]
    fps: f32,
    /// The pictures' size.
    #[arg(long, value_name = "WxH", default_value = "384x216", value_parser = parse_size)]
    size: [u32; 2],
}

#[derive(Args)]
struct PlayArgs {
    /// Playlist in presets/playlists/ (without .toml).
    // An id of its own: the show's `--playlist` holds "playlist", and clap
    // asserts (in debug builds) that no two arguments share one.
    #[arg(id = "play_playlist", value_name = "PLAYLIST", default_value = sylva::drivers::cli::DEFAULT_PLAYLIST)]
    playlist: String,
    /// Installation mode: fullscreen on --monitor, no cursor, no HUD; errors go to the log
    /// files and /sylva/status; resumes from the state file after a crash; a lost GPU
    /// device is recreated.
    #[arg(long)]
    install: bool,
    /// State file to resume from and keep current [installation default:
    /// <project>/state/<playlist>.toml].
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// On air only between these local times, black between, e.g. 10:00-22:00 or 20:00-02:00.
    #[arg(long, value_name = "HH:MM-HH:MM")]
    schedule: Option<Schedule>,
    /// Also write the log to DIR/sylva.log.<date>, a new file each day, two weeks kept
    /// [installation default: <project>/logs].
    #[arg(long, value_name = "DIR")]
    log: Option<PathBuf>,
    #[command(flatten)]
    run: RunArgs,
}

impl PlayArgs {
    /// The folder for log files, if the log goes to files.
    fn log_dir(&self) -> Option<PathBuf> {
        self.log
            .clone()
            .or_else(|| self.install.then(|| self.run.show.project.join("logs")))
    }

    /// The run these arguments ask for.
    fn into_run(self) -> (RunArgs, InstallOptions) {
        let state_file = self.state.clone().or_else(|| {
            self.install.then(|| {
                self.run
                    .show
                    .project
                    .join("state")
                    .join(format!("{}.toml", self.playlist))
            })
        });
        let install = InstallOptions {
            unattended: self.install,
            state_file,
            schedule: self.schedule,
        };
        let mut run = self.run;
        run.show.playlist = Some(self.playlist);
        (run, install)
    }
}

#[derive(Args, Clone)]
struct RunArgs {
    #[command(flatten)]
    show: ShowArgs,
    /// Start in borderless fullscreen.
    #[arg(long)]
    fullscreen: bool,
    /// Monitor for fullscreen, by index.
    #[arg(long, value_name = "N")]
    monitor: Option<usize>,
    /// Present as fast as possible instead of at the display's refresh.
    #[arg(long)]
    no_vsync: bool,
    /// Run without a window, into an offscreen target.
    #[arg(long)]
    headless: bool,
    /// Headless: stop after this many seconds.
    #[arg(long, value_name = "SECONDS", requires = "headless")]
    exit_after: Option<f64>,
    /// Headless: stop after this many frames.
    #[arg(long, value_name = "N", requires = "headless")]
    frames: Option<u64>,
    /// Headless: run as fast as possible with a fixed dt of 1/fps.
    #[arg(long, requires = "headless")]
    unpaced: bool,
    /// Headless: offscreen target size.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = parse_size)]
    size: [u32; 2],
    /// Headless: frame rate.
    #[arg(long, default_value_t = 60.0)]
    fps: f32,
    #[command(flatten)]
    control: ControlArgs,
    #[command(flatten)]
    listen: ListenArgs,
    #[command(flatten)]
    send: SendArgs,
    #[command(flatten)]
    ensemble: EnsembleArgs,
}

/// Several machines, one show.
#[derive(Args, Clone)]
struct EnsembleArgs {
    /// Lead other machines of one show: followers connect to this TCP port ([ADDRESS:]PORT) and draw every frame this show draws, with its performers' changes.
    #[arg(long, value_name = "[ADDRESS:]PORT", value_parser = sylva::show::ensemble::parse_lead, conflicts_with = "follow")]
    lead: Option<std::net::SocketAddr>,
    /// Follow the leader at HOST:PORT: draw its frames, its clock and its performers' changes, started with the same show arguments (an outputs file picks this machine's part of the canvas).
    #[arg(long, value_name = "HOST:PORT", value_parser = sylva::show::ensemble::parse_leader)]
    follow: Option<std::net::SocketAddr>,
    /// Headless: write frames as DIR/frame_N.png, N the show's frame number (the same on every machine of an ensemble), and each output's in DIR/<output>/.
    #[arg(long, value_name = "DIR", requires = "headless")]
    frames_to: Option<PathBuf>,
    /// With --frames-to: only frames whose number is a multiple of N.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "frames_to")]
    frames_every: u32,
}

impl EnsembleArgs {
    fn role(&self) -> Option<sylva::show::ensemble::Role> {
        use sylva::show::ensemble::Role;
        self.lead.map(Role::Lead).or(self.follow.map(Role::Follow))
    }
}

/// `--send`'s help: every kind of target there is.
fn send_help() -> String {
    let forms: Vec<&str> = sylva::outputs::send::SENDERS
        .iter()
        .map(|k| k.form)
        .collect();
    format!(
        "Send the canvas (or OUTPUT=TARGET: one output) to {}; repeatable",
        forms.join(", ")
    )
}

/// Where the picture goes besides the screen.
#[derive(Args, Clone)]
struct SendArgs {
    // Its help names every sender of `SENDERS`, so it never goes stale.
    #[arg(long, value_name = "TARGET", help = send_help())]
    send: Vec<String>,
    /// Record the performance into FILE (mp4, with the audio input as its sound) from the start; record.on starts and stops takes.
    #[arg(long, value_name = "FILE")]
    record: Option<std::path::PathBuf>,
    /// Record this output of the outputs file instead of the canvas.
    #[arg(long, value_name = "NAME")]
    record_output: Option<String>,
}

impl SendArgs {
    fn options(&self) -> SendOptions {
        SendOptions {
            sends: self.send.clone(),
            record: RecordOptions {
                path: self.record.clone(),
                output: self.record_output.clone(),
                now: self.record.is_some(),
            },
        }
    }
}

/// MIDI and OSC.
#[derive(Args, Clone)]
struct ControlArgs {
    /// Open only MIDI inputs whose name contains NAME (default: all).
    #[arg(long, value_name = "NAME")]
    midi: Option<String>,
    /// Do not open MIDI ports.
    #[arg(long)]
    no_midi: bool,
    /// UDP port for OSC.
    #[arg(long, default_value_t = 9000)]
    osc_port: u16,
    /// Address OSC and OSCQuery listen on.
    #[arg(long, default_value = "0.0.0.0")]
    osc_bind: String,
    /// Send parameter changes to HOST:PORT (repeatable), e.g. a TouchDesigner OSC In CHOP.
    #[arg(long, value_name = "HOST:PORT")]
    osc_out: Vec<std::net::SocketAddr>,
    /// Send the show's timecode here when master.timecode_out is artnet (default: Art-Net broadcast, 255.255.255.255:6454).
    #[arg(long, value_name = "HOST:PORT")]
    timecode_to: Option<std::net::SocketAddr>,
    /// HTTP port for OSCQuery.
    #[arg(long, default_value_t = 9001)]
    oscquery_port: u16,
    /// Do not listen for OSC or serve OSCQuery.
    #[arg(long)]
    no_osc: bool,
    /// Advertise OSCQuery (_oscjson._tcp) and OSC (_osc._udp) over zeroconf/mDNS.
    #[arg(long)]
    zeroconf: bool,
    /// Accept OSC and OSCQuery only from this network (repeatable), e.g. 192.168.1.0/24 or 10.0.0.7.
    #[arg(long, value_name = "CIDR")]
    osc_allow: Vec<sylva::control::allow::Network>,
    /// Ask the phone page (and any WebSocket client) for this PIN once per device before it may write or LISTEN: 4 to 12 digits (6 or more for a long show) or a passphrase of 8 to 64 characters.
    #[arg(long, value_name = "PIN", value_parser = parse_pin)]
    ui_pin: Option<String>,
    /// Let a page served from URL (e.g. http://192.168.1.5:8000, a patch's own web UI) open the WebSocket besides the show's own page (repeatable).
    #[arg(long, value_name = "URL")]
    allow_origin: Vec<sylva::control::oscquery::Origin>,
}

/// A `--ui-pin` the OSCQuery server will take.
fn parse_pin(text: &str) -> Result<String, sylva::control::oscquery::PinError> {
    sylva::control::oscquery::Pin::new(text).map(|_| text.to_string())
}

impl ControlArgs {
    fn options(&self) -> ControlOptions {
        ControlOptions {
            midi: !self.no_midi,
            midi_filter: self.midi.clone(),
            osc_bind: self.osc_bind.clone(),
            osc_port: (!self.no_osc).then_some(self.osc_port),
            osc_out: self.osc_out.clone(),
            timecode_to: (self.timecode_to).unwrap_or(sylva::control::timecode::TIMECODE_TO),
            oscquery_port: (!self.no_osc).then_some(self.oscquery_port),
            zeroconf: self.zeroconf,
            allow: sylva::control::allow::AllowList::new(self.osc_allow.clone()),
            ui_pin: self.ui_pin.clone(),
            allow_origins: self.allow_origin.clone(),
            thumbs: None,
        }
    }
}

#[derive(Args)]
struct RenderArgs {
    #[command(flatten)]
    show: ShowArgs,
    /// Number of frames to write (default 60; with --audio, the whole sound).
    #[arg(long)]
    frames: Option<u32>,
    /// Frame size.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = parse_size)]
    size: [u32; 2],
    /// Output folder for frame_00000.png and onward.
    #[arg(long, value_name = "DIR", required_unless_present = "video")]
    out: Option<PathBuf>,
    /// Hear this sound file (WAV, FLAC, MP3, Ogg) in step with the frames: frame n hears it at n / fps. Without a preset, the default show plays.
    #[arg(long, value_name = "FILE")]
    audio: Option<PathBuf>,
    /// Encode the frames (and the sound of --audio) into this video with ffmpeg, which must be on the PATH.
    #[arg(long, value_name = "FILE")]
    video: Option<PathBuf>,
    #[command(flatten)]
    analysis: AnalysisArgs,
    /// Frames per second; each frame advances exactly 1/fps seconds.
    #[arg(long, default_value_t = 60.0)]
    fps: f32,
    /// Write only every N-th frame (named by its frame number): a time-lapse of a long show.
    #[arg(long, value_name = "N", default_value_t = 1)]
    every: u32,
}

#[derive(Args)]
struct BenchArgs {
    #[command(flatten)]
    show: ShowArgs,
    /// Layer id to measure, e.g. shader.aurora; `audio` times the audio analysis on the CPU (sizes: FFT windows, steps: hops).
    #[arg(long, required_unless_present = "whole_frame")]
    layer: Option<String>,
    /// Sizes in the layer's unit, comma-separated (shader layers: output height in pixels).
    #[arg(long, value_delimiter = ',', required_unless_present = "whole_frame")]
    sizes: Vec<u32>,
    /// Time every pass of a preset's (or playlist's) frames as the show plays them, the whole frame, and the unpaced frame rate (default size 1920x1080).
    #[arg(long, conflicts_with_all = ["layer", "sizes"])]
    whole_frame: bool,
    /// With --whole-frame: frames played before measuring (show time at 60 fps).
    #[arg(long, default_value_t = 180)]
    warm_up: usize,
    /// Frames measured per size, after a warm-up.
    #[arg(long, default_value_t = 200)]
    steps: usize,
    /// Set a parameter before measuring: --set shader.aurora.speed=2 (repeatable).
    #[arg(long, value_name = "PARAM=VALUE")]
    set: Vec<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// With --layer: also list each measured frame's passes in the JSON (`timeline`), to see which steps are the busiest and why.
    #[arg(long)]
    per_frame: bool,
    /// Output size instead of the layer's default.
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    resolution: Option<[u32; 2]>,
}

/// Logs to stderr, and with `log_dir` also to a file a day there (two
/// weeks kept, so a show running for months never fills the disk);
/// `quieted`: Mesa's device-select layer was left out.
fn start_logging(log_dir: Option<&std::path::Path>, quieted: bool) {
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = || {
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
            tracing_subscriber::EnvFilter::new("info,wgpu_core=warn,wgpu_hal=warn,naga=warn")
        })
    };
    let files = log_dir.and_then(|dir| {
        if let Err(error) = std::fs::create_dir_all(dir) {
            eprintln!("sylva: cannot log to {}: {error}", dir.display());
            return None;
        }
        tracing_appender::rolling::Builder::new()
            .rotation(tracing_appender::rolling::Rotation::DAILY)
            .filename_prefix("sylva")
            .filename_suffix("log")
            .max_log_files(14)
            .build(dir)
            .inspect_err(|e| eprintln!("sylva: cannot log to {}: {e}", dir.display()))
            .ok()
    });
    let to_file = files.map(|files| {
        tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(files)
            .with_filter(filter())
    });
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .with_writer(std::io::stderr)
                .with_filter(filter()),
        )
        .with(to_file)
        .init();
    if quieted {
        tracing::debug!(
            "XDG_RUNTIME_DIR unset or relative: no Wayland, Mesa's device-select layer left out"
        );
    }
}

/// Leaves Mesa's device-selection Vulkan layer out where no Wayland
/// display can be reached (see [`sylva::gpu::skip_device_select`]), so a
/// start with `XDG_RUNTIME_DIR` unset (a service, `su`, ssh) prints no
/// stray `XDG_RUNTIME_DIR is invalid` lines; whether it did.
#[cfg(target_os = "linux")]
fn quiet_device_select() -> bool {
    let skip = sylva::gpu::skip_device_select(|name| std::env::var_os(name));
    if skip {
        // SAFETY: called first in `main`, before any thread exists, so
        // nothing reads the environment while it changes.
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
    skip
}

#[cfg(not(target_os = "linux"))]
fn quiet_device_select() -> bool {
    false
}

fn main() -> ExitCode {
    let quieted = quiet_device_select();
    // The layer kinds add their own tools under `export` and `validate`.
    let matches = ToolVerb::ALL
        .into_iter()
        .fold(Cli::command(), |cli, verb| {
            cli.subcommand(tools_command(verb))
        })
        .get_matches();
    let tool = ToolVerb::ALL
        .into_iter()
        .find_map(|verb| Some((verb, matches.subcommand_matches(verb.name())?)));
    let result = match tool {
        Some((verb, matches)) => {
            start_logging(None, quieted);
            run_tool(verb, matches)
        }
        None => match Cli::from_arg_matches(&matches) {
            Ok(cli) => {
                let log_dir = match &cli.command {
                    Some(CliCommand::Play(play)) => play.log_dir(),
                    _ => None,
                };
                start_logging(log_dir.as_deref(), quieted);
                run_cli(cli)
            }
            Err(error) => error.exit(),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.is::<NoDisplay>() => {
            eprintln!("sylva: {error}");
            ExitCode::from(2)
        }
        Err(error) => {
            eprintln!("sylva: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_cli(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        None => run(cli.run.default_show(), InstallOptions::default()),
        Some(CliCommand::Run(args)) => run(args.default_show(), InstallOptions::default()),
        Some(CliCommand::Play(args)) => {
            let (args, install) = args.into_run();
            run(args, install)
        }
        Some(CliCommand::Render(args)) => {
            let show = match &args.audio {
                Some(_) => args.show.or_default_show(),
                None => args.show,
            };
            let mut options = show.options(false);
            options.analysis = args.analysis.settings();
            if let Some(file) = &args.audio {
                options.audio = sylva::show::AudioChoice::File(file.clone());
            }
            headless::render(&RenderOptions {
                show: options,
                frames: args.frames,
                size: args.size,
                out: args.out,
                fps: args.fps,
                every: args.every,
                video: args.video,
            })
        }
        Some(CliCommand::Bench(args)) => bench_command(args),
        Some(CliCommand::Check(args)) => check_command(&args),
        Some(CliCommand::Shaders(args)) => {
            let entries = sylva::layers::shader::isf::library::entries(&Assets::new(&args.project));
            for entry in &entries {
                println!("{}", sylva::layers::shader::isf::library::describe(entry));
            }
            let compiling = entries.iter().filter(|e| e.problem.is_none()).count();
            println!("{compiling} of {} shaders compile", entries.len());
            Ok(())
        }
        Some(CliCommand::Thumbs(args)) => sylva::drivers::thumbs::thumbs(&ThumbsOptions {
            show: args.show.options(false),
            presets: args.names,
            at: args.at,
            fps: args.fps,
            size: args.size,
        })
        .map(|_| ()),
        Some(CliCommand::Asset(args)) => sylva::layers::skinned::asset::run(&args),
    }
}

impl RunArgs {
    /// These arguments, playing the default show when they name neither a
    /// preset nor a playlist.
    fn default_show(mut self) -> Self {
        self.show = self.show.or_default_show();
        self
    }
}

fn run(args: RunArgs, install: InstallOptions) -> anyhow::Result<()> {
    let mut show = args.show.options(true);
    args.listen.apply(&mut show);
    let ensemble = args.ensemble.role();
    // Machines of one show draw the same frames only when each draws
    // exactly (`sylva render`'s rules).
    show.exact |= ensemble.is_some();
    if args.headless {
        return headless::run(&HeadlessOptions {
            show,
            size: args.size,
            exit_after: args.exit_after,
            frames: args.frames,
            unpaced: args.unpaced,
            fps: args.fps,
            control: Some(args.control.options()),
            install,
            send: args.send.options(),
            ensemble,
            frames_to: (args.ensemble.frames_to).map(|dir| (dir, args.ensemble.frames_every)),
        });
    }
    window::run(WindowOptions {
        show,
        fullscreen: args.fullscreen,
        monitor: args.monitor,
        vsync: !args.no_vsync,
        control: args.control.options(),
        install,
        send: args.send.options(),
        ensemble,
    })
}

fn check_command(args: &CheckArgs) -> anyhow::Result<()> {
    let mut assets = Assets::new(&args.project);
    for (folder, dir) in args.folders.list() {
        assets = assets.with_folder(folder, dir);
    }
    let report = sylva::show::check::run(&assets);
    for problem in &report.problems {
        eprintln!("{problem}\n");
    }
    for warning in &report.warnings {
        eprintln!("warning: {warning}\n");
    }
    println!("{}", report.summary());
    if report.problems.is_empty() {
        Ok(())
    } else {
        anyhow::bail!("{}", report.summary())
    }
}

fn bench_command(args: BenchArgs) -> anyhow::Result<()> {
    if args.whole_frame {
        let report = whole_frame::run(&WholeFrameOptions {
            show: args.show.options(false),
            resolution: args.resolution.unwrap_or([1920, 1080]),
            steps: args.steps,
            warm_up: args.warm_up,
            set: args.set.clone(),
        })?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print!("{}", whole_frame::table(&report));
        }
        return Ok(());
    }
    let layer = args.layer.unwrap_or_default();
    if layer == "audio" {
        let times = sylva::audio::bench::run(&args.sizes, args.steps)?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&times)?);
        } else {
            print!("{}", sylva::audio::bench::table(&times));
        }
        return Ok(());
    }
    let report = bench::run(&BenchOptions {
        show: args.show.options(false),
        layer,
        sizes: args.sizes,
        steps: args.steps,
        set: args.set,
        resolution: args.resolution,
        timeline: args.per_frame,
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", bench::table(&report));
    }
    Ok(())
}
