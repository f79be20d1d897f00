//! The screen and other applications' windows as texture sources:
//! `screen` (the whole screen) and `window:NAME` (the first window whose
//! title holds NAME, in any case), for slides, a browser, another
//! program's output. A thread captures at up to [`CAPTURE_FPS`] and hands
//! the newest picture to the frame. On Linux the pictures come from the X
//! server (Xwayland's under Wayland, which shows X applications only)
//! (`x11.rs`), on Windows through GDI (`gdi.rs`), on macOS through Quartz
//! (`quartz.rs`); elsewhere the source is an error on screen saying so. A display or a
//! window that is not there, or goes away, is black and an error, and is
//! looked for again every [`RETRY`].

use std::time::Duration;

use super::feed::{FedSource, Feed};
use super::media::MediaError;
use super::source::SourceKind;

/// Captures a second, at most.
pub const CAPTURE_FPS: f64 = 30.0;
/// How often a display or window that is not there is looked for again.
pub const RETRY: Duration = Duration::from_secs(2);
/// The longest window name looked for.
const MAX_NAME: usize = 256;

/// `screen` or `window:NAME`.
pub const SOURCE: SourceKind = SourceKind {
    form: "screen, window:NAME",
    names: |name| name == "screen" || name.starts_with("window:"),
    well_formed: |name| {
        name == "screen"
            || name
                .strip_prefix("window:")
                .is_some_and(|title| !title.trim().is_empty() && title.len() <= MAX_NAME)
    },
    file: false,
    open: |opening| Box::new(open(None, Captured::named(opening.name))),
};

/// What is captured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Captured {
    /// The whole screen.
    Screen,
    /// The first window whose title holds this (lowercase).
    Window(String),
}

impl Captured {
    /// What the source name `screen` or `window:NAME` captures.
    pub fn named(name: &str) -> Self {
        match name.strip_prefix("window:") {
            Some(title) => Self::Window(title.to_lowercase()),
            None => Self::Screen,
        }
    }
}

/// Captures `what` from `display` (none: the one `DISPLAY` names) on a
/// thread of its own.
pub fn open(display: Option<String>, what: Captured) -> FedSource {
    let named = describe(&what);
    let work = move |feed: &Feed<String>| capture(display.as_deref(), &what, feed);
    FedSource::start(&named, "screen capture", RETRY, work, MediaError::Screen)
}

/// The source's name, for messages.
fn describe(what: &Captured) -> String {
    match what {
        Captured::Screen => "screen".into(),
        Captured::Window(title) => format!("window:{title}"),
    }
}

#[cfg(target_os = "linux")]
mod x11;
#[cfg(target_os = "linux")]
use x11::capture;

#[cfg(windows)]
mod gdi;
#[cfg(windows)]
use gdi::capture;

#[cfg(target_os = "macos")]
mod quartz;
#[cfg(target_os = "macos")]
use quartz::capture;

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
fn capture(_display: Option<&str>, _what: &Captured, _feed: &Feed<String>) -> Result<(), String> {
    Err("screen and window capture is built for Linux (X11), Windows and macOS".into())
}
