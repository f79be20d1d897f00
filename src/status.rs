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
    pub fn report(&self, origin: impl Into<String>, message: impl Into<String>) {
        let origin = truncated(origin.into(), MAX_ORIGIN_CHARS);
        let message = truncated(message.into(), MAX_MESSAGE_CHARS);
        let mut errors = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        // The same error again within a second is not logged again: a
        // flood of one bad request must not flood the log.
        let repeat = errors.iter().any(|e| {
            e.origin == origin && e.message == message && e.at.elapsed() < Duration::from_secs(1)
        });
        if repeat {
            return;
        }
        tracing::error!("{origin}: {message}");
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
