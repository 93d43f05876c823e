//! `sed`: read-only with a script that only prints (with or without `-n`: either way its
//! output goes to standard output only, as a filter's does); `-i` rewrites files in place,
//! `-f` reads an unchecked script, and an option not known to be read-only asks a person.
//!
//! A reader for sed scripts that accepts only scripts that print: addresses (line numbers,
//! `$`, `/regex/`, `\cregexc`, `first~step`, `addr,+N`), `!`, `{ }`, and the commands that
//! only move text between the pattern and hold spaces and standard output (`p`, `P`, `=`,
//! `l`, `n`, `N`, `d`, `D`, `h`, `H`, `g`, `G`, `x`, `z`, `q`, `Q`, labels and branches,
//! `s` and `y` without the `e` and `w` flags). Anything that writes (`w`, `W`, `s///w`),
//! reads another file (`r`, `R`) or runs a command (`e`, `s///e`) is refused, and so is
//! anything this reader does not understand.

use super::table::{check_paths, opaque};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::{self, Item, Spec};

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] =
    &[Program::new(&["sed"], Rule::Judge(sed_rule)).running_code()];

const SED: Spec = Spec::values("elf", &["expression", "line-length", "file"]).optional("i");

/// Options `sed` may take and stay read-only.
const SED_OPTIONS: &[&str] = &[
    "n",
    "quiet",
    "silent",
    "e",
    "expression",
    "E",
    "r",
    "regexp-extended",
    "s",
    "separate",
    "z",
    "null-data",
    "zero-terminated",
    "u",
    "unbuffered",
    "l",
    "line-length",
    "posix",
    "debug",
    "sandbox",
    "b",
    "binary",
    "help",
    "version",
];

/// `sed` with a script that only prints.
fn sed_rule(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let items = options::parse(invocation.args, &SED);
    let mut judgement = Judgement::whitelisted();
    if let Some(word) = opaque(&items) {
        judgement.destructive(format!(
            "`sed` is given `{}`, which may become `-i` (rewrite files in place) when the line runs",
            word.raw
        ));
    }
    let mut scripts: Vec<&str> = Vec::new();
    for item in &items {
        if item.named(&["i", "in-place"], true) {
            judgement.destructive("`sed -i` rewrites files in place, replacing their contents");
        } else if item.named(&["f", "file"], true) {
            judgement.unknown("`sed -f` reads its script from a file, which is not checked");
        } else if item.named(&["e", "expression"], true) {
            scripts.extend(item.value().and_then(|v| v.text));
        } else if matches!(item, Item::Short { .. } | Item::Long { .. })
            && !item.named(SED_OPTIONS, true)
        {
            judgement.unknown(format!(
                "`sed {}` is not an option known to be read-only",
                item.shown()
            ));
        }
    }
    let given_by_option = items.iter().any(|i| i.named(&["e", "expression"], true));
    let operands = options::operands(&items);
    let files = if given_by_option {
        &operands[..]
    } else {
        match operands.split_first() {
            Some((script, rest)) => {
                scripts.extend(script.text());
                rest
            }
            None => &[],
        }
    };
    for script in scripts {
        if let Err(reason) = check_print_only(script) {
            judgement.unknown(format!("the sed script `{script}` {reason}"));
        }
    }
    check_paths(walker, &mut judgement, "sed", files);
    judgement
}

/// `Ok` when the script only prints, or why it does not.
fn check_print_only(script: &str) -> Result<(), String> {
    let mut reader = Reader {
        chars: script.chars().collect(),
        at: 0,
    };
    reader.script()
}

struct Reader {
    chars: Vec<char>,
    at: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        self.at += 1;
        c
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.at += 1;
        }
    }

    fn script(&mut self) -> Result<(), String> {
        let mut open_blocks = 0usize;
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.at += 1;
            }
            let Some(c) = self.peek() else { break };
            if c == '#' {
                self.skip_line();
                continue;
            }
            if c == '}' {
                self.at += 1;
                open_blocks = open_blocks
                    .checked_sub(1)
                    .ok_or_else(|| "closes a `}` that was never opened".to_owned())?;
                self.end_of_command()?;
                continue;
            }
            self.address()?;
            self.skip_blanks();
            if self.peek() == Some(',') {
                self.at += 1;
                self.skip_blanks();
                self.second_address()?;
            }
            self.skip_blanks();
            while self.peek() == Some('!') {
                self.at += 1;
                self.skip_blanks();
            }
            let command = self
                .next()
                .ok_or_else(|| "ends with an address but no command".to_owned())?;
            match command {
                '{' => {
                    open_blocks += 1;
                    continue;
                }
                'p' | 'P' | '=' | 'd' | 'D' | 'h' | 'H' | 'g' | 'G' | 'x' | 'n' | 'N' | 'z'
                | 'F' => {}
                'l' | 'q' | 'Q' | 'L' => {
                    self.skip_blanks();
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.at += 1;
                    }
                }
                ':' => {
                    self.skip_blanks();
                    self.label();
                    continue;
                }
                'b' | 't' | 'T' => {
                    self.skip_blanks();
                    self.label();
                }
                's' => self.substitute()?,
                'y' => {
                    let delimiter = self.delimiter()?;
                    self.text_until(delimiter)?;
                    self.text_until(delimiter)?;
                }
                'w' | 'W' => return Err(format!("writes to a file (`{command}`)")),
                'r' | 'R' => return Err(format!("reads another file (`{command}`)")),
                'e' => return Err("runs a command (`e`)".to_owned()),
                // Append, insert or change to text, which goes to the output only.
                'a' | 'i' | 'c' => {
                    self.text_to_line_end();
                    continue;
                }
                other => {
                    return Err(format!(
                        "uses `{other}`, which is not a print-only sed command"
                    ));
                }
            }
            self.end_of_command()?;
        }
        if open_blocks > 0 {
            return Err("leaves a `{` open".to_owned());
        }
        Ok(())
    }

    /// The text of `a`, `i` and `c`: after `\` and a newline (POSIX) or on the same line
    /// (GNU's `a text`, `a\text`), to the end of the line; a backslash carries it on past a
    /// newline.
    fn text_to_line_end(&mut self) {
        self.skip_blanks();
        if self.peek() == Some('\\') {
            self.at += 1;
            if self.peek() == Some('\n') {
                self.at += 1;
            }
        }
        while let Some(c) = self.next() {
            match c {
                '\\' => {
                    self.next();
                }
                '\n' => break,
                _ => {}
            }
        }
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.next() {
            if c == '\n' {
                break;
            }
        }
    }

    /// After a command: blanks, then `;`, a newline, `}`, `#` or the end.
    fn end_of_command(&mut self) -> Result<(), String> {
        self.skip_blanks();
        match self.peek() {
            None | Some(';' | '\n' | '}' | '#') => Ok(()),
            Some(other) => Err(format!("has `{other}` where a command should end")),
        }
    }

    /// An optional first address.
    fn address(&mut self) -> Result<(), String> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.number();
                if self.peek() == Some('~') {
                    self.at += 1;
                    self.number();
                }
                Ok(())
            }
            Some('$') => {
                self.at += 1;
                Ok(())
            }
            Some('/') => {
                self.at += 1;
                self.regex('/')?;
                self.regex_flags();
                Ok(())
            }
            Some('\\') => {
                self.at += 1;
                let delimiter = self
                    .next()
                    .ok_or_else(|| "ends inside an address".to_owned())?;
                self.regex(delimiter)?;
                self.regex_flags();
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn second_address(&mut self) -> Result<(), String> {
        match self.peek() {
            Some('+' | '~') => {
                self.at += 1;
                self.number();
                Ok(())
            }
            Some(c) if c.is_ascii_digit() || matches!(c, '$' | '/' | '\\') => self.address(),
            _ => Err("has a `,` without a second address".to_owned()),
        }
    }

    fn number(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.at += 1;
        }
    }

    /// A label after `:`, `b`, `t`, `T`: up to a `;` or the end of the line.
    fn label(&mut self) {
        while let Some(c) = self.peek() {
            if matches!(c, ';' | '\n') {
                break;
            }
            self.at += 1;
        }
    }

    fn delimiter(&mut self) -> Result<char, String> {
        match self.next() {
            Some('\n' | '\\') | None => Err("has a command without a delimiter".to_owned()),
            Some(c) => Ok(c),
        }
    }

    /// A regular expression up to the unescaped `delimiter`; in GNU sed a delimiter inside
    /// a bracket expression (`[/]`) does not end it.
    fn regex(&mut self, delimiter: char) -> Result<(), String> {
        loop {
            match self.next() {
                None | Some('\n') => {
                    return Err("has an unterminated regular expression".to_owned());
                }
                Some('\\') => {
                    self.next();
                }
                Some('[') => self.bracket()?,
                Some(c) if c == delimiter => return Ok(()),
                Some(_) => {}
            }
        }
    }

    fn bracket(&mut self) -> Result<(), String> {
        if self.peek() == Some('^') {
            self.at += 1;
        }
        if self.peek() == Some(']') {
            self.at += 1;
        }
        loop {
            match self.next() {
                None | Some('\n') => return Err("has an unterminated `[`".to_owned()),
                Some('[') if matches!(self.peek(), Some(':' | '.' | '=')) => {
                    let kind = self.next();
                    loop {
                        match self.next() {
                            None => return Err("has an unterminated `[`".to_owned()),
                            Some(c) if Some(c) == kind && self.peek() == Some(']') => {
                                self.at += 1;
                                break;
                            }
                            Some(_) => {}
                        }
                    }
                }
                Some(']') => return Ok(()),
                Some(_) => {}
            }
        }
    }

    /// Text up to the unescaped `delimiter` (a replacement, a `y` set).
    fn text_until(&mut self, delimiter: char) -> Result<(), String> {
        loop {
            match self.next() {
                None => return Err("has an unterminated command".to_owned()),
                Some('\\') => {
                    self.next();
                }
                Some(c) if c == delimiter => return Ok(()),
                Some(_) => {}
            }
        }
    }

    fn substitute(&mut self) -> Result<(), String> {
        let delimiter = self.delimiter()?;
        self.regex(delimiter)?;
        self.text_until(delimiter)?;
        while let Some(flag) = self.peek() {
            match flag {
                'g' | 'p' | 'i' | 'I' | 'm' | 'M' => self.at += 1,
                c if c.is_ascii_digit() => self.at += 1,
                'e' => return Err("runs the result as a command (`s///e`)".to_owned()),
                'w' => return Err("writes to a file (`s///w`)".to_owned()),
                _ => break,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::check_print_only;

    #[test]
    fn print_only_scripts_pass() {
        for script in [
            "1,5p",
            "p",
            "$p",
            "=",
            "/start/,/end/p",
            "/a[/]b/p",
            "\\,x,p",
            "2~3p",
            "/x/,+2p",
            "0,/re/p",
            "/x/!p",
            "/x/{p;=}",
            "1{\np\n}",
            "s/a/b/p",
            "s|a/b|c|gp",
            "y/abc/xyz/;p",
            ":a;N;$!ba;p",
            "/x/Ip",
            "# comment\np",
            "10q",
            "l 40",
            "/Once upon a time/i\\Chapter 1",
            "/happily ever after/a\\The end.",
            "$a\\\nlast line",
            "1i header",
            "2c\\\nchanged \\\n still text w out\np",
            "/x/{a added\n}",
        ] {
            assert_eq!(check_print_only(script), Ok(()), "{script}");
        }
    }

    #[test]
    fn writing_reading_and_running_are_refused() {
        for script in [
            "w out.txt",
            "1,5w /tmp/x",
            "/x/W out",
            "r /etc/passwd",
            "R /etc/shadow",
            "e rm -rf /",
            "s/a/b/e",
            "s/a/b/w out",
            "s/a/b/gw out",
            "p;w x",
            "1{p;w x\n}",
            "a hello\nw out",
            "1i\\\nfirst\ne ls",
            "$!{a x}",
            "{p",
            "}",
            "s/a/b",
            "/unterminated",
            "p x",
            "k",
        ] {
            assert!(check_print_only(script).is_err(), "{script}");
        }
    }

    #[test]
    fn sed_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("sed -n '/start/,/end/p' notes.txt", Safe),
            ("sed -i 's/a/b/' notes.txt", Destructive),
            ("sed 's/a/b/' notes.txt", Safe),
            ("sed 's/a/b/g; s/c/d/' notes.txt", Safe),
            ("sed -E 's/(a)/\\1/g' notes.txt", Safe),
            ("sed 5q notes.txt", Safe),
            ("sed 's/a/b/w out' notes.txt", Unknown),
            ("sed 'w out' notes.txt", Unknown),
            ("sed '1r /etc/passwd' notes.txt", Unknown),
            ("sed 's/a/b/' /etc/passwd", Unknown),
            ("sed --in-place 's/a/b/' notes.txt", Destructive),
            ("sed -i.bak 's/a/b/' notes.txt", Destructive),
            ("sed -n 'e ls' notes.txt", Unknown),
            ("sed -n 'r /etc/passwd' notes.txt", Unknown),
            ("sed -n -f script.sed notes.txt", Unknown),
            ("sed -n 's/a/b/e' notes.txt", Unknown),
            ("sed '1i title' notes.txt", Safe),
            ("sed '$a\\the end' notes.txt | head", Safe),
            ("sed -i '1i title' notes.txt", Destructive),
            ("sed '1i title' /etc/passwd", Unknown),
        ]);
    }
}
