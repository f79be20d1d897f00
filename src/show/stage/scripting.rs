//! The script part of [`Show`]: the Lua host and the script the command
//! line gave, which plays over a playlist entry's or a preset's.
//!
//! [`Show`]: super::Show

use super::{Ground, ShowStartError};
use crate::script::ScriptHost;

/// The script host and the script named with `--script`, if any.
pub(super) struct Scripting {
    /// The Lua host running the show's script.
    pub(super) host: ScriptHost,
    /// The script the command line gave, over any other.
    pub(super) given: Option<String>,
}

impl Scripting {
    /// A host with no script yet, on `ground`.
    pub(super) fn new(ground: &Ground) -> Result<Self, ShowStartError> {
        let host = ScriptHost::new(ground.assets.clone(), ground.errors.clone(), ground.seed)
            .map_err(|e| ShowStartError::Script(e.to_string()))?;
        Ok(Self { host, given: None })
    }

    /// The script to run (in `scripts/`, without the folder): the command
    /// line's, else the playlist `entry`'s, else the `preset`'s. The
    /// command line wins because the performer asked for it by name for
    /// this show: through a playlist it plays for every entry.
    pub(super) fn chosen(&self, entry: Option<&str>, preset: Option<&str>) -> Option<String> {
        let bare = |file: &str| file.strip_prefix("scripts/").unwrap_or(file).to_string();
        if let (Some(given), Some(entry)) = (&self.given, entry)
            && bare(given) != bare(entry)
        {
            tracing::info!("--script {given} plays instead of the playlist entry's {entry}");
        }
        (self.given.as_deref()).or(entry).or(preset).map(bare)
    }
}
