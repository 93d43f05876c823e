//! Arithmetic expansion (`$((1024 * 1024))`) of expressions over integer literals only,
//! evaluated by riskgate itself, so the gate and the plan see the same number. Like bash:
//! 64-bit integers that wrap, `0x` hexadecimal and leading-`0` octal literals, C precedence.
//!
//! `BASE#DIGITS` for bases 2 to 36. Anything else — a variable name, `$`, a substitution,
//! assignment, `?:`, `,`, bases over 36, division by zero — is not evaluated: the word stays one the shell must expand, which
//! only a person may approve.

/// The value of `expression`, or `None` when it is not plain integer arithmetic.
pub fn evaluate(expression: &str) -> Option<i64> {
    let tokens = tokenize(expression)?;
    let mut parser = Parser { tokens, at: 0 };
    let value = parser.binary(0)?;
    (parser.at == parser.tokens.len()).then_some(value)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Number(i64),
    Op(&'static str),
}

/// Operators, longest first so `**` is not read as `*` twice.
const OPERATORS: &[&str] = &[
    "**", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "&",
    "^", "|", "!", "~", "(", ")",
];

fn tokenize(text: &str) -> Option<Vec<Token>> {
    let mut tokens = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        if rest.starts_with(|c: char| c.is_ascii_digit()) {
            let word = |from: &str| {
                from.find(|c: char| !c.is_ascii_alphanumeric())
                    .unwrap_or(from.len())
            };
            let end = word(rest);
            let value = match rest[end..].strip_prefix('#') {
                // `BASE#DIGITS` (`16#ff`, `2#1010`, `10#08`).
                Some(digits) => {
                    let digits_end = word(digits);
                    let value = based(&rest[..end], &digits[..digits_end])?;
                    rest = &digits[digits_end..];
                    value
                }
                None => {
                    let value = literal(&rest[..end])?;
                    rest = &rest[end..];
                    value
                }
            };
            tokens.push(Token::Number(value));
        } else {
            let op = OPERATORS.iter().find(|op| rest.starts_with(**op))?;
            // `a=b`, `a+=b`, `a<<=b`: assignments are refused.
            let after = &rest[op.len()..];
            if after.starts_with('=') && !matches!(*op, "<" | ">" | "!" | "=") {
                return None;
            }
            tokens.push(Token::Op(op));
            rest = after;
        }
        rest = rest.trim_start();
    }
    Some(tokens)
}

fn literal(text: &str) -> Option<i64> {
    let (digits, radix) =
        if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            (hex, 16)
        } else if text.len() > 1 && text.starts_with('0') {
            (&text[1..], 8)
        } else {
            (text, 10)
        };
    u64::from_str_radix(digits, radix).ok().map(|n| n as i64)
}

/// `BASE#DIGITS` for a decimal base from 2 to 36, whose digits bash reads as `0`-`9` then
/// `a`-`z` in either case (bases 37 to 64, where case matters and `@`, `_` are digits, are
/// left to the shell).
fn based(base: &str, digits: &str) -> Option<i64> {
    if base.starts_with('0') || digits.is_empty() {
        return None;
    }
    let radix: u32 = base.parse().ok().filter(|b| (2..=36).contains(b))?;
    u64::from_str_radix(digits, radix).ok().map(|n| n as i64)
}

/// Binding power of a binary operator (higher binds tighter), as in C and bash.
fn precedence(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | ">" | "<=" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        "**" => 11,
        _ => return None,
    })
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        token
    }

    fn peek_op(&self) -> Option<&'static str> {
        match self.tokens.get(self.at) {
            Some(Token::Op(op)) => Some(op),
            _ => None,
        }
    }

    /// Precedence climbing; `**` is right-associative, the rest left.
    fn binary(&mut self, min: u8) -> Option<i64> {
        let mut left = self.unary()?;
        while let Some(op) = self.peek_op() {
            let Some(power) = precedence(op) else { break };
            if power <= min {
                break;
            }
            self.at += 1;
            let right = self.binary(if op == "**" { power - 1 } else { power })?;
            left = apply(op, left, right)?;
        }
        Some(left)
    }

    fn unary(&mut self) -> Option<i64> {
        match self.next()? {
            Token::Number(n) => Some(n),
            Token::Op("(") => {
                let value = self.binary(0)?;
                (self.next()? == Token::Op(")")).then_some(value)
            }
            Token::Op("-") => Some(self.unary()?.wrapping_neg()),
            Token::Op("+") => self.unary(),
            Token::Op("!") => Some(i64::from(self.unary()? == 0)),
            Token::Op("~") => Some(!self.unary()?),
            Token::Op(_) => None,
        }
    }
}

fn apply(op: &str, a: i64, b: i64) -> Option<i64> {
    let truth = |x: bool| i64::from(x);
    Some(match op {
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" => a.checked_div(b)?,
        "%" => a.checked_rem(b)?,
        "**" => a.wrapping_pow(u32::try_from(b).ok()?),
        "<<" => a.wrapping_shl(u32::try_from(b).ok()?),
        ">>" => a.wrapping_shr(u32::try_from(b).ok()?),
        "<" => truth(a < b),
        ">" => truth(a > b),
        "<=" => truth(a <= b),
        ">=" => truth(a >= b),
        "==" => truth(a == b),
        "!=" => truth(a != b),
        "&" => a & b,
        "^" => a ^ b,
        "|" => a | b,
        "&&" => truth(a != 0 && b != 0),
        "||" => truth(a != 0 || b != 0),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::evaluate;

    #[test]
    fn integer_arithmetic_evaluates_like_bash() {
        for (expression, value) in [
            ("1 + 2", 3),
            ("1024 * 1024", 1_048_576),
            (" 3600 * 24 ", 86_400),
            ("10 / 3", 3),
            ("10 % 3", 1),
            ("-7 / 2", -3),
            ("2 ** 10", 1024),
            ("2 ** 3 ** 2", 512),
            ("(5 + 3) * 2", 16),
            ("1 + 2 * 3", 7),
            ("10 - 2 - 3", 5),
            ("0x10", 16),
            ("010", 8),
            ("1 << 4", 16),
            ("3 > 2 && 1", 1),
            ("!0", 1),
            ("~0", -1),
            ("-(-3)", 3),
            ("16#ff", 255),
            ("2#1010 + 1", 11),
            ("10#08", 8),
            ("36#Zz", 1295),
            ("8#17*2", 30),
        ] {
            assert_eq!(evaluate(expression), Some(value), "{expression}");
        }
    }

    #[test]
    fn anything_but_literals_is_left_to_the_shell() {
        for expression in [
            "x + 1",
            "$x",
            "$(rm x)",
            "`id`",
            "a = 5",
            "x += 1",
            "1 / 0",
            "1 % 0",
            "1 ? 2 : 3",
            "1, 2",
            "08",
            "1#1",
            "64#@",
            "37#a",
            "02#1",
            "2#102",
            "16#",
            "16#fg",
            "(1",
            "1 +",
            "",
            "2 ** -1",
        ] {
            assert_eq!(evaluate(expression), None, "{expression}");
        }
    }
}
