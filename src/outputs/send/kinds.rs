//! Every kind of sender, in one list ([`SENDERS`], as `layers::KINDS` is
//! for layers): what a target of it is written as, whether this platform
//! has it, and how its sink opens. A new sender is its own file, with its
//! [`SenderKind`] and its sink, plus one line here.

use super::tap::{MakeSink, Sink, SinkError};
use super::{ndi, pipewire, spout, stream, syphon, v4l2};

/// One kind of sender.
pub struct SenderKind {
    /// How a target of this kind is written, for messages (`ndi:NAME`).
    pub form: &'static str,
    /// What a target of this kind starts with (`ndi:`; a stream's URL
    /// schemes).
    pub schemes: &'static [&'static str],
    /// Checks what follows the scheme, the same on every platform, so a
    /// show's outputs file is checked alike wherever it is opened.
    pub check: fn(rest: &str) -> Result<(), NameError>,
    /// `None` where this platform has it; else why not, and what to use
    /// instead (each platform's answer chosen by `cfg!`).
    pub missing: Option<&'static str>,
    /// Opens the sink for `target` (its whole text, and what follows its
    /// scheme) taking frames of `size` at `fps`; again after a failure.
    pub open: OpenSink,
}

/// How a sender opens its sink: for a target, frames of a size, a rate.
pub type OpenSink =
    fn(target: &Target, size: [u32; 2], fps: f32) -> Result<Box<dyn Sink>, SinkError>;

/// A name after a sender's scheme that the sender refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// `ndi:NAME`: empty or too long (the target quoted, as the show
    /// always said it).
    #[error("\"ndi:{0}\": an NDI name of 1 to {max} characters", max = super::ndi::MAX_NAME)]
    Ndi(String),
    /// `pipewire:NAME`: empty, too long, or what would break the pipeline.
    #[error(
        "pipewire:{0}: a node name of 1 to {max} letters, digits, '-', '_' or '.'",
        max = super::pipewire::MAX_NAME
    )]
    PipeWire(String),
    /// `spout:NAME`: empty or too long.
    #[error(
        "spout:{0}: a Spout name of 1 to {max} characters",
        max = super::spout::protocol::MAX_NAME
    )]
    SpoutLength(String),
    /// `spout:NAME`: characters Spout's names do not hold.
    #[error("spout:{0}: Spout names are ASCII letters, digits, spaces and punctuation, without \\")]
    SpoutCharacters(String),
    /// `spout:NAME`: the name of Spout's own shared memory.
    #[error("spout:{0}: the name of Spout's own list")]
    SpoutReserved(String),
    /// `syphon:NAME`: empty, too long, or with a NUL.
    #[error(
        "syphon:{0}: a Syphon name of 1 to {max} characters",
        max = super::syphon::MAX_NAME
    )]
    Syphon(String),
}

/// Why a target was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Its sender refuses the name.
    #[error(transparent)]
    Name(#[from] NameError),
    /// Its sender is not on this platform.
    #[error("{text:?}: {why}")]
    Missing {
        /// The target as written.
        text: String,
        /// Why not, and what to use instead.
        why: &'static str,
    },
    /// No sender's scheme.
    #[error("{text:?}: send to {forms}")]
    Unknown {
        /// The target as written.
        text: String,
        /// Every sender's form, listed.
        forms: String,
    },
}

/// Every sender, tried in order.
pub const SENDERS: &[&SenderKind] = &[
    &ndi::SENDER,
    &stream::SENDER,
    &v4l2::SENDER,
    &pipewire::SENDER,
    &spout::SENDER,
    &syphon::SENDER,
];

/// A target a show sends to: its kind and its text.
#[derive(Clone)]
pub struct Target {
    kind: &'static SenderKind,
    text: String,
    /// Where the part after the scheme starts in `text`.
    rest_at: usize,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Target({} {:?})", self.kind.form, self.text)
    }
}

impl Target {
    /// Reads a target as the first sender whose scheme it starts with;
    /// refused when that sender refuses its name or this platform lacks it.
    pub fn parse(text: &str) -> Result<Self, TargetError> {
        for kind in SENDERS {
            for scheme in kind.schemes {
                let Some(rest) = text.strip_prefix(scheme) else {
                    continue;
                };
                (kind.check)(rest)?;
                if let Some(why) = kind.missing {
                    return Err(TargetError::Missing {
                        text: text.to_string(),
                        why,
                    });
                }
                return Ok(Self {
                    kind,
                    text: text.to_string(),
                    rest_at: scheme.len(),
                });
            }
        }
        let forms: Vec<&str> = SENDERS.iter().map(|k| k.form).collect();
        Err(TargetError::Unknown {
            text: text.to_string(),
            forms: forms.join(", "),
        })
    }

    /// The target as written: its label on screen and in the log.
    pub fn label(&self) -> &str {
        &self.text
    }

    /// What follows the scheme: a name, a device, or (a stream) the
    /// address after its URL scheme.
    pub fn rest(&self) -> &str {
        &self.text[self.rest_at..]
    }

    /// How its kind is written (`ndi:NAME`).
    pub fn form(&self) -> &'static str {
        self.kind.form
    }

    /// What makes this target's sink (again after a failure).
    pub fn maker(&self, fps: f32) -> MakeSink {
        let target = self.clone();
        Box::new(move |size| (target.kind.open)(&target, size, fps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(text: &str) -> Result<&'static str, TargetError> {
        Target::parse(text).map(|t| t.form())
    }

    #[test]
    fn targets_read_as_their_kind() {
        assert_eq!(form("ndi:sylva"), Ok("ndi:NAME"));
        assert_eq!(
            Target::parse("ndi:sylva").map(|t| t.rest().to_string()),
            Ok("sylva".into())
        );
        assert_eq!(form("srt://127.0.0.1:9000"), Ok(stream::SENDER.form));
        assert_eq!(
            Target::parse("srt://127.0.0.1:9000").map(|t| t.label().to_string()),
            Ok("srt://127.0.0.1:9000".into())
        );
        assert!(Target::parse("ndi:").is_err());
        if cfg!(windows) {
            assert_eq!(form("spout:sylva"), Ok(spout::SENDER.form));
        } else {
            assert!(form("spout:sylva").unwrap_err().to_string().contains("NDI"));
        }
        assert!(Target::parse("spout:").is_err());
        if cfg!(target_os = "linux") {
            assert_eq!(form("pipewire:sylva"), Ok(pipewire::SENDER.form));
            assert_eq!(form("v4l2:/dev/video10"), Ok(v4l2::SENDER.form));
        }
        assert!(Target::parse("pipewire:a,b").is_err());
        if cfg!(target_os = "macos") {
            assert_eq!(form("syphon:sylva"), Ok(syphon::SENDER.form));
        } else {
            assert!(
                form("syphon:sylva")
                    .unwrap_err()
                    .to_string()
                    .contains("NDI")
            );
        }
        let unknown = Target::parse("/tmp/x").unwrap_err().to_string();
        for kind in SENDERS {
            assert!(unknown.contains(kind.form), "{unknown} names {}", kind.form);
        }
    }

    #[test]
    fn no_two_senders_share_a_scheme() {
        let schemes: Vec<&str> = SENDERS
            .iter()
            .flat_map(|k| k.schemes.iter().copied())
            .collect();
        for (i, a) in schemes.iter().enumerate() {
            for b in &schemes[i + 1..] {
                assert!(!a.starts_with(b) && !b.starts_with(a), "{a} and {b}");
            }
        }
    }
}
