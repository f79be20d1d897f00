//! `sylva check` over small show folders of the tests' own (beside the
//! built-in files, as a performer's show is): mapping mistakes at their
//! lines, and a broken file counted once whatever uses it.

use super::{CheckReport, run};
use crate::base::Assets;

/// A show folder under the system's temporary folder, removed when
/// dropped.
struct TestShow(Assets);

impl std::ops::Deref for TestShow {
    type Target = Assets;

    fn deref(&self) -> &Assets {
        &self.0
    }
}

impl Drop for TestShow {
    fn drop(&mut self) {
        std::fs::remove_dir_all(self.0.root()).ok();
    }
}

/// A show folder holding `files`.
fn show(name: &str, files: &[(&str, &str)]) -> TestShow {
    let root = std::env::temp_dir().join(format!("sylva-check-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&root).ok();
    for (path, text) in files {
        let path = root.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).ok();
        }
        if let Err(error) = std::fs::write(&path, text) {
            panic!("writing {}: {error}", path.display());
        }
    }
    TestShow(Assets::new(root))
}

fn problems(report: &CheckReport) -> Vec<String> {
    report.problems.iter().map(ToString::to_string).collect()
}

/// Whether one line of `said` starts with `at` and holds `what`.
fn says(said: &[String], at: &str, what: &str) -> bool {
    said.iter().any(|s| s.starts_with(at) && s.contains(what))
}

#[test]
fn a_misspelt_parameter_and_cc_200_fail_check_at_their_lines() {
    let typos = "[[midi]]\ncc = 0\nparam = \"master.brightnes\"\n\n\
                 [[midi]]\ncc = 200\nparam = \"master.brightness\"\n";
    let report = run(&show("typos", &[("presets/mappings/typos.toml", typos)]));
    let said = problems(&report);
    let file = "presets/mappings/typos.toml";
    assert!(
        says(
            &said,
            &format!("{file}:3:"),
            "unknown parameter \"master.brightnes\" (did you mean \"master.brightness\"?)"
        ),
        "{said:#?}"
    );
    assert!(
        says(
            &said,
            &format!("{file}:6:"),
            "cc 200 is no MIDI controller (0-127)"
        ),
        "{said:#?}"
    );
    assert_eq!(said.len(), 2, "{said:#?}");
}

#[test]
fn a_timeline_naming_a_missing_preset_or_parameter_fails_check_at_its_cue() {
    let a = "layers = [\"shader.echo\"]\n";
    let order = "[[cue]]\nat = 1.0\npreset = \"aa\"\n\n\
                 [[cue]]\nat = 2.0\nparam = \"master.brightnes\"\nto = 1.0\n";
    let late = "[[cue]]\nat = \"25:00:00:00\"\npreset = \"a\"\n";
    let files = [
        ("presets/a.toml", a),
        ("presets/timelines/order.toml", order),
        ("presets/timelines/late.toml", late),
    ];
    let report = run(&show("timelines", &files));
    let said = problems(&report);
    let order = "presets/timelines/order.toml";
    assert!(
        says(
            &said,
            &format!("{order}:1:"),
            "no preset \"aa\" (did you mean \"a\"?)"
        ),
        "{said:#?}"
    );
    assert!(
        says(
            &said,
            "presets/timelines/late.toml:1:",
            "a timecode HH:MM:SS:FF"
        ),
        "{said:#?}"
    );
    assert_eq!(said.len(), 2, "the first fault of each file: {said:#?}");
}

#[test]
fn every_kind_of_mapping_target_is_checked_against_the_show() {
    let kinds = "[[midi]]\nnote = 36\nparam = \"audio.level\"\n\
                 [[midi]]\ncc = 1\nparam = \"shader.aurora.glow\"\nrange = [0.0, 1000.0]\n\
                 [[midi]]\ncc = 2\naction = \"toggle:shader.nowhere\"\n\
                 [[midi]]\ncc = 3\naction = \"playlist:nothing\"\n\
                 [[osc]]\naddress = \"/a\"\nparam = \"shader.echo.opacty\"\n\
                 [[osc]]\naddress = \"/b\"\nparam = \"shader.elsewhere.glow\"\n\
                 [[modulate]]\nsource = \"audio.bass\"\nparam = \"master.tonemap\"\n\
                 [[midi]]\ncc = 4\nparam = \"shader.echo.file\"\n";
    let report = run(&show("kinds", &[("presets/mappings/kinds.toml", kinds)]));
    let said = problems(&report);
    let at = |line: usize| format!("presets/mappings/kinds.toml:{line}:");
    for (line, what) in [
        (3, "read-only"),
        (7, "reaches past \"shader.aurora.glow\"'s 0 to 8"),
        (13, "no playlist \"nothing\""),
        (
            16,
            "unknown parameter \"shader.echo.opacty\" (did you mean \"shader.echo.opacity\"?)",
        ),
        (22, "\"master.tonemap\" (enum) cannot be moved"),
        (25, "\"shader.echo.file\" (path) cannot be moved"),
    ] {
        assert!(
            says(&said, &at(line), what),
            "line {line}: {what}: {said:#?}"
        );
    }
    assert_eq!(said.len(), 6, "{said:#?}");
    let warned = &report.warnings;
    assert!(
        says(warned, &at(10), "no preset has a layer \"shader.nowhere\""),
        "{warned:#?}"
    );
    assert!(
        says(
            warned,
            &at(19),
            "no preset has a layer \"shader.elsewhere\""
        ),
        "{warned:#?}"
    );
    assert_eq!(warned.len(), 2, "{warned:#?}");
}

#[test]
fn a_broken_file_a_preset_uses_is_one_problem() {
    let bad_isf = "/*{\n  \"ISFVSN\": \"2\",\n  \"INPUTS\": [ { \"NAME\": \"a\" \"TYPE\": \"float\" } ]\n}*/\nvoid main() { gl_FragColor = vec4(1.0); }\n";
    let report = run(&show(
        "once",
        &[
            ("scripts/broken.lua", "function update(dt\n"),
            ("shaders/isf/broken.fs", bad_isf),
            (
                "presets/uses.toml",
                "layers = [\"shader.fx\"]\nscript = \"scripts/broken.lua\"\n[params]\n\"shader.fx.file\" = \"isf/broken.fs\"\n",
            ),
        ],
    ));
    let said = problems(&report);
    let count = |file: &str| said.iter().filter(|s| s.contains(file)).count();
    assert_eq!(count("broken.lua"), 1, "{said:#?}");
    assert_eq!(count("broken.fs"), 1, "{said:#?}");
    assert_eq!(said.len(), 2, "{said:#?}");
    assert!(
        report.summary().ends_with("2 problems"),
        "{}",
        report.summary()
    );
}

#[test]
fn the_shipped_show_and_its_mappings_pass_without_warnings() {
    let report = run(&Assets::new(env!("CARGO_MANIFEST_DIR")));
    assert!(report.problems.is_empty(), "{:#?}", problems(&report));
    assert!(report.warnings.is_empty(), "{:#?}", report.warnings);
}
