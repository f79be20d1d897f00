//! The last of what a child process (ffmpeg, ffprobe) writes to its
//! error output, read on a thread of its own while it runs: the pipe never
//! fills and blocks the child, an encoder that complains every frame never
//! fills memory (only the last [`TAIL_BYTES`] are kept), and what it said
//! is there to check when it ends. ffmpeg can exit 0 after "No space left
//! on device"; its words are how a take that failed is told from one that
//! did not.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Bytes of the error output kept: the last lines, enough for ffmpeg's
/// error and the lines before it.
pub const TAIL_BYTES: usize = 4096;

/// What a child wrote to its error output, the last of it.
#[derive(Debug)]
pub struct StderrTail {
    kept: Arc<Mutex<VecDeque<u8>>>,
    /// Closes when the output ends (the child exited).
    ended: Option<Receiver<()>>,
}

impl StderrTail {
    /// Reads `output` until it ends; none (not piped): nothing to read.
    pub fn read(output: Option<impl Read + Send + 'static>) -> Self {
        let kept = Arc::new(Mutex::new(VecDeque::new()));
        let Some(mut output) = output else {
            return Self { kept, ended: None };
        };
        let (tell, ended) = channel::<()>();
        let into = kept.clone();
        let spawned = std::thread::Builder::new()
            .name("sylva-stderr".into())
            .spawn(move || {
                let mut chunk = [0u8; 1024];
                while let Ok(n @ 1..) = output.read(&mut chunk) {
                    let mut kept = into.lock().unwrap_or_else(PoisonError::into_inner);
                    kept.extend(&chunk[..n]);
                    let over = kept.len().saturating_sub(TAIL_BYTES);
                    kept.drain(..over);
                }
                drop(tell);
            });
        // Without a thread the pipe's read end is dropped here: the child
        // writing to it gets an error, not a wait (ffmpeg ignores SIGPIPE).
        Self {
            kept,
            ended: spawned.is_ok().then_some(ended),
        }
    }

    /// What it said, trimmed, once its output ended or `wait` has passed.
    pub fn said(&self, wait: Duration) -> String {
        if let Some(ended) = &self.ended {
            // Disconnected once the reader is done; a timeout leaves what
            // it has read so far.
            ended.recv_timeout(wait).ok();
        }
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let bytes: Vec<u8> = kept.iter().copied().collect();
        String::from_utf8_lossy(&bytes).trim().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_last_bytes_are_kept() {
        let mut text = "x".repeat(1_000_000).into_bytes();
        text.extend_from_slice(b"\nNo space left on device\n");
        let tail = StderrTail::read(Some(std::io::Cursor::new(text)));
        let said = tail.said(Duration::from_secs(5));
        assert!(said.len() <= TAIL_BYTES, "{} bytes", said.len());
        assert!(said.ends_with("No space left on device"), "{said:?}");
        let quiet = StderrTail::read(None::<std::io::Empty>);
        assert_eq!(quiet.said(Duration::ZERO), "");
    }
}
