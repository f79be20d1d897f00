//! What the GLSL preprocessor would make of a text, measured before it
//! runs: the text's own nesting, and an upper bound on the tokens its
//! macros expand to. pp-rs (the preprocessor naga's GLSL front end runs)
//! expands a function-like macro's arguments whole before it uses them, so
//! a doubling macro nested twenty deep, or applied to another that doubles,
//! would fill memory inside it, where nothing can count; this bound comes
//! first, from the `#define`s alone. It over-counts on purpose: every
//! `#define` of a name counts, whatever `#if` it sits under (the largest
//! wins), and an argument counts once at least, even where the macro drops
//! it.

use std::collections::HashMap;

/// Macros that expand macros, at most this deep.
pub const MAX_MACRO_DEPTH: usize = 64;
/// Steps the measure itself may take, so a tangle of macros is refused
/// rather than measured for ever.
const MAX_STEPS: u64 = 2_000_000;

/// A token as the measure sees it: names and brackets matter, the rest
/// only counts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Raw<'a> {
    /// A name.
    Ident(&'a str),
    /// `(`, `[` or `{`.
    Open(u8),
    /// `)`, `]` or `}`.
    Close(u8),
    /// Anything else.
    Other,
}

/// A `#define`: its parameters (none: object-like), its body and its
/// line.
struct Macro<'a> {
    params: Option<Vec<&'a str>>,
    body: Vec<Raw<'a>>,
    line: usize,
}

/// A text split for the measure: its code as one stream (with each
/// token's line) and its `#define`s by name. `#if` and `#elif` lines
/// count as code, since the preprocessor expands macros in them too.
pub struct Lexed<'a> {
    /// The code's tokens and their 1-based lines.
    pub code: Vec<(Raw<'a>, usize)>,
    defines: HashMap<&'a str, Vec<Macro<'a>>>,
}

/// The logical lines of `source`: comments blanked, continued lines
/// joined, each with the line it starts on.
pub fn logical_lines(source: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let (mut text, mut start, mut line) = (String::new(), 1, 1);
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek().copied()) {
            ('/', Some('/')) => {
                while chars.peek().is_some_and(|c| *c != '\n') {
                    chars.next();
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        line += 1;
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                text.push(' ');
            }
            ('\\', Some('\n')) => {
                chars.next();
                line += 1;
            }
            ('\n', _) => {
                lines.push((start, std::mem::take(&mut text)));
                line += 1;
                start = line;
            }
            _ => text.push(c),
        }
    }
    lines.push((start, text));
    lines
}

/// The tokens of one line of code.
pub fn tokens(text: &str) -> Vec<Raw<'_>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    while let Some(&b) = bytes.get(at) {
        let start = at;
        at += 1;
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                while bytes.get(at).copied().is_some_and(word) {
                    at += 1;
                }
                out.push(Raw::Ident(&text[start..at]));
            }
            b'0'..=b'9' => {
                while bytes.get(at).is_some_and(|b| word(*b) || *b == b'.') {
                    at += 1;
                }
                out.push(Raw::Other);
            }
            b'(' | b'[' | b'{' => out.push(Raw::Open(b)),
            b')' | b']' | b'}' => out.push(Raw::Close(b)),
            _ if b.is_ascii_whitespace() || !b.is_ascii() => {}
            _ => out.push(Raw::Other),
        }
    }
    out
}

/// Splits the logical `lines` of a text into code and `#define`s.
pub fn lex(lines: &[(usize, String)]) -> Lexed<'_> {
    let mut lexed = Lexed {
        code: Vec::new(),
        defines: HashMap::new(),
    };
    for (line, text) in lines {
        let Some(directive) = text.trim_start().strip_prefix('#') else {
            lexed
                .code
                .extend(tokens(text).into_iter().map(|t| (t, *line)));
            continue;
        };
        let directive = directive.trim_start();
        let word_end = directive
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(directive.len());
        let rest = &directive[word_end..];
        match &directive[..word_end] {
            "if" | "elif" => lexed
                .code
                .extend(tokens(rest).into_iter().map(|t| (t, *line))),
            "define" => {
                if let Some((name, definition)) = define(rest, *line) {
                    lexed.defines.entry(name).or_default().push(definition);
                }
            }
            _ => {}
        }
    }
    lexed
}

/// The name and the macro of a `#define`'s text after the word.
fn define(rest: &str, line: usize) -> Option<(&str, Macro<'_>)> {
    let rest = rest.trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(end);
    if name.is_empty() {
        return None;
    }
    // A function-like macro's `(` follows its name with no space.
    let (params, body) = match after.strip_prefix('(') {
        Some(list) => {
            let (list, body) = list.split_once(')')?;
            let params = list.split(',').map(str::trim).filter(|p| !p.is_empty());
            (Some(params.collect()), body)
        }
        None => (None, after),
    };
    Some((
        name,
        Macro {
            params,
            body: tokens(body),
            line,
        },
    ))
}

impl<'a> Lexed<'a> {
    /// Each macro's body and its line, for measuring its nesting.
    pub fn macro_bodies(&self) -> impl Iterator<Item = (&[Raw<'a>], usize)> {
        (self.defines.values().flatten()).map(|m| (m.body.as_slice(), m.line))
    }

    /// The most tokens the code can expand to, or the line where it
    /// passes `budget` and why.
    pub fn expanded_tokens(&self, budget: u64) -> Result<u64, (usize, String)> {
        let mut audit = Audit {
            defines: &self.defines,
            memo: HashMap::new(),
            active: Vec::new(),
            lowest: usize::MAX,
            steps: 0,
            outermost_call: None,
        };
        let (code, lines): (Vec<Raw<'a>>, Vec<usize>) = self.code.iter().copied().unzip();
        let total = audit
            .measure(&code, &[], Some((&lines, budget)))
            .map_err(|(line, why)| (line.unwrap_or(0), why))?;
        Ok(total.fixed)
    }
}

/// How many tokens a text expands to, as `fixed + per_arg × X` where X
/// is the size of the arguments of the macro whose body it is.
#[derive(Clone, Copy, Default, PartialEq, Debug)]
struct Size {
    fixed: u64,
    per_arg: u64,
}

impl Size {
    const ONE: Size = Size {
        fixed: 1,
        per_arg: 0,
    };
    const ARG: Size = Size {
        fixed: 0,
        per_arg: 1,
    };

    fn plus(self, other: Size) -> Size {
        Size {
            fixed: self.fixed.saturating_add(other.fixed),
            per_arg: self.per_arg.saturating_add(other.per_arg),
        }
    }

    fn max(self, other: Size) -> Size {
        Size {
            fixed: self.fixed.max(other.fixed),
            per_arg: self.per_arg.max(other.per_arg),
        }
    }

    /// A macro of this size called with arguments of size `args`: the
    /// preprocessor expands the arguments whole first, so they count once
    /// even where the body drops them.
    fn applied(self, args: Size) -> Size {
        let times = self.per_arg.max(1);
        Size {
            fixed: self.fixed.saturating_add(times.saturating_mul(args.fixed)),
            per_arg: times.saturating_mul(args.per_arg),
        }
    }
}

/// What a name expands to: as an object-like macro, and called.
#[derive(Clone, Copy, Default)]
struct Expansion {
    object: Option<u64>,
    function: Option<Size>,
}

/// A macro call being read: the macro's size and its arguments' so far.
struct Call {
    callee: Size,
    args: Size,
    parens: u32,
}

type Problem = (Option<usize>, String);

struct Audit<'d, 'a> {
    defines: &'d HashMap<&'a str, Vec<Macro<'a>>>,
    /// Sizes that hold whatever is being expanded.
    memo: HashMap<&'a str, Expansion>,
    /// The macros being expanded, outermost first: the preprocessor does
    /// not expand these again.
    active: Vec<&'a str>,
    /// The outermost of `active` a measure met, which its size then
    /// depends on.
    lowest: usize,
    steps: u64,
    /// [`Audit::any_call`] in the code itself, where no macro is being
    /// expanded, found once.
    outermost_call: Option<Size>,
}

impl<'a> Audit<'_, 'a> {
    /// The size of `tokens`, the body of a macro with `params` (or the
    /// code, with its lines and the budget it must keep).
    fn measure(
        &mut self,
        tokens: &[Raw<'a>],
        params: &[&'a str],
        code: Option<(&[usize], u64)>,
    ) -> Result<Size, Problem> {
        let mut calls = vec![Call {
            callee: Size::default(),
            args: Size::default(),
            parens: 0,
        }];
        let mut opening = false;
        for (i, token) in tokens.iter().enumerate() {
            // The `(` that opens a call is the call's, not its argument's.
            if std::mem::take(&mut opening) {
                continue;
            }
            let line = code.map(|(lines, _)| lines.get(i).copied().unwrap_or(0));
            let here = |(at, why): Problem| (at.or(line), why);
            self.step().map_err(here)?;
            let called = tokens.get(i + 1) == Some(&Raw::Open(b'('));
            let mut add = Size::ONE;
            let mut call = None;
            match *token {
                Raw::Ident(name) if params.contains(&name) => {
                    add = Size::ARG;
                    // The argument may name a macro that the `(` calls.
                    if called {
                        call = Some(self.any_call().map_err(here)?);
                    }
                }
                Raw::Ident(name) => {
                    if let Some(e) = self.expansion(name).map_err(here)? {
                        // A called macro's name goes; an object-like
                        // one's body stands for it.
                        add.fixed = match (called, e.function) {
                            (true, Some(_)) => e.object.unwrap_or(0),
                            _ => e.object.unwrap_or(1),
                        };
                        call = match (called, e.function, e.object) {
                            (false, ..) => None,
                            (true, Some(f), _) => Some(f),
                            // What it expands to may end in a macro's name.
                            (true, None, _) => Some(self.any_call().map_err(here)?),
                        };
                    }
                }
                Raw::Open(b'(') => calls.last_mut().into_iter().for_each(|c| c.parens += 1),
                Raw::Close(b')') => {
                    let ends = calls.len() > 1 && calls.last().is_some_and(|c| c.parens == 0);
                    if ends && let Some(done) = calls.pop() {
                        add = done.callee.applied(done.args);
                        if let Some((_, budget)) = code
                            && add.fixed > budget
                        {
                            return Err((line, too_many(budget)));
                        }
                        // A call may expand to a macro's name that the
                        // next `(` calls.
                        if called {
                            call = Some(self.any_call().map_err(here)?);
                        }
                    } else if let Some(c) = calls.last_mut() {
                        c.parens = c.parens.saturating_sub(1);
                    }
                }
                _ => {}
            }
            if let Some(c) = calls.last_mut() {
                c.args = c.args.plus(add);
            }
            if let Some(callee) = call {
                opening = true;
                calls.push(Call {
                    callee,
                    args: Size::default(),
                    parens: 0,
                });
            }
            if let (Some((_, budget)), Some(outer)) = (code, calls.first())
                && outer.args.fixed > budget
            {
                return Err((line, too_many(budget)));
            }
        }
        // Calls never closed: the preprocessor refuses them; count them.
        let mut total = Size::default();
        while let Some(call) = calls.pop() {
            total = if calls.is_empty() {
                total.plus(call.args)
            } else {
                call.callee.applied(call.args.plus(total))
            };
        }
        match code {
            Some((lines, budget)) if total.fixed > budget => {
                Err((lines.last().copied(), too_many(budget)))
            }
            _ => Ok(total),
        }
    }

    /// What `name` expands to, if it is a macro (and not being expanded).
    fn expansion(&mut self, name: &'a str) -> Result<Option<Expansion>, Problem> {
        let defines = self.defines;
        let Some(macros) = defines.get(name) else {
            return Ok(None);
        };
        if let Some(at) = self.active.iter().position(|a| *a == name) {
            self.lowest = self.lowest.min(at);
            return Ok(None);
        }
        if let Some(known) = self.memo.get(name) {
            return Ok(Some(*known));
        }
        if self.active.len() >= MAX_MACRO_DEPTH {
            return Err((
                None,
                format!("macros expand macros more than {MAX_MACRO_DEPTH} deep"),
            ));
        }
        let index = self.active.len();
        self.active.push(name);
        let outer = std::mem::replace(&mut self.lowest, usize::MAX);
        let mut expansion = Expansion::default();
        for definition in macros {
            let params = definition.params.as_deref();
            let size = self.measure(&definition.body, params.unwrap_or(&[]), None);
            let size = size.map_err(|(at, why)| {
                self.active.pop();
                (at.or(Some(definition.line)), why)
            })?;
            match params {
                None => expansion.object = Some(expansion.object.unwrap_or(0).max(size.fixed)),
                Some(_) => {
                    expansion.function = Some(expansion.function.unwrap_or_default().max(size));
                }
            }
        }
        self.active.pop();
        // A size that met a macro being expanded further out holds only
        // while that one is.
        if self.lowest >= index {
            self.memo.insert(name, expansion);
            self.lowest = outer;
        } else {
            self.lowest = self.lowest.min(outer);
        }
        Ok(Some(expansion))
    }

    /// A call whose macro is known only once the text is expanded: the
    /// largest of the function-like macros it may be.
    fn any_call(&mut self) -> Result<Size, Problem> {
        if let Some(known) = self.outermost_call.filter(|_| self.active.is_empty()) {
            return Ok(known);
        }
        let defines = self.defines;
        let mut largest = Size::ARG;
        for (name, macros) in defines {
            self.step()?;
            if macros.iter().any(|m| m.params.is_some())
                && let Some(Expansion {
                    function: Some(size),
                    ..
                }) = self.expansion(name)?
            {
                largest = largest.max(size);
            }
        }
        if self.active.is_empty() {
            self.outermost_call = Some(largest);
        }
        Ok(largest)
    }

    /// One step more of the measure, within [`MAX_STEPS`].
    fn step(&mut self) -> Result<(), Problem> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err((None, "its macros are too intricate to measure".into()));
        }
        Ok(())
    }
}

fn too_many(budget: u64) -> String {
    format!("more than {budget} tokens once its macros are expanded")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measure(text: &str) -> Result<u64, (usize, String)> {
        let lines = logical_lines(text);
        lex(&lines).expanded_tokens(1 << 20)
    }

    #[test]
    fn plain_code_counts_its_tokens_and_macros_their_expansion() {
        assert_eq!(measure("float x = 1.0; // (((( \n/* [[[ */ x;"), Ok(7));
        assert_eq!(measure("#define PI 3.14159\nfloat x = PI * PI;"), Ok(7));
        assert_eq!(measure("#define D(a) (a + a)\nx = D(y);"), Ok(3 + 5));
        assert_eq!(
            measure("#define D(a) (a + a)\nx = D(D(y));"),
            Ok(3 + 3 + 2 * 5)
        );
        // The argument counts where the body drops it.
        assert_eq!(
            measure("#define Z(a) 0\n#define B (1+1)\nx = Z(B);"),
            Ok(3 + 6)
        );
        // A macro met inside itself stays a name, as the preprocessor
        // leaves it.
        assert_eq!(measure("#define R R + 1\nx = R;"), Ok(3 + 3));
    }

    #[test]
    fn doubling_macros_are_measured_without_expanding_them() {
        let mut text = String::from("#define A0 1.0\n");
        for i in 1..=40 {
            text.push_str(&format!("#define A{i} (A{p}+A{p})\n", p = i - 1));
        }
        text.push_str("x = A40;");
        let Err((line, why)) = measure(&text) else {
            panic!("a doubling bomb is refused");
        };
        assert_eq!(line, 42);
        assert!(why.contains("more than 1048576 tokens once"), "{why}");
        let nested = format!(
            "#define F(a) (a+a)\nx = {}1{};",
            "F(".repeat(40),
            ")".repeat(40)
        );
        assert!(measure(&nested).is_err());
        // Through an argument that names the macro, and a name an object
        // expands to.
        let apply = format!(
            "#define F(a) (a+a+a+a)\n#define AP(f, x) f(x)\n#define G F\nx = {}1{};",
            "AP(G, ".repeat(12),
            ")".repeat(12)
        );
        assert!(measure(&apply).is_err());
        // Many macros, each called through an alias many times: the
        // measure stops rather than search them all each time.
        let many: String = (0..20_000)
            .map(|i| format!("#define F{i}(a) a\n"))
            .collect::<String>()
            + "#define G F0\nx = "
            + &"G(1) + ".repeat(20_000)
            + "1;";
        assert!(measure(&many).is_ok_and(|n| n > 20_000));
        let chain: String = (1..=100)
            .map(|i| format!("#define C{i} C{}\n", i - 1))
            .collect::<String>()
            + "x = C100;";
        assert!(measure(&chain).is_err_and(|(_, why)| why.contains("64 deep")));
    }
}
