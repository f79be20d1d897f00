//! A recording's take checked once it is written: the file is there and
//! not empty, ffprobe reads its video stream (given [`PROBE_TIMEOUT`], then
//! killed and reaped) without an error, and the stream holds the frames
//! that were written into it. ffmpeg can exit 0 on a full disk with the
//! file's index never written; a take that does not play is a failure on
//! screen and in the log, never "recorded".

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::base::child::{RunError, run_within};

/// How long ffprobe may take to read a take's header (it reads the index,
/// not the frames: milliseconds, whatever the take's length).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Bytes of ffprobe's answer and of its error output kept: a number, and
/// the first lines of what went wrong.
const ANSWER_BYTES: usize = 4096;

/// Why a take does not play.
#[derive(Debug, thiserror::Error)]
pub enum TakeError {
    /// No file where the take was written.
    #[error("the take {} is not there: {error}", .path.display())]
    Missing {
        /// The take.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The file is empty.
    #[error("the take {} is empty", .0.display())]
    Empty(PathBuf),
    /// ffprobe failed on it, or said an error.
    #[error("the take {} does not play (ffprobe: {said})", .path.display())]
    DoesNotPlay {
        /// The take.
        path: PathBuf,
        /// What ffprobe said ("no video" when nothing).
        said: String,
    },
    /// It holds fewer frames than were written.
    #[error("the take {} holds {held} of the {frames} frames written", .path.display())]
    Short {
        /// The take.
        path: PathBuf,
        /// Frames in it.
        held: u64,
        /// Frames written.
        frames: u64,
    },
    /// ffprobe gave no answer.
    #[error("the take {} could not be checked: ffprobe {error}", .path.display())]
    Unchecked {
        /// The take.
        path: PathBuf,
        /// Why.
        error: RunError,
    },
}

/// Whether the take at `path`, `frames` frames written into it, plays:
/// why not, if not. ffprobe missing: not checked.
pub fn check(ffprobe: &OsString, path: &Path, frames: u64) -> Result<(), TakeError> {
    let size = std::fs::metadata(path)
        .map_err(|error| TakeError::Missing {
            path: path.to_path_buf(),
            error,
        })?
        .len();
    if size == 0 {
        return Err(TakeError::Empty(path.to_path_buf()));
    }
    let mut command = Command::new(ffprobe);
    command
        .args(["-v", "error", "-select_streams", "v:0"])
        .args(["-show_entries", "stream=nb_frames"])
        .args(["-of", "default=nw=1:nk=1"])
        .arg(path);
    let Some((ok, answer, said)) = probe(command, path, PROBE_TIMEOUT)? else {
        return Ok(());
    };
    if !ok || !said.is_empty() {
        return Err(TakeError::DoesNotPlay {
            path: path.to_path_buf(),
            said: if said.is_empty() {
                "no video".to_string()
            } else {
                said
            },
        });
    }
    // Containers without a frame count in their index (Matroska) say N/A:
    // that they were read without an error is what is known.
    if let Ok(held) = answer.trim().parse::<u64>()
        && held < frames
    {
        return Err(TakeError::Short {
            path: path.to_path_buf(),
            held,
            frames,
        });
    }
    Ok(())
}

/// The exit, answer (the video stream's frame count) and error output of
/// `command`, ffprobe reading `path`, given `timeout` (then killed and
/// reaped); none when there is no ffprobe.
fn probe(
    mut command: Command,
    path: &Path,
    timeout: Duration,
) -> Result<Option<(bool, String, String)>, TakeError> {
    let ran = run_within(&mut command, Stdio::null(), (timeout, ANSWER_BYTES), None);
    match ran {
        Ok(output) => Ok(Some((
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).trim().to_string(),
        ))),
        Err(RunError::Start(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            crate::base::status::warn_held(
                "recording",
                "no ffprobe on the PATH: takes are not checked",
            );
            Ok(None)
        }
        Err(error) => Err(TakeError::Unchecked {
            path: path.to_path_buf(),
            error,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ffprobe() -> OsString {
        crate::outputs::video::FfmpegTools::default().ffprobe
    }

    #[test]
    fn an_empty_or_missing_take_has_failed() {
        let dir = std::env::temp_dir().join(format!("sylva-take-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder");
        let empty = dir.join("empty.mp4");
        std::fs::write(&empty, b"").expect("a file");
        let error = check(&ffprobe(), &empty, 10).expect_err("empty");
        assert!(error.to_string().contains("empty"), "{error}");
        let error = check(&ffprobe(), &dir.join("none.mp4"), 10).expect_err("missing");
        assert!(error.to_string().contains("not there"), "{error}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[cfg(unix)]
    #[test]
    fn a_prober_that_never_answers_is_killed_and_reaped() {
        // As ffprobe blocked on a FIFO would.
        let mut hang = Command::new("sleep");
        hang.arg("60");
        let start = std::time::Instant::now();
        let error =
            probe(hang, Path::new("take.mp4"), Duration::from_millis(200)).expect_err("given up");
        assert!(start.elapsed() < Duration::from_secs(5), "{error}");
        assert!(error.to_string().contains("no answer"), "{error}");
    }

    #[test]
    fn a_take_that_ffmpeg_finished_plays_and_a_cut_one_does_not() {
        let dir = std::env::temp_dir().join(format!("sylva-take-cut-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder");
        let take = dir.join("take.mp4");
        let tools = crate::outputs::video::FfmpegTools::default();
        let mut writer =
            crate::outputs::video::VideoWriter::start_with(&tools, &take, [32, 16], 30.0, None)
                .expect("ffmpeg starts");
        for _ in 0..10 {
            writer.frame(&[128; 32 * 16 * 4]).expect("a frame");
        }
        writer.finish().expect("ffmpeg finishes");
        check(&tools.ffprobe, &take, 10).expect("the take plays");
        // More frames written than it holds.
        let error = check(&tools.ffprobe, &take, 11).expect_err("short");
        assert!(error.to_string().contains("holds 10 of the 11"), "{error}");
        // Its index lost (the end of the file never written).
        let bytes = std::fs::read(&take).expect("the take");
        std::fs::write(&take, &bytes[..bytes.len() / 2]).expect("cut");
        let error = check(&tools.ffprobe, &take, 10).expect_err("cut");
        assert!(error.to_string().contains("does not play"), "{error}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
