//! Programs the show starts (ffmpeg, ffprobe, gst-launch): each child
//! process is held by one [`OwnedChild`], whose drop kills and reaps it,
//! so no child outlives what it was started for, blocked or spinning, and
//! none is left a zombie. [`run_within`] runs a program to its end within
//! a time limit (a probe of a FIFO or a hung network mount is killed, not
//! waited on for ever) and can be called off from another thread.

use std::io::Read;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};
use std::time::{Duration, Instant};

/// How often a child is looked at while one waits for it with a limit.
const POLL: Duration = Duration::from_millis(5);

/// A child process that is killed and reaped when this is dropped.
#[derive(Debug)]
pub struct OwnedChild {
    child: Child,
    /// Whether it was waited for to its end already.
    reaped: bool,
    /// How long a drop lets it end by itself before killing it.
    grace: Duration,
}

impl OwnedChild {
    /// Starts `command`.
    pub fn spawn(command: &mut Command) -> std::io::Result<Self> {
        Ok(Self {
            child: command.spawn()?,
            reaped: false,
            grace: Duration::ZERO,
        })
    }

    /// Lets it end by itself for up to `grace` when dropped, before it is
    /// killed: an encoder whose input was closed writes out its file.
    pub fn with_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Its standard input, if piped and not taken yet.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// Its standard output, if piped and not taken yet.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// Its standard error, if piped and not taken yet.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// Its process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// How it ended, if it has.
    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        let status = self.child.try_wait()?;
        self.reaped |= status.is_some();
        Ok(status)
    }

    /// Waits for it to end, however long that takes (an encoder writing
    /// out its file).
    pub fn wait(&mut self) -> std::io::Result<ExitStatus> {
        let status = self.child.wait()?;
        self.reaped = true;
        Ok(status)
    }

    /// Waits at most `limit` for it to end; `None` if it still runs.
    pub fn wait_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            match self.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL),
                _ => return None,
            }
        }
    }

    /// Kills it (if it still runs) and reaps it.
    pub fn kill(&mut self) {
        if !self.reaped {
            self.child.kill().ok();
            self.child.wait().ok();
            self.reaped = true;
        }
    }
}

impl Drop for OwnedChild {
    fn drop(&mut self) {
        if !self.reaped && !self.grace.is_zero() {
            self.wait_within(self.grace);
        }
        self.kill();
    }
}

/// Why a program run by [`run_within`] gave no result.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// It would not start.
    #[error("would not start: {0}")]
    Start(#[source] std::io::Error),
    /// It ran past its time and was killed.
    #[error("gave no answer in {} s and was stopped", .0.as_secs_f32())]
    TimedOut(Duration),
    /// Whoever asked no longer wants the answer; it was killed.
    #[error("called off")]
    CalledOff,
}

/// What a program printed, and how it ended.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// How it ended.
    pub status: ExitStatus,
    /// Its standard output, at most the bytes asked for.
    pub stdout: Vec<u8>,
    /// Its standard error, at most the bytes asked for.
    pub stderr: Vec<u8>,
}

/// Runs `command` on `stdin` to its end, keeping at most `max_bytes` of
/// each of its outputs (the rest is read and dropped, so it never blocks
/// on a full pipe); killed and reaped past `limit` or once `called_off`
/// is set.
pub fn run_within(
    command: &mut Command,
    stdin: Stdio,
    (limit, max_bytes): (Duration, usize),
    called_off: Option<&AtomicBool>,
) -> Result<RunOutput, RunError> {
    command
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = OwnedChild::spawn(command).map_err(RunError::Start)?;
    let stdout = child.take_stdout().map(|o| drain(o, max_bytes));
    let stderr = child.take_stderr().map(|e| drain(e, max_bytes));
    let deadline = Instant::now() + limit;
    let status = loop {
        if called_off.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(RunError::CalledOff);
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL),
            // Past the limit (or it cannot be waited for): the drop kills it.
            _ => return Err(RunError::TimedOut(limit)),
        }
    };
    // Its pipes close with it, unless a grandchild holds them: wait a
    // moment, not for ever.
    let collect = |read: Option<Receiver<Vec<u8>>>| {
        read.and_then(|r| r.recv_timeout(Duration::from_secs(1)).ok())
            .unwrap_or_default()
    };
    Ok(RunOutput {
        status,
        stdout: collect(stdout),
        stderr: collect(stderr),
    })
}

/// Reads `pipe` to its end on a thread of its own, keeping `max_bytes`.
fn drain(pipe: impl Read + Send + 'static, max_bytes: usize) -> Receiver<Vec<u8>> {
    let (send, kept) = sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("sylva child output".into())
        .spawn(move || {
            let mut pipe = pipe;
            let mut bytes = Vec::new();
            (&mut pipe)
                .take(max_bytes as u64)
                .read_to_end(&mut bytes)
                .ok();
            std::io::copy(&mut pipe, &mut std::io::sink()).ok();
            send.send(bytes).ok();
        });
    if spawned.is_err() {
        tracing::warn!("no thread to read a program's output; it is dropped");
    }
    kept
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// The Rust files under `dir`, but the tests compiled elsewhere.
    fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs")
                && path.file_name().is_some_and(|n| n != "tests.rs")
            {
                out.push(path);
            }
        }
    }

    #[test]
    fn every_program_the_show_starts_is_owned() {
        // `Command::spawn`, `output` and `status` hand back a child nobody
        // kills or reaps; only this module calls them. `status()` is also
        // an output's HUD lines: it counts only in a file that names a
        // `std::process` item.
        let mut files = Vec::new();
        sources(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut files,
        );
        let mut unowned = Vec::new();
        for file in files.iter().filter(|f| !f.ends_with("base/child.rs")) {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            let spawns = code.contains("process::");
            for call in [".spawn()", ".output()", ".status()"] {
                if code.contains(call) && (spawns || call != ".status()") {
                    unowned.push(format!("{}: {call}", file.display()));
                }
            }
        }
        assert!(
            unowned.is_empty(),
            "use OwnedChild or run_within: {unowned:?}"
        );
    }

    #[test]
    fn a_program_past_its_time_is_killed_and_reaped() {
        let started = Instant::now();
        let mut sleeper = Command::new("sleep");
        sleeper.arg("30");
        let limit = (Duration::from_millis(100), 64);
        let run = run_within(&mut sleeper, Stdio::null(), limit, None);
        assert!(matches!(run, Err(RunError::TimedOut(_))), "{run:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn output_is_kept_up_to_its_cap_and_the_rest_drained() {
        let mut yes = Command::new("head");
        yes.args(["-c", "1000000", "/dev/zero"]);
        let run = run_within(&mut yes, Stdio::null(), (Duration::from_secs(10), 16), None);
        assert!(run.is_ok_and(|r| r.status.success() && r.stdout.len() == 16));
    }

    #[test]
    fn a_dropped_child_is_killed_and_reaped() {
        let mut sleeper = Command::new("sleep");
        sleeper.arg("30");
        let Ok(child) = OwnedChild::spawn(&mut sleeper) else {
            panic!("sleep starts");
        };
        let pid = child.id();
        drop(child);
        // A reaped child has no /proc entry (a zombie still has one).
        let gone =
            !std::path::Path::new(&format!("/proc/{pid}")).exists() || !cfg!(target_os = "linux");
        assert!(gone, "child {pid} left behind");
    }
}
