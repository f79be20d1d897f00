//! Shader files that once crashed or froze the show (the security review's cases 1-7), each
//! sent exactly, then its variants: nesting that overflowed naga's stack
//! (`.glsl`, `.fs`, `.vs`, every bracket, unary chains), a pass size of
//! 50,000 signs, macros that double, a private array of 16 MB, headers of
//! 100,000 inputs or values, pass buffers of gigabytes (just over the cap,
//! so nothing large is made), and compiles that held the frame. Checked
//! through `sylva check`'s library (no GPU) and, where the GPU is the
//! point, on a running show.

use std::time::{Duration, Instant};

use sylva::base::Assets;
use sylva::gpu::{OUTPUT_FORMAT, RenderTarget, read_rgba16f};
use sylva::params::{Source, Value};
use sylva::show::Show;
use sylva::show::check;

use crate::support::{self, Checked};

/// An ISF file around `body`, the code of `main`.
fn isf(header: &str, body: &str) -> String {
    format!("/*{{ \"ISFVSN\": \"2\"{header} }}*/\nvoid main() {{\n{body}\n}}\n")
}

/// `sylva check` over a show folder of `files`: each problem as text.
fn problems(name: &str, files: &[(&str, &str)]) -> Vec<String> {
    let root = support::show_folder(name, files);
    let report = check::run(&Assets::new(&root));
    std::fs::remove_dir_all(root).ok();
    report.problems.iter().map(ToString::to_string).collect()
}

/// The problem `check` finds in `file`, which must be one.
fn problem_in<'a>(problems: &'a [String], file: &str) -> &'a str {
    match problems
        .iter()
        .find(|p| p.starts_with(&format!("shaders/{file}")))
    {
        Some(problem) => problem,
        None => panic!("no problem in {file}: {problems:?}"),
    }
}

#[test]
fn nesting_that_overflowed_the_translator_is_refused_at_its_line() {
    let parens = |n: usize| format!("{}1.0{}", "(".repeat(n), ")".repeat(n));
    let toy = format!(
        "void mainImage(out vec4 c,in vec2 f){{float x={};c=vec4(x);}}",
        parens(20_000)
    );
    let fs = isf(
        "",
        &format!("float x = {};\ngl_FragColor = vec4(x);", parens(500_000)),
    );
    let vs = format!(
        "void main() {{\n    isf_vertShaderInit();\n    float x = {};\n}}\n",
        parens(20_000)
    );
    let plain = isf("", "gl_FragColor = vec4(1.0);");
    let chains = [
        ("minus", format!("float x = {}1.0;", "- ".repeat(20_000))),
        ("not", format!("bool b = {}true;", "!".repeat(20_000))),
        (
            "brackets",
            format!(
                "float a[2];\nfloat x = a{}0{};",
                "[".repeat(20_000),
                "]".repeat(20_000)
            ),
        ),
        (
            "braces",
            format!("{}\n{}", "{".repeat(20_000), "}".repeat(20_000)),
        ),
        ("sum", format!("float x = 1.0{};", " + 1.0".repeat(20_000))),
        (
            "elses",
            format!(
                "float x = 0.0;\nif (x < 0.0) x = 1.0; {}",
                "else if (x < 1.0) x = 2.0; ".repeat(4_000)
            ),
        ),
    ];
    let chain_files: Vec<(String, String)> = (chains.iter())
        .map(|(name, body)| {
            (
                format!("shaders/isf/{name}.fs"),
                isf("", &format!("{body}\ngl_FragColor = vec4(1.0);")),
            )
        })
        .collect();
    let mut files = vec![
        ("shaders/toy/deep.glsl", toy.as_str()),
        ("shaders/isf/deep.fs", fs.as_str()),
        ("shaders/isf/vertex.fs", plain.as_str()),
        ("shaders/isf/vertex.vs", vs.as_str()),
    ];
    files.extend(chain_files.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    let found = problems("hardening_nesting", &files);
    let toy = problem_in(&found, "toy/deep.glsl:1:");
    assert!(toy.contains("nests more than 256 deep"), "{toy}");
    let fs = problem_in(&found, "isf/deep.fs");
    assert!(fs.contains("at most 512 KiB a stage"), "{fs}");
    let vs = problem_in(&found, "isf/vertex.vs:3:");
    assert!(vs.contains("nests more than 256 deep"), "{vs}");
    for (name, _) in &chains {
        let chain = problem_in(&found, &format!("isf/{name}.fs:"));
        assert!(
            chain.contains("nests more than 256 deep"),
            "{name}: {chain}"
        );
    }
}

#[test]
fn a_pass_size_of_fifty_thousand_signs_is_refused_by_check() {
    let signs = |sign: &str, n: usize| {
        let pass = format!("{}$WIDTH", sign.repeat(n));
        isf(
            &format!(", \"PASSES\": [ {{ \"TARGET\": \"a\", \"WIDTH\": \"{pass}\" }}, {{}} ]"),
            "gl_FragColor = vec4(1.0);",
        )
    };
    let exact = signs("-", 50_000);
    // Under the length a size may have, the depth speaks.
    let (minus, plus, mixed) = (signs("-", 65), signs("+", 65), signs("- +", 33));
    let unknown = isf(
        ", \"PASSES\": [ { \"TARGET\": \"a\", \"HEIGHT\": \"$HEIGHT / $nowhere\" }, {} ]",
        "gl_FragColor = vec4(1.0);",
    );
    let found = problems(
        "hardening_size",
        &[
            ("shaders/isf/exact.fs", &exact),
            ("shaders/isf/minus.fs", &minus),
            ("shaders/isf/plus.fs", &plus),
            ("shaders/isf/mixed.fs", &mixed),
            ("shaders/isf/unknown.fs", &unknown),
        ],
    );
    let exact = problem_in(&found, "isf/exact.fs:1:");
    assert!(exact.contains("longer than a header allows"), "{exact}");
    for file in ["minus", "plus", "mixed"] {
        let problem = problem_in(&found, &format!("isf/{file}.fs:1:"));
        assert!(problem.contains("nests more than 64 deep"), "{problem}");
    }
    let unknown = problem_in(&found, "isf/unknown.fs:1:");
    assert!(unknown.contains("$nowhere is not an input"), "{unknown}");
}

#[test]
fn macros_that_double_are_refused_before_they_expand() {
    let mut doubling = String::from("#define A0 1.0\n");
    for i in 1..=18 {
        doubling.push_str(&format!("#define A{i} (A{p}+A{p})\n", p = i - 1));
    }
    let fs = format!(
        "/*{{ \"ISFVSN\": \"2\" }}*/\n{doubling}void main() {{ gl_FragColor = vec4(A18); }}\n"
    );
    let called = format!(
        "#define F(a) (a+a)\nvoid mainImage(out vec4 c, in vec2 f) {{ c = vec4({}f.x{}); }}\n",
        "F(".repeat(20),
        ")".repeat(20)
    );
    // The argument expanded whole though the macro drops it.
    let dropped = format!(
        "/*{{ \"ISFVSN\": \"2\" }}*/\n{doubling}#define DROP(a) 1.0\nvoid main() {{ gl_FragColor = vec4(DROP(A18)); }}\n"
    );
    let vs = format!("{doubling}void main() {{ isf_vertShaderInit(); gl_Position.x += A18; }}\n");
    let plain = isf("", "gl_FragColor = vec4(1.0);");
    let started = Instant::now();
    let found = problems(
        "hardening_macros",
        &[
            ("shaders/isf/bomb.fs", &fs),
            ("shaders/toy/called.glsl", &called),
            ("shaders/isf/dropped.fs", &dropped),
            ("shaders/isf/vertex.fs", &plain),
            ("shaders/isf/vertex.vs", &vs),
        ],
    );
    for (file, line) in [
        ("isf/bomb.fs", 21),
        ("toy/called.glsl", 2),
        ("isf/dropped.fs", 22),
        ("isf/vertex.vs", 20),
    ] {
        let problem = problem_in(&found, &format!("{file}:{line}:"));
        assert!(
            problem.contains("more than 65536 tokens once its macros are expanded"),
            "{problem}"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn arrays_past_the_private_memory_limit_are_refused_after_translation() {
    let global = "/*{ \"ISFVSN\": \"2\" }*/\nfloat big[4000000];\n\
                  void main() { big[0] = 1.0; gl_FragColor = vec4(big[0]); }\n";
    let local = isf(
        "",
        "float big[16385];\nbig[0] = 1.0;\ngl_FragColor = vec4(big[0]);",
    );
    let toy = "void mainImage(out vec4 c, in vec2 f) {\n    vec4 many[4097];\n    many[0] = vec4(1.0);\n    c = many[0];\n}\n";
    let fits = isf(
        "",
        "float small[16384];\nsmall[0] = 1.0;\ngl_FragColor = vec4(small[0]);",
    );
    let found = problems(
        "hardening_private",
        &[
            ("shaders/isf/global.fs", global),
            ("shaders/isf/local.fs", &local),
            ("shaders/toy/local.glsl", toy),
            ("shaders/isf/fits.fs", &fits),
        ],
    );
    for (file, bytes) in [
        ("isf/global.fs:2:", 16_000_000),
        ("isf/local.fs:", 65_540),
        ("toy/local.glsl:", 65_552),
    ] {
        let problem = problem_in(&found, file);
        assert!(
            problem.contains(&format!(
                "takes {bytes} bytes per invocation; at most 65536"
            )),
            "{problem}"
        );
    }
    assert!(!found.iter().any(|p| p.contains("fits.fs")), "{found:?}");
}

#[test]
fn header_lists_are_counted_before_they_are_read() {
    let inputs = |n: usize, first: &str| {
        let list: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    "{{\"NAME\":\"{}\",\"TYPE\":\"float\"}}",
                    if i == 1 {
                        first.to_string()
                    } else {
                        format!("i{i}")
                    }
                )
            })
            .collect();
        isf(
            &format!(", \"INPUTS\": [{}]", list.join(",")),
            "gl_FragColor = vec4(1.0);",
        )
    };
    let many = inputs(100_000, "i1");
    // A duplicate early in a list too long: the count speaks first.
    let twice = inputs(129, "i0");
    let long = |key: &str, n: usize| {
        let values: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        let labels: Vec<String> = (0..n).map(|i| format!("\"l{i}\"")).collect();
        let (values, labels) = match key {
            "VALUES" => (values, labels.into_iter().take(2).collect()),
            _ => (values.into_iter().take(2).collect(), labels),
        };
        isf(
            &format!(
                ", \"INPUTS\": [{{\"NAME\":\"pick\",\"TYPE\":\"long\",\"VALUES\":[{}],\"LABELS\":[{}]}}]",
                values.join(","),
                labels.join(",")
            ),
            "gl_FragColor = vec4(float(pick));",
        )
    };
    let (values, labels) = (long("VALUES", 257), long("LABELS", 257));
    let imported: Vec<String> = (0..17)
        .map(|i| format!("\"i{i}\": {{ \"PATH\": \"i{i}.png\" }}"))
        .collect();
    let imported = isf(
        &format!(", \"IMPORTED\": {{ {} }}", imported.join(",")),
        "gl_FragColor = vec4(1.0);",
    );
    let started = Instant::now();
    let found = problems(
        "hardening_header",
        &[
            ("shaders/isf/many.fs", &many),
            ("shaders/isf/twice.fs", &twice),
            ("shaders/isf/values.fs", &values),
            ("shaders/isf/labels.fs", &labels),
            ("shaders/isf/imported.fs", &imported),
        ],
    );
    for (file, says) in [
        ("many", "more than 128 inputs"),
        ("twice", "more than 128 inputs"),
        ("values", "lists more than 256 VALUES"),
        ("labels", "lists more than 256 LABELS"),
        ("imported", "more than 16 imported"),
    ] {
        let problem = problem_in(&found, &format!("isf/{file}.fs:1:"));
        assert!(problem.contains(says), "{problem}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

/// A flat colour in ISF.
fn solid(rgb: &str) -> String {
    isf("", &format!("gl_FragColor = vec4({rgb}, 1.0);"))
}

/// A show running `shader.fx` from `isf/<start>` with `files` beside it.
fn running(name: &str, start: &str, files: &[(&str, &str)]) -> Show {
    let preset =
        format!("layers = [\"shader.fx\"]\n[params]\n\"shader.fx.file\" = \"isf/{start}\"\n");
    let mut all = vec![("presets/fx.toml", preset.as_str())];
    all.extend_from_slice(files);
    support::show(support::show_folder(name, &all), "fx", OUTPUT_FORMAT)
}

/// One frame, then the first texel of the effect's layer.
fn frame(show: &mut Show) -> [f32; 4] {
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "hardening.output",
        [4, 4],
        OUTPUT_FORMAT,
    );
    show.frame(1.0 / 60.0, None, &mut output, |_, _| {});
    match show
        .compositor()
        .layer_target("shader.fx")
        .map(|t| read_rgba16f(&show.ground.gpu, t))
    {
        Some(Ok(texels)) => texels[0],
        other => panic!("readback: {other:?}"),
    }
}

fn near(got: [f32; 4], want: [f32; 3]) -> bool {
    got.iter().zip(want).all(|(g, w)| (g - w).abs() < 2e-3)
}

/// Frames until `done`, failing after 20 s.
fn frames_until(show: &mut Show, what: &str, done: impl Fn(&Show, [f32; 4]) -> bool) {
    let started = Instant::now();
    loop {
        let texel = frame(show);
        if done(show, texel) {
            return;
        }
        let errors = support::error_messages(show);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{what}: {texel:?}, {errors:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A blue PNG `side` pixels square, and an ISF that imports it as
/// `pic.png` and draws its colour.
fn blue_import(side: u32) -> (Vec<u8>, String) {
    let mut picture = Vec::new();
    let blue = image::RgbaImage::from_pixel(side, side, image::Rgba([0, 0, 255, 255]));
    image::DynamicImage::ImageRgba8(blue)
        .write_to(
            &mut std::io::Cursor::new(&mut picture),
            image::ImageFormat::Png,
        )
        .checked("encoding the picture");
    let imported = isf(
        ", \"IMPORTED\": { \"pic\": { \"PATH\": \"pic.png\" } }",
        "gl_FragColor = vec4(IMG_NORM_PIXEL(pic, vec2(0.5)).rgb, 1.0);",
    );
    (picture, imported)
}

fn switch(show: &mut Show, file: &str) {
    (show.registry)
        .set_now("shader.fx.file", Value::Text(file.into()), Source::Ui)
        .checked("switching the file");
}

#[test]
fn pass_buffers_over_the_budget_are_refused_and_the_last_good_shader_plays() {
    // Just over 512 MiB: 8192 x 4097 in half floats, two copies.
    let over = isf(
        ", \"PASSES\": [ { \"TARGET\": \"big\", \"WIDTH\": \"8192\", \"HEIGHT\": \"4097\", \"FLOAT\": true }, {} ]",
        "gl_FragColor = vec4(0.0, 0.0, 1.0, 1.0);",
    );
    let scaled = isf(
        ", \"INPUTS\": [ { \"NAME\": \"scale\", \"TYPE\": \"float\", \"MIN\": 1, \"MAX\": 100000, \"DEFAULT\": 1 } ], \
         \"PASSES\": [ { \"TARGET\": \"a\", \"WIDTH\": \"$WIDTH*$scale\", \"HEIGHT\": \"$HEIGHT*$scale\", \"FLOAT\": true }, {} ]",
        "if (PASSINDEX == 0) { gl_FragColor = vec4(0.0, 1.0, 0.0, 1.0); } else { gl_FragColor = IMG_NORM_PIXEL(a, isf_FragNormCoord); }",
    );
    let red = solid("1.0, 0.0, 0.0");
    let files = [
        ("shaders/isf/red.fs", red.as_str()),
        ("shaders/isf/over.fs", over.as_str()),
        ("shaders/isf/scaled.fs", scaled.as_str()),
    ];
    let mut show = running("hardening_passes", "red.fs", &files);
    assert!(near(frame(&mut show), [1.0, 0.0, 0.0]), "red plays");
    switch(&mut show, "isf/over.fs");
    frames_until(&mut show, "the large passes refused", |show, _| {
        support::error_messages(show)
            .iter()
            .any(|m| m.contains("at most 512 MiB"))
    });
    for _ in 0..3 {
        assert!(near(frame(&mut show), [1.0, 0.0, 0.0]), "red plays on");
    }

    // A running shader whose input asks for more keeps its buffers.
    switch(&mut show, "isf/scaled.fs");
    frames_until(&mut show, "the scaled shader plays", |_, t| {
        near(t, [0.0, 1.0, 0.0])
    });
    (show.registry)
        .set_now("shader.fx.scale", Value::Float(100_000.0), Source::Ui)
        .checked("scaling up");
    frames_until(&mut show, "the scale refused", |show, _| {
        support::error_messages(show)
            .iter()
            .any(|m| m.contains("at most 512 MiB"))
    });
    assert!(
        near(frame(&mut show), [0.0, 1.0, 0.0]),
        "it plays at its last size"
    );
}

#[test]
fn a_new_file_compiles_off_the_frame_thread_while_the_last_good_one_plays() {
    let (picture, imported) = blue_import(256);
    let (red, green) = (solid("1.0, 0.0, 0.0"), solid("0.0, 1.0, 0.0"));
    let files = [
        ("shaders/isf/red.fs", red.as_str()),
        ("shaders/isf/green.fs", green.as_str()),
        ("shaders/isf/imported.fs", imported.as_str()),
    ];
    let mut show = running("hardening_compile", "red.fs", &files);
    let root = support::out_dir().join("hardening_compile");
    std::fs::write(root.join("shaders/isf/pic.png"), &picture).checked("writing the picture");
    assert!(near(frame(&mut show), [1.0, 0.0, 0.0]), "red plays");

    // The frame that asks for a file does not wait for it.
    switch(&mut show, "isf/green.fs");
    assert!(
        near(frame(&mut show), [1.0, 0.0, 0.0]),
        "red plays while green compiles"
    );
    frames_until(&mut show, "green", |_, t| near(t, [0.0, 1.0, 0.0]));
    switch(&mut show, "isf/imported.fs");
    assert!(
        near(frame(&mut show), [0.0, 1.0, 0.0]),
        "green plays while the picture decodes"
    );
    frames_until(&mut show, "the picture", |_, t| near(t, [0.0, 0.0, 1.0]));

    // Thirty switches, one a frame: the last one wins.
    for i in 0..30 {
        let file = ["isf/red.fs", "isf/green.fs", "isf/imported.fs"][i % 3];
        switch(&mut show, file);
        frame(&mut show);
    }
    switch(&mut show, "isf/red.fs");
    frames_until(&mut show, "the last switch", |_, t| {
        near(t, [1.0, 0.0, 0.0])
    });
    for _ in 0..5 {
        assert!(near(frame(&mut show), [1.0, 0.0, 0.0]), "and it stays");
    }
    assert!(
        support::error_messages(&show).is_empty(),
        "{:?}",
        support::error_messages(&show)
    );
}

#[test]
fn a_preset_staged_over_the_network_reads_its_shaders_while_the_show_plays() {
    let (picture, imported) = blue_import(1024);
    let red = solid("1.0, 0.0, 0.0");
    let files = [
        ("shaders/isf/red.fs", red.as_str()),
        ("shaders/isf/imported.fs", imported.as_str()),
        (
            "presets/pic.toml",
            "layers = [\"shader.fx\"]\n[params]\n\"shader.fx.file\" = \"isf/imported.fs\"\n",
        ),
    ];
    let mut show = running("hardening_staging", "red.fs", &files);
    let root = support::out_dir().join("hardening_staging");
    std::fs::write(root.join("shaders/isf/pic.png"), &picture).checked("writing the picture");
    assert!(near(frame(&mut show), [1.0, 0.0, 0.0]), "red plays");

    // Asked for as a network peer or a playlist asks: the call and the
    // next frame do not wait for the picture to decode.
    show.load_show_preset("pic").checked("staging the preset");
    assert_eq!(show.arriving(), Some("pic"));
    assert!(
        near(frame(&mut show), [1.0, 0.0, 0.0]),
        "the running preset plays while the next one's picture decodes"
    );
    assert_eq!(show.preset(), Some("fx"));
    frames_until(&mut show, "the staged preset", |show, t| {
        show.preset() == Some("pic") && near(t, [0.0, 0.0, 1.0])
    });
    assert_eq!(show.arriving(), None);

    // A newer request overtakes one still on its way; the last one wins.
    show.load_show_preset("pic").checked("staging it again");
    show.load_show_preset("fx").checked("overtaking it");
    frames_until(&mut show, "the last preset asked for", |show, t| {
        show.preset() == Some("fx") && show.arriving().is_none() && near(t, [1.0, 0.0, 0.0])
    });
}
