//! The error log the performer sees: the last errors from shaders, presets,
//! the GPU and (later) scripts, kept for the HUD's error panel and written to
//! the log as they arrive. Shared between threads because wgpu reports
//! uncaptured errors from wherever they happen. Each distinct message is
//! logged at most once per interval, with the count of its repeats
//! ([`Repeats`]); so is every periodic warning ([`warn_held`]).

use std::collections::VecDeque;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::repeats::{Repeats, Verdict};

/// How many errors the panel keeps.
const KEPT: usize = 16;

/// Characters of an error message kept and logged: enough for a shader
/// error with its source line and caret, never a planted megabyte.
pub const MAX_MESSAGE_CHARS: usize = 4_000;

/// Characters of an origin kept.
const MAX_ORIGIN_CHARS: usize = 200;

/// How long an error stays on the panel before a repeat of another error
/// of its origin may take its place: two errors alternating under one
/// origin do not flicker.
const PANEL_HOLD: Duration = Duration::from_secs(1);

/// Error lines written to the log per second at most, across every show
/// and thread; the panel still shows each newest error.
const LOG_LINES_PER_SECOND: u32 = 20;

thread_local! {
    /// A thread whose lines its test counts, outside the budget the tests
    /// running beside it share (set by tests only).
    static UNBUDGETED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether another error line fits this second's budget; when a second
/// that dropped lines ends, one line says how many.
fn log_budget() -> bool {
    if UNBUDGETED.get() {
        return true;
    }
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
    /// Times the same error came again since.
    pub repeats: u64,
}

/// The errors on the panel, and for each origin a newer error waiting
/// while the one shown stands for [`PANEL_HOLD`].
#[derive(Debug, Default)]
struct Panel {
    shown: VecDeque<ShowError>,
    waiting: VecDeque<ShowError>,
}

impl Panel {
    /// Shows `error` in place of its origin's.
    fn show(&mut self, error: ShowError) {
        self.shown.retain(|e| e.origin != error.origin);
        self.waiting.retain(|e| e.origin != error.origin);
        self.shown.push_back(error);
        while self.shown.len() > KEPT {
            self.shown.pop_front();
        }
    }

    /// Shows the errors that waited until their origin's had stood long
    /// enough.
    fn promote(&mut self) {
        let due: Vec<usize> = (0..self.waiting.len())
            .filter(|i| {
                let origin = &self.waiting[*i].origin;
                self.shown
                    .iter()
                    .find(|e| e.origin == *origin)
                    .is_none_or(|e| e.at.elapsed() >= PANEL_HOLD)
            })
            .collect();
        for i in due.into_iter().rev() {
            if let Some(mut error) = self.waiting.remove(i) {
                error.at = Instant::now();
                self.show(error);
            }
        }
    }
}

type Errors = Arc<Mutex<Panel>>;

/// Recent errors, newest last. Cloning shares the same log.
#[derive(Debug, Clone, Default)]
pub struct ErrorLog {
    inner: Errors,
    parent: Option<Errors>,
    /// The messages logged lately, each held back for its interval.
    repeats: Arc<Mutex<Repeats>>,
}

/// Logs `message` of `origin` as a warning, unless the same message was
/// logged within its interval ([`Repeats`]): what a periodic path (a
/// retry, a rescan, a frame) says when it fails the same way again.
pub fn warn_held(origin: &str, message: impl std::fmt::Display) {
    static HELD: LazyLock<Mutex<Repeats>> = LazyLock::new(Mutex::default);
    let message = truncated(message.to_string(), MAX_MESSAGE_CHARS);
    let verdict =
        HELD.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .admit(origin, &message, Instant::now());
    if verdict != Verdict::Hold && log_budget() {
        tracing::warn!("{origin}: {message}{}", verdict.suffix());
    }
}

impl ErrorLog {
    /// A log of its own that also shows `parent`'s errors: a show's log
    /// over its device's, so several shows on one device (tests, bench)
    /// keep their own errors while device errors reach all of them.
    pub fn child_of(parent: &ErrorLog) -> Self {
        Self {
            inner: Errors::default(),
            parent: Some(parent.inner.clone()),
            repeats: Arc::default(),
        }
    }

    /// Records an error under `origin`, replacing an earlier one with the
    /// same origin so a shader that fails on every save shows once. The
    /// same error again is logged at most once per interval, with how many
    /// times it came ([`Repeats`]), whatever other errors came between; a
    /// new error is logged and shown at once. Two errors of one origin
    /// that keep coming in turn take the panel in turn, a second each.
    pub fn report(&self, origin: impl Into<String>, message: impl ToString) {
        let origin = truncated(origin.into(), MAX_ORIGIN_CHARS);
        let message = truncated(message.to_string(), MAX_MESSAGE_CHARS);
        let verdict = self
            .repeats
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .admit(&origin, &message, Instant::now());
        let mut panel = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if verdict != Verdict::Hold && log_budget() {
            tracing::error!("{origin}: {message}{}", verdict.suffix());
        }
        let held = verdict == Verdict::Hold;
        let error = ShowError {
            origin,
            message,
            at: Instant::now(),
            repeats: match verdict {
                Verdict::Show { held, .. } => held,
                Verdict::Hold => 0,
            },
        };
        match panel.shown.iter_mut().find(|e| e.origin == error.origin) {
            Some(shown) if held && shown.message == error.message => {
                shown.repeats += 1;
                panel.waiting.retain(|e| e.origin != error.origin);
            }
            // Another error of this origin, a repeat: it waits until the
            // one shown has stood for a moment.
            Some(shown) if held && shown.at.elapsed() < PANEL_HOLD => {
                panel.waiting.retain(|e| e.origin != error.origin);
                panel.waiting.push_back(error);
                while panel.waiting.len() > KEPT {
                    panel.waiting.pop_front();
                }
            }
            _ => panel.show(error),
        }
    }

    /// Removes the error of `origin`, once it has been fixed.
    pub fn clear(&self, origin: &str) {
        self.repeats
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .forget(origin);
        let mut panel = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        panel.waiting.retain(|e| e.origin != origin);
        let before = panel.shown.len();
        panel.shown.retain(|e| e.origin != origin);
        if panel.shown.len() != before {
            tracing::info!("{origin}: fixed");
        }
    }

    /// The current errors (the parent's first), oldest first.
    pub fn snapshot(&self) -> Vec<ShowError> {
        let mut all = Vec::new();
        for log in self.parent.iter().chain(std::iter::once(&self.inner)) {
            let mut panel = log.lock().unwrap_or_else(PoisonError::into_inner);
            panel.promote();
            all.extend(panel.shown.iter().cloned());
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

    /// Counts the error lines logged on this thread.
    struct Lines(Arc<Mutex<Vec<String>>>);

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Lines {
        fn on_event(
            &self,
            event: &tracing::Event<'_>,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            struct Text(String);
            impl tracing::field::Visit for Text {
                fn record_debug(&mut self, _: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                    self.0 = format!("{v:?}");
                }
            }
            let mut text = Text(String::new());
            event.record(&mut text);
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(format!("{} {}", event.metadata().level(), text.0));
        }
    }

    #[test]
    fn two_errors_alternating_under_one_origin_are_logged_once_a_second_each() {
        use tracing_subscriber::layer::SubscriberExt;
        // `--send ndi:left --send ndi:right` without the NDI runtime: the
        // two failures reported under one origin, frame after frame.
        let lines = Arc::new(Mutex::new(Vec::new()));
        let subscriber = tracing_subscriber::registry().with(Lines(lines.clone()));
        let errors = ErrorLog::default();
        let mut flips = 0;
        UNBUDGETED.set(true);
        tracing::subscriber::with_default(subscriber, || {
            let start = Instant::now();
            let mut last = String::new();
            let mut frame = 0;
            while start.elapsed() < Duration::from_millis(1500) {
                let side = if frame % 2 == 0 { "left" } else { "right" };
                errors.report("send", format!("ndi:{side}: no NDI runtime found"));
                let shown = errors.snapshot();
                assert_eq!(shown.len(), 1);
                if shown[0].message != last {
                    flips += 1;
                    last.clone_from(&shown[0].message);
                }
                frame += 1;
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        let lines = lines.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let logged: Vec<&String> = lines.iter().filter(|l| l.starts_with("ERROR")).collect();
        // Each at once, then each again after its second (with its count).
        assert!(
            (3..=4).contains(&logged.len()),
            "{} lines: {logged:?}",
            logged.len()
        );
        assert!(
            logged
                .iter()
                .any(|l| l.contains("more times in the last 1 s")),
            "{logged:?}"
        );
        assert!(flips <= 8, "the panel changed {flips} times in 1.5 s");
    }

    #[test]
    fn a_fixed_error_that_comes_back_is_shown_and_logged_at_once() {
        let errors = ErrorLog::default();
        errors.report("shader.a", "a.fs:3: no");
        errors.report("shader.a", "a.fs:9: no");
        assert_eq!(errors.snapshot()[0].message, "a.fs:9: no");
        errors.report("shader.a", "a.fs:3: no");
        errors.report("shader.a", "a.fs:3: no");
        // The panel keeps the error of a moment ago for a second, then
        // the latest takes its place without another report.
        assert_eq!(errors.snapshot()[0].message, "a.fs:9: no");
        std::thread::sleep(PANEL_HOLD + Duration::from_millis(50));
        assert_eq!(errors.snapshot()[0].message, "a.fs:3: no");
        errors.clear("shader.a");
        assert!(!errors.has("shader.a"));
        errors.report("shader.a", "a.fs:3: no");
        assert_eq!(errors.snapshot()[0].message, "a.fs:3: no");
        errors.report("shader.a", "a.fs:3: no");
        assert_eq!(errors.snapshot()[0].repeats, 1);
    }

    #[test]
    fn periodic_warnings_are_held_back_by_message() {
        use tracing_subscriber::layer::SubscriberExt;
        let lines = Arc::new(Mutex::new(Vec::new()));
        let subscriber = tracing_subscriber::registry().with(Lines(lines.clone()));
        UNBUDGETED.set(true);
        tracing::subscriber::with_default(subscriber, || {
            for i in 0..1_000 {
                warn_held("held test", if i % 2 == 0 { "one" } else { "two" });
            }
        });
        let lines = lines.lock().unwrap_or_else(PoisonError::into_inner).clone();
        assert_eq!(lines.len(), 2, "{lines:?}");
    }
}
