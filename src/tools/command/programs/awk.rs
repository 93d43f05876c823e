//! `awk` (and `gawk`, `mawk`, `nawk`): read-only when its program only prints, given as a
//! plain word with options that only set variables and separators, reading files in the
//! workspace. The shell commands a program runs (`system("cmd")`, `print | "cmd"`,
//! `"cmd" | getline`) are judged on their own; `print > "file"` writes a file.
//!
//! Whether an awk program only reads its input and prints to standard output.
//!
//! The program is read as tokens (strings, regular expressions, comments, words and
//! operators kept apart, so `/a|b/` and `"x > y"` are no redirections). It is print-only
//! when it has none of the ways awk reaches outside: `system(...)`, output redirections and
//! pipes after `print`/`printf` (`> "file"`, `>> "file"`, `| "cmd"`, `|&`; `> "/dev/stderr"`
//! and `> "/dev/stdout"` are fine), `getline` from a file or a command, `close` is harmless,
//! `ENVIRON` (the command's environment), and gawk's `@load`/`@include`. A `>` outside
//! `print` is a comparison.

use super::interpreters::{embedded_commands, string_literals_after, string_literals_before};
use super::shells::is_name;
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Stdin, Walker};
use crate::tools::command::options::{self, Item, Spec};
use crate::tools::command::words::Arg;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] =
    &[Program::new(&["awk", "gawk", "mawk", "nawk"], Rule::Judge(awk)).running_code()];

/// awk options that only set variables, separators and dialects.
const AWK_OPTIONS: &[&str] = &[
    "F",
    "v",
    "field-separator",
    "assign",
    "posix",
    "traditional",
    "re-interval",
    "characters-as-bytes",
    "sandbox",
    "b",
    "c",
    "P",
    "r",
    "S",
];

/// `awk` runs shell commands from its program: `system("cmd")`, `print | "cmd"` and
/// `"cmd" | getline`; `print > "file"` writes a file.
///
/// A program that only prints (see [`print_only_problem`]), given as a plain word with
/// options that only set variables and separators, reading files in the workspace, is
/// read-only.
fn awk(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut judgement = Judgement::whitelisted();
    let spec = Spec::values("fvF", &["file", "assign", "field-separator"]);
    let items = options::parse(invocation.args, &spec);
    let program_from_file = items.iter().any(|i| i.named(&["f", "file"], true));
    for item in &items {
        let known = item.named(AWK_OPTIONS, false);
        if matches!(item, Item::Short { .. } | Item::Long { .. }) && !known {
            judgement.unknown(format!(
                "`{} {}` is not an option known to be read-only",
                invocation.program,
                item.shown()
            ));
        }
        if let Item::Opaque(word) = item {
            judgement.unknown(format!(
                "`{}` is given `{}`, which may become any option when the line runs",
                invocation.program, word.raw
            ));
        }
    }
    let operands = options::operands(&items);
    let program = if program_from_file {
        judgement.unknown("`awk -f` reads its program from a file, which is not checked");
        None
    } else {
        operands.first().copied()
    };
    let files = if program_from_file {
        &operands[..]
    } else {
        operands.get(1..).unwrap_or_default()
    };
    for file in files.iter().filter_map(|f| f.text()) {
        // `name=value` between files sets a variable.
        if !file.split_once('=').is_some_and(|(name, _)| is_name(name)) {
            walker.check_path(&mut judgement, invocation.program, file);
        }
    }
    match program.map(Arg::text) {
        Some(Some(code)) => {
            if let Some(problem) = print_only_problem(code) {
                judgement.unknown(format!("the awk program {problem}"));
            }
        }
        Some(None) => judgement.unknown("the awk program is only known when the line runs"),
        None if !program_from_file => judgement.unknown("`awk` is given no program"),
        None => {}
    }
    if let Some(code) = program.and_then(Arg::text) {
        embedded_commands(walker, code, invocation.depth);
        for target in string_literals_after(code, &[">", ">>"]) {
            if !crate::tools::command::assess::is_sink(&target) {
                judgement.destructive(format!(
                    "the awk program writes to the file {target}, replacing or growing it"
                ));
            }
        }
        // `print | "cmd"` feeds what the program prints to cmd.
        let printed = Stdin::Unseen("what the awk program prints".to_owned());
        for command in string_literals_after(code, &["|"]) {
            walker.script(&command, &printed, invocation.depth + 1);
        }
        for command in string_literals_before(code, "| getline") {
            walker.script(&command, &Stdin::Inherited, invocation.depth + 1);
        }
    }
    judgement
}

/// Why the awk program `code` is not known to only print, or `None`.
fn print_only_problem(code: &str) -> Option<String> {
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

    #[test]
    fn awk_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("awk '{print $1}' notes.txt", Safe),
            ("awk '{print > \"out.txt\"}' notes.txt", Destructive),
            ("awk 'BEGIN{system(\"reboot\")}'", NotSafe),
        ]);
    }
}
