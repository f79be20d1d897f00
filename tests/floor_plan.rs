//! The floor plan holds: every top-level module of `src/` sits in a tier,
//! and a module imports only the tiers before its own (so no two import
//! each other); no file is over 650 lines outside its tests. A `use
//! crate::X`, a `crate::X::` path or a doc link all count as an import.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The tiers, foundation first. A module may import the tiers before it.
const TIERS: [&str; 14] = [
    "base", "params", "mapping", "command", "gpu", "engine", "outputs", "layers", "control",
    "audio", "script", "show", "drivers", "tools",
];

/// Lines a file may have before its tests.
const MAX_LINES: usize = 650;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules `code` names through `crate::`.
fn imports(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                names.insert(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            names.insert(name);
        }
    }
    names
}

#[test]
fn each_module_imports_only_the_tiers_before_it_and_no_file_is_too_long() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap_or(file);
        let top = relative
            .components()
            .next()
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .unwrap_or_default();
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let lines = code.matches('\n').count();
        if lines > MAX_LINES {
            wrong.push(format!(
                "{}: {lines} lines outside tests",
                relative.display()
            ));
        }
        if top == "main" || top == "lib" {
            continue;
        }
        let Some(tier) = TIERS.iter().position(|t| *t == top) else {
            wrong.push(format!(
                "{}: module {top} is in no tier",
                relative.display()
            ));
            continue;
        };
        for name in imports(code) {
            if let Some(other) = TIERS.iter().position(|t| *t == name)
                && other > tier
            {
                wrong.push(format!(
                    "{}: {top} imports {name}, a later tier",
                    relative.display()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_check_sees_every_form_of_import() {
    let code = "use crate::{show, gpu::Gpu};\n/// [`crate::tools::TOOLS`]\nlet x = crate::drivers::cli::X;\nmycrate::no";
    let found: Vec<_> = imports(code).into_iter().collect();
    assert_eq!(found, ["drivers", "gpu", "show", "tools"]);
}
