//! Preset and playlist names as a person types them on the command line:
//! one the show does not have is said to be unknown, with the names there
//! are and the nearest of them, before the show tries to load it.

use crate::base::nearest::nearest;
use crate::base::{AssetError, Assets, Folder};

/// A preset or playlist the show folder and the binary do not have.
#[derive(Debug, thiserror::Error)]
#[error(
    "unknown {what} {name:?}{}; the {what}s there are: {} (presets/{folder}*.toml in the show folder, or built in)",
    .nearest.as_ref().map(|n| format!(" (did you mean {n:?}?)")).unwrap_or_default(),
    if .names.is_empty() { "none".to_string() } else { .names.join(", ") },
)]
pub struct UnknownName {
    /// `preset` or `playlist`.
    pub what: &'static str,
    /// The name asked for.
    pub name: String,
    /// The known name nearest to it, if one is near enough.
    pub nearest: Option<String>,
    /// Every name there is.
    pub names: Vec<String>,
    /// The folder inside `presets/` the names are in.
    folder: &'static str,
}

/// `Err` if the show has no preset `name` (a name in `presets/`, or a path
/// to a `.toml` file).
pub fn check_preset(assets: &Assets, name: &str) -> Result<(), UnknownName> {
    if name.ends_with(".toml") && std::path::Path::new(name).is_file() {
        return Ok(());
    }
    check(assets, "preset", "", name)
}

/// `Err` if the show has no playlist `name` in `presets/playlists/`.
pub fn check_playlist(assets: &Assets, name: &str) -> Result<(), UnknownName> {
    check(assets, "playlist", "playlists/", name)
}

fn check(
    assets: &Assets,
    what: &'static str,
    folder: &'static str,
    name: &str,
) -> Result<(), UnknownName> {
    let stem = name.trim_end_matches(".toml");
    let file = format!("{folder}{stem}.toml");
    // Only a file that is not there is unknown: a broken one is the
    // loader's to report, with its line.
    if !matches!(
        assets.read(Folder::Presets, &file),
        Err(AssetError::Missing { .. })
    ) {
        return Ok(());
    }
    let names: Vec<String> = assets
        .list(Folder::Presets, "toml")
        .iter()
        .filter_map(|f| f.strip_prefix(folder)?.strip_suffix(".toml"))
        .filter(|n| !n.contains('/'))
        .map(str::to_string)
        .collect();
    Err(UnknownName {
        what,
        name: name.to_string(),
        nearest: nearest(stem, names.iter().map(String::as_str)).map(str::to_string),
        names,
        folder,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_preset_lists_the_names_there_are() {
        let assets = Assets::new(std::env::temp_dir().join("sylva-no-such-show"));
        let Err(error) = check_preset(&assets, "colny") else {
            panic!("colny is not a preset");
        };
        let message = error.to_string();
        assert!(message.starts_with("unknown preset \"colny\""), "{message}");
        assert!(message.contains("did you mean \"colony\"?"), "{message}");
        assert!(message.contains("kaleidoscope"), "{message}");
        assert!(!message.contains("mappings/"), "{message}");
        assert!(check_preset(&assets, "colony").is_ok());
        let Err(error) = check_playlist(&assets, "defualt") else {
            panic!("defualt is not a playlist");
        };
        assert!(
            error.to_string().contains("did you mean \"default\"?"),
            "{error}"
        );
        assert!(check_playlist(&assets, "default").is_ok());
    }
}
