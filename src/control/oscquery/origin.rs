//! Which web pages may open the WebSocket: a browser names the page that
//! opens a socket in its `Origin` header, and a page from any other site
//! could otherwise drive the show (start a take, write the favourites)
//! from a performer's laptop. Admitted are the show's own page (the
//! origin is the `Host` the server was reached on), the origins the user
//! allows with `--allow-origin`, and clients that send no `Origin` at all
//! (TouchDesigner, Chataigne, python: no browser, no page to forge one).
//! The show's own origin counts only where its host cannot be a name an
//! outside site points at this machine (DNS rebinding): an address, a
//! name of one label (`localhost`, `studio-pc`), a local suffix (`.local`,
//! `.home.arpa`…) or the name given to `--osc-bind`.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::str::FromStr;
use std::sync::{Mutex, PoisonError};

use crate::control::osc::RateLimitedLog;

/// Characters of an origin quoted in a message.
const QUOTED: usize = 100;

/// Name suffixes no outside site can register, so a page under one of
/// them was not sent here by rebinding a public name.
const LOCAL_SUFFIXES: [&str; 4] = [".local", ".localhost", ".home.arpa", ".internal"];

/// A web origin: scheme, host and port, as a browser sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    secure: bool,
    host: String,
    port: u16,
}

impl Origin {
    /// `http://host[:port]` or `https://…` exactly as the header carries
    /// it (no path), or `None` (`null`, `file://`, anything else).
    fn of_header(text: &str) -> Option<Self> {
        let text = text.trim().to_ascii_lowercase();
        let (secure, rest) = match text.split_once("://")? {
            ("http", rest) => (false, rest),
            ("https", rest) => (true, rest),
            _ => return None,
        };
        let (host, port) = authority(rest)?;
        let port = port.unwrap_or(if secure { 443 } else { 80 });
        Some(Self { secure, host, port })
    }

    /// Whether `host` (the `Host` header) names this origin's own server.
    fn is_served_at(&self, host: &str) -> bool {
        authority(&host.trim().to_ascii_lowercase()).is_some_and(|(name, port)| {
            name == self.host && port.unwrap_or(if self.secure { 443 } else { 80 }) == self.port
        })
    }
}

/// A URL given as a web page's origin that is none.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a web page's origin (http://HOST[:PORT] or https://…)")]
pub struct NotAnOrigin(pub String);

impl FromStr for Origin {
    type Err = NotAnOrigin;

    /// The origin of a URL the user gives (`--allow-origin`): its path, if
    /// any, is not part of it.
    fn from_str(text: &str) -> Result<Self, NotAnOrigin> {
        let lower = text.trim().to_ascii_lowercase();
        let (scheme, rest) = lower.split_once("://").unwrap_or(("", &lower));
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        Self::of_header(&format!("{scheme}://{authority}"))
            .ok_or_else(|| NotAnOrigin(text.to_string()))
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.secure { "https" } else { "http" };
        write!(f, "{scheme}://{}:{}", self.host, self.port)
    }
}

/// `host[:port]` split, the host lowercase and checked: an IPv4 address or
/// a name of letters, digits, `-`, `_` and dots, or an IPv6 address in
/// brackets. No user info, no empty parts.
fn authority(text: &str) -> Option<(String, Option<u16>)> {
    let (host, port) = match text.strip_prefix('[') {
        Some(rest) => {
            let (inside, after) = rest.split_once(']')?;
            inside.parse::<Ipv6Addr>().ok()?;
            let port = match after {
                "" => None,
                _ => Some(after.strip_prefix(':')?),
            };
            (format!("[{inside}]"), port)
        }
        None => match text.split_once(':') {
            Some((host, port)) => (host.to_string(), Some(port)),
            None => (text.to_string(), None),
        },
    };
    let name_ok = host.starts_with('[')
        || (!host.is_empty()
            && host.len() <= 253
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')));
    if !name_ok {
        return None;
    }
    let port = match port {
        None => None,
        // As a browser writes it: no sign, no leading zero.
        Some(digits)
            if !digits.is_empty()
                && !digits.starts_with('0')
                && digits.chars().all(|c| c.is_ascii_digit()) =>
        {
            Some(digits.parse().ok()?)
        }
        Some(_) => return None,
    };
    Some((host, port))
}

/// Why a page may not open the WebSocket.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OriginRefusal {
    /// The header is no web origin (`null`: a file, a sandboxed frame).
    #[error("a page of origin {0:?} (not http or https) may not drive the show")]
    Opaque(String),
    /// A page served elsewhere.
    #[error("a page from {0} may not drive the show; add --allow-origin {0} to allow it")]
    Elsewhere(String),
    /// The show's own page, reached under a name an outside site could
    /// point here.
    #[error(
        "the page reached as {0} may not drive the show (a public name could be a rebound one); use the address, or add --allow-origin {0}"
    )]
    PublicName(String),
}

/// The origins admitted, and a log of refusals at most once a second.
#[derive(Debug, Default)]
pub struct Origins {
    allowed: Vec<Origin>,
    names: Vec<String>,
    log: Mutex<RateLimitedLog>,
}

impl Origins {
    /// The show's own page, `allowed` and clients without an origin;
    /// `bind` (`--osc-bind`) is trusted as a host name when it is one.
    pub fn new(allowed: Vec<Origin>, bind: &str) -> Self {
        let bind = bind.trim().to_ascii_lowercase();
        let names = (bind.parse::<IpAddr>().is_err() && !bind.is_empty())
            .then_some(bind)
            .into_iter()
            .collect();
        Self {
            allowed,
            names,
            log: Mutex::new(RateLimitedLog::default()),
        }
    }

    /// Whether a WebSocket whose request carried `origin` and `host`
    /// headers (each `None` when absent; a repeated one is refused before)
    /// may open.
    pub fn admit(&self, origin: Option<&str>, host: Option<&str>) -> Result<(), OriginRefusal> {
        let Some(text) = origin else {
            return Ok(());
        };
        let quoted: String = text.chars().take(QUOTED).collect();
        let origin =
            Origin::of_header(text).ok_or_else(|| OriginRefusal::Opaque(quoted.clone()))?;
        if self.allowed.contains(&origin) {
            return Ok(());
        }
        if !host.is_some_and(|host| origin.is_served_at(host)) {
            return Err(OriginRefusal::Elsewhere(quoted));
        }
        if !self.local_name(&origin.host) {
            return Err(OriginRefusal::PublicName(quoted));
        }
        Ok(())
    }

    /// Logs `refusal` of `peer`, at most once a second.
    pub fn report(&self, peer: std::net::SocketAddr, refusal: &OriginRefusal) {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .warn(|| format!("OSCQuery: WebSocket from {peer} refused: {refusal}"));
    }

    /// Whether `host` cannot be a public name pointed at this machine.
    fn local_name(&self, host: &str) -> bool {
        host.starts_with('[')
            || host.parse::<IpAddr>().is_ok()
            || !host.contains('.')
            || LOCAL_SUFFIXES.iter().any(|s| host.ends_with(s))
            || self.names.iter().any(|n| n == host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origins(allowed: &[&str]) -> Origins {
        let allowed = allowed.iter().filter_map(|a| a.parse().ok()).collect();
        Origins::new(allowed, "0.0.0.0")
    }

    #[test]
    fn only_the_show_s_own_page_and_clients_without_an_origin_get_in() {
        let origins = origins(&[]);
        let own = [
            ("http://127.0.0.1:9001", "127.0.0.1:9001"),
            ("http://localhost:9001", "LOCALHOST:9001"),
            ("http://[::1]:9001", "[::1]:9001"),
            ("http://192.168.1.20:9001", "192.168.1.20:9001"),
            ("http://studio-pc.local:9001", "studio-pc.local:9001"),
            ("https://studio-pc:443", "studio-pc"),
            ("http://studio-pc", "studio-pc:80"),
        ];
        for (origin, host) in own {
            assert_eq!(origins.admit(Some(origin), Some(host)), Ok(()), "{origin}");
        }
        assert_eq!(origins.admit(None, None), Ok(()), "TouchDesigner, python");
        let elsewhere = [
            ("http://evil.example", "127.0.0.1:9001"),
            ("http://127.0.0.1:8000", "127.0.0.1:9001"),
            ("http://127.0.0.1", "127.0.0.1:9001"),
            ("http://localhost:9001", "127.0.0.1:9001"),
            ("http://127.0.0.1:9001", ""),
            ("http://127.0.0.1:9001.evil.example", "127.0.0.1:9001"),
            ("http://127.0.0.1:9001@evil.example", "127.0.0.1:9001"),
        ];
        for (origin, host) in elsewhere {
            assert!(
                matches!(
                    origins.admit(Some(origin), Some(host)),
                    Err(OriginRefusal::Elsewhere(_) | OriginRefusal::Opaque(_))
                ),
                "{origin} on {host}"
            );
        }
        assert!(matches!(
            origins.admit(Some("http://127.0.0.1:9001"), None),
            Err(OriginRefusal::Elsewhere(_))
        ));
        for opaque in [
            "null",
            "file://",
            "chrome-extension://abc",
            "ws://127.0.0.1:9001",
            "",
            "http://",
        ] {
            assert!(
                matches!(
                    origins.admit(Some(opaque), Some("127.0.0.1:9001")),
                    Err(OriginRefusal::Opaque(_))
                ),
                "{opaque:?}"
            );
        }
    }

    #[test]
    fn a_public_name_pointed_here_is_refused_unless_allowed() {
        // DNS rebinding: the page's own origin, under a name its site
        // points at this machine.
        let origins = origins(&[]);
        let rebound = Some("http://attacker.example.com:9001");
        assert!(matches!(
            origins.admit(rebound, Some("attacker.example.com:9001")),
            Err(OriginRefusal::PublicName(_))
        ));
        let allowed = self::origins(&["http://attacker.example.com:9001/some/page"]);
        assert_eq!(
            allowed.admit(rebound, Some("attacker.example.com:9001")),
            Ok(())
        );
        let bound = Origins::new(Vec::new(), "show.example.org");
        assert_eq!(
            bound.admit(
                Some("http://show.example.org:9001"),
                Some("show.example.org:9001")
            ),
            Ok(())
        );
    }

    #[test]
    fn allowed_origins_are_read_from_urls() {
        let patch: Origin = "HTTP://192.168.1.5:8000/ui/index.html?x#y"
            .parse()
            .expect("a URL");
        assert_eq!(patch.to_string(), "http://192.168.1.5:8000");
        let origins = Origins::new(vec![patch], "0.0.0.0");
        assert_eq!(
            origins.admit(Some("http://192.168.1.5:8000"), Some("10.0.0.2:9001")),
            Ok(())
        );
        assert!(
            origins
                .admit(Some("http://192.168.1.5:8001"), Some("10.0.0.2:9001"))
                .is_err()
        );
        for wrong in [
            "",
            "192.168.1.5",
            "ftp://x",
            "http://a b",
            "http://x:port",
            "http://x:99999",
            "http://x:080",
            "http://x:+80",
        ] {
            assert!(wrong.parse::<Origin>().is_err(), "{wrong:?}");
        }
    }
}
