//! The error log the performer sees: the last errors from shaders, presets,
//! the GPU and (later) scripts, kept for the HUD's error panel and written to
//! the log as they arrive. Shared between threads because wgpu reports
//! uncaptured errors from wherever they happen.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How many errors the panel keeps.
const KEPT: usize = 16;

/// Characters of an error message kept and logged: enough for a shader
/// error with its source line and caret, never a planted megabyte.
pub const MAX_MESSAGE_CHARS: usize = 4_000;

/// Characters of an origin kept.
const MAX_ORIGIN_CHARS: usize = 200;

/// Error lines written to the log per second at most, across every show
/// and thread; the panel still shows each newest error.
const LOG_LINES_PER_SECOND: u32 = 20;

/// Whether another error line fits this second's budget; when a second
/// that dropped lines ends, one line says how many.
fn log_budget() -> bool {
    static WINDOW: Mutex<(Option<Instant>, u32, u64)> = Mutex::new((None, 0, 0));
    let mut window = WINDOW.lock().unwrap_or_else(PoisonError::into_inner);
    let (start, written, dropped) = &mut *window;
    if start.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
        if *dropped > 0 {
            tracing::warn!(
                "{dropped} error lines left out of the log (at most {LOG_LINES_PER_SECOND} a second)"
            );
        }
        (*start, *written, *dropped) = (Some(Instant::now()), 0, 0);
    }
    if *written >= LOG_LINES_PER_SECOND {
        *dropped += 1;
        return false;
    }
    *written += 1;
    true
}

/// `text` cut to `limit` characters, with a note of what was cut.
pub fn truncated(text: String, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((cut, _)) => format!("{}… ({} more bytes)", &text[..cut], text.len() - cut),
        None => text,
    }
}

/// One reported problem.
#[derive(Debug, Clone)]
pub struct ShowError {
    /// What the error concerns: a file name, a layer id, `"gpu"`.
    pub origin: String,
    /// The message, possibly several lines (file:line, source line, caret).
    pub message: String,
    /// When it was reported.
    pub at: Instant,
}

type Errors = Arc<Mutex<VecDeque<ShowError>>>;

/// Recent errors, newest last. Cloning shares the same log.
#[derive(Debug, Clone, Default)]
pub struct ErrorLog {
    inner: Errors,
    parent: Option<Errors>,
}

impl ErrorLog {
    /// A log of its own that also shows `parent`'s errors: a show's log
    /// over its device's, so several shows on one device (tests, bench)
    /// keep their own errors while device errors reach all of them.
    pub fn child_of(parent: &ErrorLog) -> Self {
        Self {
            inner: Errors::default(),
            parent: Some(parent.inner.clone()),
        }
    }

    /// Records an error under `origin`, replacing an earlier one with the
    /// same origin so a shader that fails on every save shows once.
    pub fn report(&self, origin: impl Into<String>, message: impl ToString) {
        let origin = truncated(origin.into(), MAX_ORIGIN_CHARS);
        let message = truncated(message.to_string(), MAX_MESSAGE_CHARS);
        let mut errors = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        // The same error again within a second is not logged again: a
        // flood of one bad request must not flood the log.
        let repeat = errors.iter().any(|e| {
            e.origin == origin && e.message == message && e.at.elapsed() < Duration::from_secs(1)
        });
        if repeat {
            return;
        }
        if log_budget() {
            tracing::error!("{origin}: {message}");
        }
        errors.retain(|e| e.origin != origin);
        errors.push_back(ShowError {
            origin,
            message,
            at: Instant::now(),
        });
        while errors.len() > KEPT {
            errors.pop_front();
        }
    }

    /// Removes the error of `origin`, once it has been fixed.
    pub fn clear(&self, origin: &str) {
        let mut errors = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let before = errors.len();
        errors.retain(|e| e.origin != origin);
        if errors.len() != before {
            tracing::info!("{origin}: fixed");
        }
    }

    /// The current errors (the parent's first), oldest first.
    pub fn snapshot(&self) -> Vec<ShowError> {
        let mut all = Vec::new();
        for log in self.parent.iter().chain(std::iter::once(&self.inner)) {
            let errors = log.lock().unwrap_or_else(PoisonError::into_inner);
            all.extend(errors.iter().cloned());
        }
        all
    }

    /// Whether an error is shown for `origin`.
    pub fn has(&self, origin: &str) -> bool {
        self.snapshot().iter().any(|e| e.origin == origin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_of_errors_is_bounded_on_screen_and_in_the_log() {
        let errors = ErrorLog::default();
        for i in 0..1_000 {
            errors.report(format!("origin {i}"), "x".repeat(10_000));
        }
        let shown = errors.snapshot();
        assert_eq!(shown.len(), KEPT);
        assert!(
            shown
                .iter()
                .all(|e| e.message.chars().count() < MAX_MESSAGE_CHARS + 40)
        );
        let logged = (0..100).filter(|_| log_budget()).count();
        assert!(
            logged <= LOG_LINES_PER_SECOND as usize,
            "{logged} lines in a second"
        );
    }
}
