//! The name a person meant: a preset typed on the command line, a
//! parameter misspelt in a mapping file. One edit distance for every
//! message that says "did you mean".

/// The name among `names` nearest to `typed` (letter case aside), if it is
/// near enough to be a slip of the fingers: at most a third of its
/// letters, and at least two, may differ.
pub fn nearest<'a>(typed: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let typed = typed.to_lowercase();
    let allowed = (typed.chars().count() / 3).max(2);
    names
        .into_iter()
        .map(|name| (distance(&typed, &name.to_lowercase()), name))
        .filter(|(d, _)| *d <= allowed)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name)
}

/// Edits (insert, delete, replace, a swap of neighbours) from `a` to `b`:
/// the optimal string alignment distance, by character.
pub fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            d[i * width + j] = if i == 0 || j == 0 {
                i + j
            } else {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                let mut best = (d[(i - 1) * width + j] + 1)
                    .min(d[i * width + j - 1] + 1)
                    .min(d[(i - 1) * width + j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    best = best.min(d[(i - 2) * width + j - 2] + 1);
                }
                best
            };
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slip_finds_the_name_meant_and_a_stranger_finds_none() {
        let presets = ["colony", "colony_picture", "default", "fluid", "forest"];
        assert_eq!(nearest("colny", presets), Some("colony"));
        assert_eq!(nearest("defualt", presets), Some("default"));
        assert_eq!(nearest("Forest", presets), Some("forest"));
        assert_eq!(nearest("flud", presets), Some("fluid"));
        assert_eq!(nearest("kaleidoscope", presets), None);
        let params = ["master.brightness", "master.bpm", "fluid.speed"];
        assert_eq!(
            nearest("master.brightnes", params),
            Some("master.brightness")
        );
        assert_eq!(nearest("colony.growth", params), None);
        assert_eq!(distance("colny", "colony"), 1);
        assert_eq!(distance("ab", "ba"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
