//! The size of an ISF pass's buffer: an arithmetic expression of
//! `$WIDTH`, `$HEIGHT` and the shader's numeric inputs (`$blurAmount`),
//! with `+ - * /`, parentheses and the functions ISF files use (`floor`,
//! `ceil`, `round`, `abs`, `min`, `max`, `pow`, `sqrt`). Evaluated every
//! frame, so a pass's size follows the render size and its inputs.

/// The largest side a pass's buffer may have.
pub const MAX_SIDE: u32 = 8192;
/// How deep an expression may nest: brackets, calls and signs.
pub const MAX_DEPTH: u32 = 64;

/// Why a size expression gives no size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// Text left after a whole expression.
    #[error("{expression:?}: unexpected text at {at}")]
    Unexpected {
        /// The expression.
        expression: String,
        /// Where, from 1.
        at: usize,
    },
    /// A value that is infinite or not a number.
    #[error("{0:?} is not a finite size")]
    NotFinite(String),
    /// An opening bracket never closed.
    #[error("a missing )")]
    MissingBracket,
    /// Nothing where a value goes.
    #[error("a number or $NAME expected at {0}")]
    Expected(usize),
    /// `$NAME` of no numeric input.
    #[error("${0} is not an input")]
    NotAnInput(String),
    /// A word that is no number and no call.
    #[error("{0:?} is neither a number nor a function")]
    Neither(String),
    /// A call with more than eight arguments.
    #[error("{0}: too many arguments")]
    TooManyArguments(String),
    /// A one-argument function called otherwise.
    #[error("{0} takes one argument")]
    OneArgument(String),
    /// A two-argument function called otherwise.
    #[error("{0} takes two arguments")]
    TwoArguments(String),
    /// A function ISF sizes do not have.
    #[error("unknown function {0:?}")]
    UnknownFunction(String),
    /// Nesting past [`MAX_DEPTH`].
    #[error("the size expression nests more than {MAX_DEPTH} deep")]
    TooDeep,
}

/// Evaluates `expression`, looking `$names` up in `lookup`.
pub fn evaluate(expression: &str, lookup: &dyn Fn(&str) -> Option<f64>) -> Result<f64, SizeError> {
    let mut parser = Parser {
        text: expression.as_bytes(),
        at: 0,
        lookup,
        depth: 0,
    };
    let value = parser.sum()?;
    parser.space();
    if parser.at != parser.text.len() {
        return Err(SizeError::Unexpected {
            expression: expression.to_string(),
            at: parser.at + 1,
        });
    }
    Ok(value)
}

/// The side in pixels an expression gives (the render's side without one),
/// at least 1 and at most [`MAX_SIDE`].
pub fn side(
    expression: Option<&str>,
    render: u32,
    lookup: &dyn Fn(&str) -> Option<f64>,
) -> Result<u32, SizeError> {
    let Some(expression) = expression else {
        return Ok(render.clamp(1, MAX_SIDE));
    };
    let value = evaluate(expression, lookup)?;
    if !value.is_finite() {
        return Err(SizeError::NotFinite(expression.to_string()));
    }
    Ok((value.floor().max(1.0) as u32).min(MAX_SIDE))
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
    lookup: &'a dyn Fn(&str) -> Option<f64>,
    depth: u32,
}

impl Parser<'_> {
    fn space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.space();
        if self.text.get(self.at) == Some(&c) {
            self.at += 1;
            return true;
        }
        false
    }

    fn sum(&mut self) -> Result<f64, SizeError> {
        let mut value = self.product()?;
        loop {
            if self.eat(b'+') {
                value += self.product()?;
            } else if self.eat(b'-') {
                value -= self.product()?;
            } else {
                return Ok(value);
            }
        }
    }

    fn product(&mut self) -> Result<f64, SizeError> {
        let mut value = self.unary()?;
        loop {
            if self.eat(b'*') {
                value *= self.unary()?;
            } else if self.eat(b'/') {
                value /= self.unary()?;
            } else {
                return Ok(value);
            }
        }
    }

    /// Signs, read in a loop (50,000 `-` once overflowed the stack by
    /// recursion), then what they apply to.
    fn unary(&mut self) -> Result<f64, SizeError> {
        let (mut negative, mut signs) = (false, 0);
        loop {
            if self.eat(b'-') {
                negative = !negative;
            } else if !self.eat(b'+') {
                break;
            }
            signs += 1;
            if self.depth + signs > MAX_DEPTH {
                return Err(too_deep());
            }
        }
        let value = self.atom()?;
        Ok(if negative { -value } else { value })
    }

    fn atom(&mut self) -> Result<f64, SizeError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(too_deep());
        }
        let value = self.atom_inner();
        self.depth -= 1;
        value
    }

    fn atom_inner(&mut self) -> Result<f64, SizeError> {
        self.space();
        if self.eat(b'(') {
            let value = self.sum()?;
            return if self.eat(b')') {
                Ok(value)
            } else {
                Err(SizeError::MissingBracket)
            };
        }
        let start = self.at;
        let word = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'$' || *c == b'.';
        while self.text.get(self.at).is_some_and(word) {
            self.at += 1;
        }
        let token = String::from_utf8_lossy(&self.text[start..self.at]).into_owned();
        if token.is_empty() {
            return Err(SizeError::Expected(start + 1));
        }
        if let Some(name) = token.strip_prefix('$') {
            return (self.lookup)(name).ok_or_else(|| SizeError::NotAnInput(name.to_string()));
        }
        if let Ok(number) = token.parse::<f64>() {
            return Ok(number);
        }
        if !self.eat(b'(') {
            return Err(SizeError::Neither(token));
        }
        let mut args = vec![self.sum()?];
        while self.eat(b',') {
            args.push(self.sum()?);
            if args.len() > 8 {
                return Err(SizeError::TooManyArguments(token));
            }
        }
        if !self.eat(b')') {
            return Err(SizeError::MissingBracket);
        }
        let one = |f: fn(f64) -> f64| match args[..] {
            [x] => Ok(f(x)),
            _ => Err(SizeError::OneArgument(token.clone())),
        };
        let two = |f: fn(f64, f64) -> f64| match args[..] {
            [x, y] => Ok(f(x, y)),
            _ => Err(SizeError::TwoArguments(token.clone())),
        };
        match token.as_str() {
            "floor" => one(f64::floor),
            "ceil" => one(f64::ceil),
            "round" => one(f64::round),
            "abs" => one(f64::abs),
            "sqrt" => one(f64::sqrt),
            "min" => two(f64::min),
            "max" => two(f64::max),
            "pow" => two(f64::powf),
            _ => Err(SizeError::UnknownFunction(token.clone())),
        }
    }
}

fn too_deep() -> SizeError {
    SizeError::TooDeep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_render_and_the_inputs() {
        let lookup = |name: &str| match name {
            "WIDTH" => Some(1920.0),
            "HEIGHT" => Some(1080.0),
            "blur" => Some(4.0),
            _ => None,
        };
        let value = |e: &str| evaluate(e, &lookup);
        assert_eq!(value("$WIDTH / 2.0"), Ok(960.0));
        assert_eq!(value("max($HEIGHT/486.0,1.0)"), Ok(1080.0 / 486.0));
        assert_eq!(value("floor($WIDTH/$blur) + -(2*3)"), Ok(474.0));
        assert_eq!(side(Some("$WIDTH*100"), 1920, &lookup), Ok(MAX_SIDE));
        assert_eq!(side(Some("0.2"), 1920, &lookup), Ok(1));
        assert_eq!(side(None, 640, &lookup), Ok(640));
        assert!(value("$nope").is_err());
        assert!(value("(1 + 2").is_err());
        assert!(value("exp(2)").is_err());
        assert!(side(Some("1/0 - 1/0"), 10, &lookup).is_err());
        assert!(value(&"(".repeat(1000)).is_err());
        assert_eq!(value("- - -+-1"), Ok(1.0));
        for signs in ["-", "+", "- ", "-+"] {
            let deep = format!("{}$WIDTH", signs.repeat(50_000));
            assert!(value(&deep).is_err_and(|e| e.to_string().contains("nests more than 64")));
        }
        let mixed = format!("{}1{}", "-(".repeat(70), ")".repeat(70));
        assert!(value(&mixed).is_err());
    }
}
