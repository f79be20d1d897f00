//! The phone and tablet page served at `/ui` on the OSCQuery port: one
//! self-contained HTML file (its script and styles inline, nothing from
//! the internet) that builds its controls from the namespace and talks to
//! the show over the same port's WebSocket.

/// The page.
pub const PAGE: &str = include_str!("page.html");
