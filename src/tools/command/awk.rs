//! Whether an awk program only reads its input and prints to standard output.
//!
//! The program is read as tokens (strings, regular expressions, comments, words and
//! operators kept apart, so `/a|b/` and `"x > y"` are no redirections). It is print-only
//! when it has none of the ways awk reaches outside: `system(...)`, output redirections and
//! pipes after `print`/`printf` (`> "file"`, `>> "file"`, `| "cmd"`, `|&`; `> "/dev/stderr"`
//! and `> "/dev/stdout"` are fine), `getline` from a file or a command, `close` is harmless,
//! `ENVIRON` (the command's environment), and gawk's `@load`/`@include`. A `>` outside
//! `print` is a comparison.

/// Why the awk program `code` is not known to only print, or `None`.
pub(super) fn print_only_problem(code: &str) -> Option<String> {
    let Some(tokens) = tokenize(code) else {
        return Some("could not be read (a string or regular expression never ends)".to_owned());
    };
    let mut in_print = false;
    // Parentheses opened since `print`: a `>` inside them is a comparison.
    let mut depth = 0usize;
    for (index, token) in tokens.iter().enumerate() {
        let next = tokens.get(index + 1);
        match token {
            Token::Word(word) => match word.as_str() {
                "print" | "printf" => {
                    in_print = true;
                    depth = 0;
                }
                "system" => return Some("runs a shell command (`system`)".to_owned()),
                "ENVIRON" => {
                    return Some(
                        "reads the environment (`ENVIRON`), which may hold secrets".to_owned(),
                    );
                }
                "getline"
                    if tokens[index + 1..]
                        .iter()
                        .take(2)
                        .any(|t| matches!(t, Token::Op(op) if op == "<")) =>
                {
                    return Some("reads a file with `getline <`".to_owned());
                }
                _ => {}
            },
            Token::At => return Some("loads code with `@load` or `@include`".to_owned()),
            Token::Op(op) => match op.as_str() {
                "(" => depth += 1,
                ")" => depth = depth.saturating_sub(1),
                ";" | "{" | "}" | "\n" => in_print = false,
                "|" | "|&" => {
                    return Some(format!("pipes to or from a command with `{op}`"));
                }
                ">" | ">>" if in_print && depth == 0 => match next {
                    Some(Token::Str(target))
                        if matches!(target.as_str(), "/dev/stdout" | "/dev/stderr") => {}
                    _ => return Some(format!("redirects its output with `{op}`")),
                },
                _ => {}
            },
            Token::Str(_) | Token::Regex | Token::Number => {}
        }
    }
    None
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Str(String),
    Regex,
    Number,
    /// `@`, which starts gawk's directives.
    At,
    Op(String),
}

/// Splits the program into tokens; `None` when a string or regex never ends (the program
/// is then not understood, and not print-only).
fn tokenize(code: &str) -> Option<Vec<Token>> {
    let chars: Vec<char> = code.chars().collect();
    let mut tokens = Vec::new();
    let mut at = 0;
    while let Some(&c) = chars.get(at) {
        // Whether a `/` here starts a regex: not after an operand.
        let operand_before = matches!(
            tokens.last(),
            Some(Token::Word(_) | Token::Str(_) | Token::Number | Token::Regex)
        ) || matches!(tokens.last(), Some(Token::Op(op)) if op == ")" || op == "]" || op == "$");
        match c {
            '#' => {
                while chars.get(at).is_some_and(|c| *c != '\n') {
                    at += 1;
                }
            }
            ' ' | '\t' | '\r' => at += 1,
            '\\' if chars.get(at + 1) == Some(&'\n') => at += 2,
            '"' => {
                let (text, end) = delimited(&chars, at, '"')?;
                tokens.push(Token::Str(text));
                at = end;
            }
            '/' if !operand_before => {
                let (_, end) = delimited(&chars, at, '/')?;
                tokens.push(Token::Regex);
                at = end;
            }
            '@' => {
                tokens.push(Token::At);
                at += 1;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = at;
                while chars
                    .get(at)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    at += 1;
                }
                tokens.push(Token::Word(chars[start..at].iter().collect()));
            }
            c if c.is_ascii_digit() || c == '.' => {
                while chars
                    .get(at)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '.')
                {
                    at += 1;
                }
                tokens.push(Token::Number);
            }
            _ => {
                let two: String = chars[at..(at + 2).min(chars.len())].iter().collect();
                let op = if matches!(
                    two.as_str(),
                    ">>" | "|&" | "||" | "&&" | ">=" | "<=" | "==" | "!="
                ) {
                    two
                } else {
                    c.to_string()
                };
                at += op.chars().count();
                tokens.push(Token::Op(op));
            }
        }
    }
    Some(tokens)
}

/// The text of a string or regex starting at `start` (the opening `delimiter`), escapes
/// kept as written except `\"`, and the index after its end.
fn delimited(chars: &[char], start: usize, delimiter: char) -> Option<(String, usize)> {
    let mut text = String::new();
    let mut at = start + 1;
    let mut in_bracket = false;
    loop {
        let c = *chars.get(at)?;
        match c {
            '\\' => {
                let escaped = *chars.get(at + 1)?;
                if escaped != delimiter {
                    text.push('\\');
                }
                text.push(escaped);
                at += 2;
                continue;
            }
            '\n' => return None,
            '[' if delimiter == '/' => in_bracket = true,
            ']' if delimiter == '/' => in_bracket = false,
            c if c == delimiter && !in_bracket => return Some((text, at + 1)),
            _ => {}
        }
        text.push(c);
        at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::print_only_problem;

    #[test]
    fn programs_that_only_print_pass() {
        for code in [
            "{print $1}",
            "NR==1",
            "$3 > 100 {print $1}",
            "{sum += $2} END {print sum}",
            "/error|warn/ {count++} END {print count}",
            "{ printf \"%-10s %s\\n\", $1, $2 }",
            "{print > \"/dev/stderr\"}",
            "{print (a > b)}",
            "{gsub(/a/, \"b\"); print}",
            "BEGIN { x = 10; y = 3; print x / y }",
            "{ x = \"a > b | c\" }",
            "length > 80",
            "!seen[$0]++",
            "# comment with system(\"x\")\n{print}",
            "$1 ~ /^[0-9]+$/",
            "{ print a[1] / 2 / 3 }",
            "NR % 2 == 0 || NR == 1",
        ] {
            assert_eq!(print_only_problem(code), None, "{code}");
        }
    }

    #[test]
    fn programs_that_reach_outside_are_caught() {
        for code in [
            "{system(\"rm x\")}",
            "{print > \"f\"}",
            "{print $1 >> \"out.txt\"}",
            "{print | \"sh\"}",
            "BEGIN {\"date\" | getline d}",
            "BEGIN {while ((getline line < \"/etc/shadow\") > 0) print line}",
            "BEGIN {print ENVIRON[\"HOME\"]}",
            "{printf \"%s\", $0 > $1}",
            "{print $1 > out}",
            "@load \"filefuncs\"",
            "{print |& \"cat\"}",
            "{print \"unterminated}",
        ] {
            assert!(print_only_problem(code).is_some(), "{code}");
        }
    }
}
