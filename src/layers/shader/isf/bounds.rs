//! What a GLSL stage must keep within before naga's front end reads it.
//! That front end parses and lowers by recursion: 20,000 nested
//! parentheses, a chain of 20,000 `+`, `- - - x` or `else if`, overflow
//! the stack, which aborts the process (no `catch_unwind` catches it), and
//! its time grows faster than the text, so a macro that doubles eighteen
//! times froze the show for 44 s. So a stage is measured first: its size,
//! its nesting as written, what its macros can expand to ([`macros`],
//! without expanding them), then the preprocessor's own output, counted
//! and measured token by token; and the front end itself runs on a thread
//! of its own with a stack far deeper than these bounds need
//! ([`on_large_stack`]), whoever calls it (the layer's compiler, `sylva
//! check`, a preset being staged).

use pp_rs::pp::Preprocessor;
use pp_rs::token::{Punct, TokenValue};

use super::macros::{self, Raw};

/// Bytes of GLSL one stage may have, sylva's prelude included.
pub const MAX_GLSL_BYTES: usize = 512 << 10;
/// How deep a stage may nest: brackets, plus the operators and `if`,
/// `for`, `while`, `else` chained in one statement, which the front end
/// nests as deep as brackets.
pub const MAX_NESTING: usize = 256;
/// Tokens one stage may have once its macros are expanded.
pub const MAX_TOKENS: u64 = 65_536;
/// The stack translation runs on: at most about 4 KiB a level of
/// [`MAX_NESTING`] was measured, so this is a wide margin, and only
/// what is used is ever touched.
const STACK_BYTES: usize = 64 << 20;

/// Why a stage is refused: its line in `source` (0: none) and what is
/// wrong.
pub type Refusal = (usize, String);

/// Checks `source`, one whole stage as naga would read it.
pub fn check(source: &str) -> Result<(), Refusal> {
    if source.len() > MAX_GLSL_BYTES {
        return Err((
            0,
            format!(
                "{} KiB of GLSL; at most {} KiB a stage",
                source.len().div_ceil(1024),
                MAX_GLSL_BYTES >> 10
            ),
        ));
    }
    let lines = macros::logical_lines(source);
    let lexed = macros::lex(&lines);
    let (code, at): (Vec<Raw<'_>>, Vec<usize>) = lexed.code.iter().copied().unzip();
    written_nesting(&code, &at)?;
    for (body, line) in lexed.macro_bodies() {
        written_nesting(body, &[]).map_err(|(_, why)| (line, format!("this macro: {why}")))?;
    }
    lexed.expanded_tokens(MAX_TOKENS)?;
    expanded(source)
}

/// The brackets as written (which bound the preprocessor's own recursion
/// through nested macro calls).
fn written_nesting(tokens: &[Raw<'_>], lines: &[usize]) -> Result<(), Refusal> {
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Raw::Open(_) => depth += 1,
            Raw::Close(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > MAX_NESTING {
            return Err((lines.get(i).copied().unwrap_or(0), too_deep()));
        }
    }
    Ok(())
}

fn too_deep() -> String {
    format!(
        "nests more than {MAX_NESTING} deep (brackets, or operators, `if`s and `else`s \
         chained in one statement): split it"
    )
}

/// One open bracket (or the file) as the nesting measure reads it.
#[derive(Default)]
struct Group {
    /// Operators and statement keywords since its last `;` or `,`.
    operators: usize,
    /// `else`s chained since the last statement that no `else` followed.
    elses: usize,
}

/// The preprocessor's output: at most [`MAX_TOKENS`] tokens, nesting at
/// most [`MAX_NESTING`] deep. A preprocessor error is left for naga,
/// which reports it at its line.
fn expanded(source: &str) -> Result<(), Refusal> {
    let line = |start: u32| {
        source[..(start as usize).min(source.len())]
            .matches('\n')
            .count()
            + 1
    };
    let mut groups = vec![Group::default()];
    let (mut count, mut depth) = (0u64, 0usize);
    let mut ended = false;
    for token in Preprocessor::new(source) {
        let Ok(token) = token else {
            return Ok(());
        };
        count += 1;
        if count > MAX_TOKENS {
            return Err((
                line(token.location.start),
                format!("more than {MAX_TOKENS} tokens once its macros are expanded"),
            ));
        }
        let is_else = matches!(&token.value, TokenValue::Ident(word) if word == "else");
        // A statement ends at its `;` or `}` unless an `else` follows.
        if std::mem::take(&mut ended)
            && !is_else
            && let Some(group) = groups.last_mut()
        {
            depth = depth.saturating_sub(group.operators + group.elses);
            *group = Group::default();
        }
        let Some(group) = groups.last_mut() else {
            return Ok(());
        };
        match &token.value {
            TokenValue::Punct(Punct::LeftParen | Punct::LeftBracket | Punct::LeftBrace) => {
                groups.push(Group::default());
                depth += 1;
            }
            TokenValue::Punct(
                close @ (Punct::RightParen | Punct::RightBracket | Punct::RightBrace),
            ) => {
                if groups.len() > 1
                    && let Some(inner) = groups.pop()
                {
                    depth = depth.saturating_sub(1 + inner.operators + inner.elses);
                }
                ended = *close == Punct::RightBrace;
            }
            TokenValue::Punct(Punct::Semicolon | Punct::Comma) => {
                depth = depth.saturating_sub(group.operators);
                group.operators = 0;
                ended = true;
            }
            TokenValue::Punct(_) => {
                group.operators += 1;
                depth += 1;
            }
            TokenValue::Ident(_) if is_else => {
                group.elses += 1;
                depth += 1;
            }
            TokenValue::Ident(word)
                if matches!(word.as_str(), "if" | "for" | "while" | "do" | "switch") =>
            {
                group.operators += 1;
                depth += 1;
            }
            _ => {}
        }
        if depth > MAX_NESTING {
            return Err((line(token.location.start), too_deep()));
        }
    }
    Ok(())
}

/// Runs `work` on a thread with a deep stack and waits for it: `None`
/// where it panicked or no thread could be made. The caller's thread may
/// be a test's (2 MiB) or the frame loop's.
pub fn on_large_stack<T: Send>(work: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("sylva-glsl".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, work)
            .ok()?;
        thread.join().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(body: &str) -> String {
        format!("#version 450\nlayout(location = 0) out vec4 c;\nvoid main() {{\n{body}\n}}\n")
    }

    fn refused(body: &str) -> String {
        match check(&stage(body)) {
            Err((line, why)) => format!("{line}: {why}"),
            Ok(()) => panic!("refused: {}", &body[..body.len().min(80)]),
        }
    }

    #[test]
    fn ordinary_shaders_pass() {
        let body = "float x = 0.0;\n\
                    for (int i = 0; i < 4; i++) { if (x > 1.0) { x -= 1.0; } else if (x < 0.0) { x = 0.0; } else { x += 0.5; } }\n\
                    c = vec4(x * 2.0 + 1.0 - x / 3.0, -x, !(x > 0.5) ? 1.0 : 0.0, 1.0);";
        assert_eq!(check(&stage(body)), Ok(()));
        let many: String = (0..300)
            .map(|i| format!("if (x > {i}.0) {{ x -= 1.0; }}\n"))
            .collect();
        assert_eq!(
            check(&stage(&format!("float x = 9.0;\n{many}c = vec4(x);"))),
            Ok(())
        );
        let list = format!("float a[300] = float[]({});", vec!["1.0"; 300].join(", "));
        assert_eq!(check(&stage(&list)), Ok(()));
    }

    #[test]
    fn every_kind_of_deep_nesting_is_refused_at_its_line() {
        let n = MAX_NESTING + 1;
        let deep = [
            format!("float x = {}1.0{};", "(".repeat(n), ")".repeat(n)),
            format!(
                "float a[2]; float x = a{}0{};",
                "[".repeat(n),
                "]".repeat(n)
            ),
            format!(
                "float x = 0.0; {} x = 1.0; {}",
                "{".repeat(n),
                "}".repeat(n)
            ),
            format!("float x = {}1.0;", "- ".repeat(n)),
            format!("bool b = {}true;", "!".repeat(n)),
            format!("float x = 1.0{};", " + x".repeat(n)),
            format!("vec4 v = vec4(1.0); float x = v{}.x;", ".xyzw".repeat(n)),
            format!("float x = {}1.0;", "true ? 1.0 : ".repeat(n)),
            format!("float x = 0.0; {}x = 1.0;", "if (x < 1.0) ".repeat(n)),
            format!(
                "float x = 0.0; if (x < 0.0) x = 1.0; {}",
                "else if (x < 1.0) x = 2.0; ".repeat(n)
            ),
            format!("float x = {}1.0{};", "abs(".repeat(n), ")".repeat(n)),
        ];
        for body in &deep {
            let why = refused(body);
            assert!(why.starts_with("4: nests more than 256 deep"), "{why}");
        }
        // Nesting a macro makes, and nesting inside a macro.
        let made = format!(
            "#define O ((((((((\n#define C ))))))))\nfloat x = {}1.0{};",
            "O ".repeat(40),
            "C ".repeat(40)
        );
        assert!(refused(&made).contains("nests more than 256"));
        let inside = format!(
            "#define D {}1{}\nfloat x = D;",
            "(".repeat(n),
            ")".repeat(n)
        );
        assert!(refused(&inside).starts_with("4: this macro: nests"));
    }

    #[test]
    fn size_and_expansion_are_refused_before_parsing() {
        let big = format!("float x = 1.0;{}", " ".repeat(MAX_GLSL_BYTES));
        assert!(refused(&big).contains("at most 512 KiB"));
        let mut bomb = String::new();
        for i in 1..=18 {
            bomb.push_str(&format!("#define A{i} (A{p}+A{p})\n", p = i - 1));
        }
        let bomb = format!("#define A0 1.0\n{bomb}float x = A18;");
        assert!(refused(&bomb).contains("more than 65536 tokens once its macros are expanded"));
        // Many statements, none deep: the count once expanded.
        let long = format!(
            "float x = 0.0;\n#define S x += 1.0; x -= 0.5; x *= 2.0; x /= 2.0;\n{}",
            "S S S S\n".repeat(1100)
        );
        assert!(refused(&long).contains("more than 65536 tokens"));
    }

    #[test]
    fn a_deep_stack_runs_what_a_small_one_cannot() {
        assert_eq!(on_large_stack(|| 7), Some(7));
        assert_eq!(on_large_stack(|| -> u8 { panic!("inside") }), None);
    }
}
