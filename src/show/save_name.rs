//! Names a preset may be saved under when the request comes from the
//! network, a controller or a script: plain names in `presets/`, so a save
//! never reaches a mapping file, a subfolder or anything outside the show.

/// Longest name accepted.
pub const MAX_LEN: usize = 64;

/// Why a save name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SaveNameError {
    /// Empty or longer than [`MAX_LEN`].
    #[error("a preset name has 1 to {MAX_LEN} characters")]
    Length,
    /// A character other than letters, digits, `-` and `_`, or a name
    /// starting with `-` or `_`.
    #[error("{0:?}: a preset name is letters, digits, - and _ (no folders, no dots)")]
    Characters(String),
}

/// Checks that `name` is a plain preset name.
pub fn check(name: &str) -> Result<(), SaveNameError> {
    if name.is_empty() || name.chars().count() > MAX_LEN {
        return Err(SaveNameError::Length);
    }
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !plain || name.starts_with(['-', '_']) {
        let shown: String = name.chars().take(MAX_LEN).collect();
        return Err(SaveNameError::Characters(shown));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_pass_and_paths_do_not() {
        for good in ["mine", "set-2", "Encore_3"] {
            assert_eq!(check(good), Ok(()), "{good}");
        }
        for bad in ["mappings/mine", "../x", "a.toml", "", "-x", "über", "a b"] {
            assert!(check(bad).is_err(), "{bad}");
        }
        assert_eq!(check(&"a".repeat(65)), Err(SaveNameError::Length));
    }
}
