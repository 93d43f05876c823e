//! Perl one-liners that only filter text: `perl -ne 'print if /x/' file`, `perl -pe
//! 's/a/b/g'`, `perl -lane 'print $F[1]'`, `perl -e 'print "hi\n"'`. A program given with
//! `-e`/`-E` is read when it keeps to a small part of Perl that reaches nothing outside the
//! process: printing, regular expressions, substitutions without `/e`, transliteration,
//! variables, arithmetic and string functions. Anything else leaves the call to the
//! interpreters' rule (it waits): another function or bareword, a module (`-M`), the
//! environment (`%ENV`), a readline or glob (`<STDIN>`, `<*.txt>`), a here-document, a
//! backtick, a code block in a regular expression (`(?{ ... })`), an expression inside an
//! interpolated subscript (`"$h{system(...)}"` runs it), a dereference block (`@{[ ... ]}`,
//! `${\ ... }`), a method or code-reference call, a package name.
//!
//! Where Perl itself guesses whether a `/` or `?` starts a pattern or divides (after a `}`
//! or a bareword that may take arguments), the reading gives up rather than guess: a guess
//! that differed from Perl's could skip over code as if it were a pattern.
//!
//! The files after the program are opened by Perl's `<>`, which reads a name ending in `|`
//! as a command to run: each must be a plain name the line shows (no glob, no `|`, `<`,
//! `>`, `&` or leading `+`), checked like any path.

use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::words::Arg;

/// The functions and keywords a filter may use: none opens, runs, loads or signals.
const WORDS: &[&str] = &[
    "print",
    "printf",
    "say",
    "if",
    "unless",
    "else",
    "elsif",
    "while",
    "until",
    "for",
    "foreach",
    "next",
    "last",
    "my",
    "our",
    "local",
    "chomp",
    "chop",
    "chr",
    "ord",
    "lc",
    "uc",
    "lcfirst",
    "ucfirst",
    "length",
    "substr",
    "index",
    "rindex",
    "sprintf",
    "join",
    "split",
    "reverse",
    "sort",
    "keys",
    "values",
    "each",
    "exists",
    "delete",
    "defined",
    "undef",
    "scalar",
    "push",
    "pop",
    "shift",
    "unshift",
    "splice",
    "grep",
    "map",
    "abs",
    "int",
    "sqrt",
    "hex",
    "oct",
    "sin",
    "cos",
    "atan2",
    "exp",
    "log",
    "rand",
    "srand",
    "time",
    "localtime",
    "gmtime",
    "eq",
    "ne",
    "lt",
    "gt",
    "le",
    "ge",
    "cmp",
    "and",
    "or",
    "not",
    "xor",
    "x",
    "exit",
    "die",
    "warn",
    "eof",
    "close",
    "pos",
    "quotemeta",
    "pack",
    "unpack",
    "wantarray",
    "lock",
    "BEGIN",
    "END",
    "STDOUT",
    "STDERR",
    "STDIN",
    "ARGV",
];

/// Barewords after which a `/` or `?` starts a pattern for certain.
const PATTERN_FOLLOWS: &[&str] = &[
    "split", "if", "unless", "while", "until", "and", "or", "not", "xor", "grep", "map", "elsif",
    "x",
];

/// Punctuation variables a filter may use (`$_`, `$.`, `$&`, ...).
const PUNCTUATION_VARIABLES: &str = "_&.,/\\;!@0'+\"`-|";

/// The judgement of `perl` when it is a filter this reader accepts whole, else `None`.
pub(super) fn filter(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Option<Judgement> {
    let mut codes = Vec::new();
    let mut args = invocation.args.iter();
    let mut files: Vec<&Arg> = Vec::new();
    while let Some(arg) = args.next() {
        let text = arg.text()?;
        if arg.pattern.is_some() || arg.tilde {
            return None;
        }
        if text == "--" {
            files.extend(args.by_ref());
            break;
        }
        let Some(cluster) = text.strip_prefix('-').filter(|c| !c.is_empty()) else {
            files.push(arg);
            files.extend(args.by_ref());
            break;
        };
        match switches(cluster)? {
            Switches::Plain => {}
            Switches::CodeHere(code) => codes.push(code),
            Switches::CodeNext => {
                let code = args.next()?;
                if code.pattern.is_some() || code.tilde {
                    return None;
                }
                codes.push(code.text()?);
            }
        }
    }
    if codes.is_empty() {
        return None;
    }
    for code in &codes {
        Reader::new(code).read().ok()?;
    }
    let mut judgement = Judgement::whitelisted();
    for file in files {
        let name = file.text()?;
        if file.pattern.is_some() || !plain_file_name(name) {
            return None;
        }
        if name != "-" {
            walker.check_path(&mut judgement, "perl", name);
        }
    }
    Some(judgement)
}

/// Whether `code` is Perl this reader accepts whole: what a filter may run (`s/a/b/`,
/// `y/a-z/A-Z/`, `print if /x/`), nothing that runs a program or touches a file.
pub(super) fn reads_code(code: &str) -> bool {
    Reader::new(code).read().is_ok()
}

/// What a cluster of switches leaves to read.
enum Switches<'a> {
    /// Nothing: only switches.
    Plain,
    /// It ends with `e`/`E`: the next word is a program.
    CodeNext,
    /// `-e'print 1'`: the program follows `e` in the same word.
    CodeHere(&'a str),
}

/// Reads one cluster of switches (`ne`, `lane`, `F:`, `l0`, `0777`), or `None` for a switch
/// not accepted here.
fn switches(cluster: &str) -> Option<Switches<'_>> {
    let mut chars = cluster.char_indices().peekable();
    while let Some((at, switch)) = chars.next() {
        match switch {
            'n' | 'p' | 'a' | 'w' | 'W' | 'X' => {}
            'e' | 'E' => {
                return Some(match &cluster[at + 1..] {
                    "" => Switches::CodeNext,
                    code => Switches::CodeHere(code),
                });
            }
            // `-l` and `-0` take an octal number (`-0` also `x` and hex digits), `-C` a
            // number or the letters of its list; any other letter is the next switch.
            'l' | '0' | 'C' => {
                let argument = |c: char| match switch {
                    'l' => c.is_digit(8),
                    '0' => c.is_ascii_hexdigit() || c == 'x',
                    _ => c.is_ascii_digit() || "IOEioSDAL".contains(c),
                };
                while chars.peek().is_some_and(|(_, c)| argument(*c)) {
                    chars.next();
                }
            }
            // `-MO=Deparse[,options]`: the program is compiled and printed back, not run.
            'M' => {
                let module = &cluster[at + 1..];
                let options = module.strip_prefix("O=Deparse")?;
                let plain = options.is_empty()
                    || options.strip_prefix(',').is_some_and(|o| {
                        o.chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ',' | '-'))
                    });
                return plain.then_some(Switches::Plain);
            }
            // `-F` takes the rest of the word as the pattern `split` uses.
            'F' => {
                let pattern = &cluster[at + 1..];
                return pattern_problem(pattern)
                    .is_none()
                    .then_some(Switches::Plain);
            }
            _ => return None,
        }
    }
    Some(Switches::Plain)
}

/// A file name Perl's `<>` opens as a file: no mode or pipe characters, no leading `+` or
/// blank, nothing but the characters of ordinary names.
fn plain_file_name(name: &str) -> bool {
    name == "-"
        || (!name.is_empty()
            && !name.starts_with(['+', '-'])
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || "._/,@%=:~#-".contains(c)))
}

/// Why a pattern's or an interpolating string's text may run code: a code block, a
/// dereference block, a named character (which may load a module), or a subscript holding
/// an expression.
fn pattern_problem(text: &str) -> Option<&'static str> {
    for block in ["(?{", "(??{", "(*{", "@{", "${", "\\N{"] {
        if text.contains(block) {
            return Some("a block in a pattern or string may run code");
        }
    }
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'$' | b'@' => {
                i += 1;
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                if text[start..i].eq_ignore_ascii_case("ENV") || &text[start..i] == "SIG" {
                    return Some("the environment is not read by a filter");
                }
                if i > start {
                    match subscripts(text, i) {
                        Some(next) => i = next,
                        None => return Some("an expression in an interpolated subscript runs"),
                    }
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// Skips the subscripts after an interpolated variable when each is a constant or a plain
/// variable (`$F[0]`, `$h{key}`, `$a[$i]`, `$x->[1]`); returns where the text goes on, or
/// `None` for any other subscript.
fn subscripts(text: &str, mut at: usize) -> Option<usize> {
    loop {
        let rest = &text[at..];
        let rest_at = if rest.starts_with("->") { 2 } else { 0 };
        let Some(open) = rest[rest_at..].chars().next() else {
            return Some(at);
        };
        let close = match open {
            '[' => ']',
            '{' => '}',
            _ => return Some(at),
        };
        let inner_start = at + rest_at + 1;
        let end = text[inner_start..].find(close)? + inner_start;
        let inner = text[inner_start..end].trim();
        let plain = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
        let fine = match inner.strip_prefix('$') {
            Some(name) => plain(name.strip_prefix('#').unwrap_or(name)),
            None => plain(inner.strip_prefix('-').unwrap_or(inner)),
        };
        if !fine {
            return None;
        }
        at = end + 1;
    }
}

/// What comes next: a term (where `/` starts a pattern) or an operator (where it divides).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    Term,
    Operator,
    /// After a `}` or a bareword that may take arguments: Perl guesses, so a `/`, `?` or
    /// `<` here is refused.
    Either,
}

struct Reader<'a> {
    code: &'a str,
    at: usize,
    expect: Expect,
}

impl<'a> Reader<'a> {
    fn new(code: &'a str) -> Self {
        Self {
            code,
            at: 0,
            expect: Expect::Term,
        }
    }

    fn rest(&self) -> &'a str {
        &self.code[self.at..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    /// Reads the whole program; `Err` says why it is not a filter.
    fn read(mut self) -> Result<(), &'static str> {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.at += c.len_utf8();
            } else if c == '#' {
                return Err("a comment may hide the rest of a line from this reading");
            } else if c.is_ascii_alphabetic() || c == '_' {
                self.word()?;
            } else if c.is_ascii_digit() {
                self.number();
            } else {
                self.punctuation(c)?;
            }
        }
        Ok(())
    }

    fn word(&mut self) -> Result<(), &'static str> {
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let word = &rest[..len];
        let before = self.code[..self.at].trim_end();
        self.at += len;
        // `{word}` is a string: a hash key (`$h{key}`), never a quote-like operator.
        if before.ends_with('{') && self.rest().trim_start().starts_with('}') {
            self.expect = Expect::Operator;
            return Ok(());
        }
        if self.rest().starts_with("::") || self.rest().starts_with('\'') {
            return Err("a package name is not read here");
        }
        let quoting = matches!(word, "q" | "qq" | "qw" | "m" | "s" | "tr" | "y" | "qr");
        // A word before `=>` or inside `{...}` as a hash key is a string; the quote-like
        // operators are words too, unless a delimiter follows.
        let delimiter = self.rest().chars().next().filter(|c| {
            !c.is_whitespace() && !c.is_alphanumeric() && *c != '_' && *c != ',' && *c != ';'
        });
        if quoting
            && let Some(open) = delimiter
            && !(open == '=' && self.rest().starts_with("=>"))
        {
            return self.quote_like(word, open);
        }
        if self.rest().trim_start().starts_with("=>") {
            self.expect = Expect::Operator;
            return Ok(());
        }
        if !WORDS.contains(&word) {
            return Err("a function or word outside the filter's part of Perl");
        }
        // A filehandle or a block's name is followed by a term or a block.
        let term_follows = PATTERN_FOLLOWS.contains(&word)
            || matches!(
                word,
                "STDOUT" | "STDERR" | "STDIN" | "ARGV" | "END" | "BEGIN"
            );
        self.expect = if term_follows {
            Expect::Term
        } else {
            Expect::Either
        };
        Ok(())
    }

    /// A number: `0x1f`, `0b101`, `1_000`, `1.5`, `2e10`; a letter after it starts the next
    /// token (`1x3` is `1`, then the word `x3`).
    fn number(&mut self) {
        let bytes = self.rest().as_bytes();
        let digits = |from: usize, ok: fn(u8) -> bool| {
            from + bytes[from..]
                .iter()
                .take_while(|b| ok(**b) || **b == b'_')
                .count()
        };
        let mut len = if bytes.len() > 1 && bytes[0] == b'0' && matches!(bytes[1], b'x' | b'X') {
            digits(2, |b| b.is_ascii_hexdigit())
        } else if bytes.len() > 1 && bytes[0] == b'0' && matches!(bytes[1], b'b' | b'B') {
            digits(2, |b| matches!(b, b'0' | b'1'))
        } else {
            digits(0, |b| b.is_ascii_digit())
        };
        if bytes.get(len) == Some(&b'.') && bytes.get(len + 1).is_some_and(u8::is_ascii_digit) {
            len = digits(len + 1, |b| b.is_ascii_digit());
        }
        if matches!(bytes.get(len), Some(b'e' | b'E'))
            && bytes.get(len + 1).is_some_and(u8::is_ascii_digit)
        {
            len = digits(len + 1, |b| b.is_ascii_digit());
        }
        self.at += len.max(1);
        self.expect = Expect::Operator;
    }

    fn punctuation(&mut self, c: char) -> Result<(), &'static str> {
        let rest = self.rest();
        match c {
            '`' => return Err("a backtick runs a command"),
            '\'' => {
                self.at += 1;
                self.delimited('\'', false)?;
                self.expect = Expect::Operator;
                return Ok(());
            }
            '"' => {
                self.at += 1;
                self.delimited('"', true)?;
                self.expect = Expect::Operator;
                return Ok(());
            }
            '$' | '@' => return self.variable(c),
            '&' | '*' | '/' if self.expect == Expect::Operator && rest[1..].starts_with(c) => {
                // `&&`, `**` and `//` (defined-or): one operator, after which comes a term.
                self.at += 2;
                self.expect = Expect::Term;
                return Ok(());
            }
            '%' | '&' | '*' if self.expect != Expect::Operator => {
                if c == '%' && rest[1..].starts_with(|n: char| n.is_ascii_alphabetic() || n == '_')
                {
                    return self.variable(c);
                }
                return Err("a hash, code or glob sigil here is not read");
            }
            '/' | '?' => match self.expect {
                Expect::Term if c == '/' => {
                    self.at += 1;
                    self.delimited('/', true)?;
                    self.flags(false)?;
                    self.expect = Expect::Operator;
                    return Ok(());
                }
                Expect::Operator => {}
                _ => return Err("Perl guesses whether this starts a pattern"),
            },
            '<' => {
                if self.expect != Expect::Operator {
                    return Err("a readline or glob (`<...>`) reads files");
                }
                if rest.starts_with("<<") && !rest.starts_with("<<=") {
                    self.at += 2;
                    self.expect = Expect::Term;
                    return Ok(());
                }
            }
            '-' if rest.starts_with("->") => {
                let after = rest[2..].chars().next();
                if !matches!(after, Some('[' | '{')) {
                    return Err("a method or code-reference call is not read");
                }
                self.at += 2;
                self.expect = Expect::Operator;
                return Ok(());
            }
            '\\' => return Err("a reference is not read here"),
            _ => {}
        }
        // An operator or bracket: one character (two-character operators read as two).
        self.at += c.len_utf8();
        self.expect = match c {
            ')' | ']' => Expect::Operator,
            '}' => Expect::Either,
            _ => Expect::Term,
        };
        Ok(())
    }

    /// `$name`, `$_`, `$1`, `$#F`, `@F`, `%h` (the sigil at the cursor).
    fn variable(&mut self, sigil: char) -> Result<(), &'static str> {
        self.at += 1;
        let rest = self.rest();
        let next = rest.chars().next().ok_or("a sigil without a name")?;
        if sigil == '$' && next == '#' {
            self.at += 1;
            return self.variable_name(true);
        }
        if next.is_ascii_alphabetic() || next == '_' {
            return self.variable_name(sigil != '$');
        }
        if next.is_ascii_digit() {
            self.number();
            return Ok(());
        }
        if sigil == '$' && PUNCTUATION_VARIABLES.contains(next) {
            self.at += 1;
            self.expect = Expect::Operator;
            return Ok(());
        }
        Err("a dereference or special variable is not read here")
    }

    /// A variable's name after its sigil; `whole` when the sigil names the whole array or
    /// hash (`@ARGV`, `%h`, `$#ARGV`).
    fn variable_name(&mut self, whole: bool) -> Result<(), &'static str> {
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = &rest[..len];
        if name.is_empty() {
            return Err("a dereference is not read here");
        }
        if name == "ENV" || name == "SIG" || name == "INC" {
            return Err("the environment, signal handlers and loaded modules are not a filter's");
        }
        self.at += len;
        if self.rest().starts_with("::") || self.rest().starts_with('\'') {
            return Err("a package variable is not read here");
        }
        // The list of files `<>` opens: a name put there (`push @ARGV, "cmd|"`) would be
        // run as a command. `$ARGV`, the current file's name, is only read.
        if name == "ARGV" && (whole || self.rest().trim_start().starts_with('[')) {
            return Err("the list of files to open is not changed by a filter");
        }
        self.expect = Expect::Operator;
        Ok(())
    }

    /// `q(...)`, `qq{...}`, `qw/.../`, `m!...!`, `s{...}{...}`, `tr/.../.../`.
    fn quote_like(&mut self, word: &str, open: char) -> Result<(), &'static str> {
        if open == '#' || open.is_whitespace() || ")]}>".contains(open) {
            return Err("a quote-like operator with this delimiter is not read");
        }
        self.at += open.len_utf8();
        let close = closing(open);
        let interpolates = !matches!(word, "q" | "qw" | "tr" | "y");
        self.delimited(close, interpolates)?;
        match word {
            "s" | "tr" | "y" => {
                if close != open {
                    // `s{...}{...}`: the second part has its own delimiters.
                    let rest = self.rest();
                    let skipped = rest.len() - rest.trim_start().len();
                    self.at += skipped;
                    let second = self.peek().ok_or("an unfinished substitution")?;
                    if second.is_alphanumeric() || second.is_whitespace() {
                        return Err("an unusual substitution delimiter is not read");
                    }
                    self.at += second.len_utf8();
                    self.delimited(closing(second), interpolates)?;
                } else {
                    self.delimited(close, interpolates)?;
                }
                self.flags(word == "s")?;
            }
            "m" | "qr" => self.flags(false)?,
            _ => {}
        }
        self.expect = Expect::Operator;
        Ok(())
    }

    /// Reads up to the unescaped `close`, checking the text when it interpolates.
    fn delimited(&mut self, close: char, interpolates: bool) -> Result<(), &'static str> {
        let rest = self.rest();
        let mut escaped = false;
        for (i, c) in rest.char_indices() {
            if escaped {
                escaped = false;
                continue;
            }
            if c == '\\' {
                escaped = true;
                continue;
            }
            if c == close {
                let text = &rest[..i];
                if interpolates && let Some(problem) = pattern_problem(text) {
                    return Err(problem);
                }
                if !interpolates && ["(?{", "(??{", "(*{"].iter().any(|b| text.contains(b)) {
                    return Err("a code block in a pattern runs code");
                }
                self.at += i + c.len_utf8();
                return Ok(());
            }
        }
        Err("an unfinished string or pattern")
    }

    /// A pattern's or a substitution's flags; `/e` evaluates the replacement as code.
    fn flags(&mut self, substitution: bool) -> Result<(), &'static str> {
        let rest = self.rest();
        let len = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let flags = &rest[..len];
        if substitution && flags.contains('e') {
            return Err("a substitution with `/e` runs its replacement as code");
        }
        self.at += len;
        Ok(())
    }
}

fn closing(open: char) -> char {
    match open {
        '(' => ')',
        '[' => ']',
        '{' => '}',
        '<' => '>',
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_read_and_anything_reaching_outside_is_not() {
        for code in [
            "print if /error/",
            "print unless /^#/",
            "s/foo/bar/g",
            "s{a/b}{c}g",
            "s|\\r||",
            "tr/a-z/A-Z/",
            "y/a-z/A-Z/",
            "print $F[1]",
            "print \"$F[0]\\t$F[2]\\n\"",
            "$c++ if /x/; END { print $c }",
            "$h{$_}++; END { print \"$_ $h{$_}\\n\" for sort keys %h }",
            "print length",
            "print join(\",\", split(/:/))",
            "chomp; print lc",
            "print \"Hello World!\\n\"",
            "say \"Hello World!\"",
            "{print $1}",
            "print q|{\"foo\":1}|",
            "$s += $_; END { print $s }",
            "print if $. > 10 && $. < 20",
            "print $_ x 2",
            "printf(\"%-10s %s\\n\", $F[0], $F[1])",
            "print sort { $a <=> $b } @F",
            "next unless /\\S/; print",
            "print scalar reverse",
            "print $h->{key}",
            "@w = split; print $w[-1]",
            "print STDERR \"x\"",
            "close ARGV if eof",
            "print \"$ARGV: $_\" if /x/",
            "s/(\\w+)/\\u$1/g",
            "$x = 1 << 3; print $x",
            "$h{key}++; print $h{key}",
            "print $ARGV if eof",
            "$x = $y // 0; print $x ** 2",
            "print 0x1f + 1_000 + 1.5e3 + 0b11",
            "print for 1..10",
        ] {
            assert_eq!(Reader::new(code).read(), Ok(()), "{code:?}");
        }
        for code in [
            "system('rm -rf x')",
            "print `id`",
            "exec 'sh'",
            "open(F, '>x'); print F 1",
            "unlink 'x'",
            "s/x/system('id')/e",
            "s{x}{`id`}e",
            "print \"@{[ system('id') ]}\"",
            "print \"${\\ system('id') }\"",
            "print \"$h{system('id')}\"",
            "print \"$a[system('id')]\"",
            "/(?{ system('id') })/ and print",
            "m'(?{ system(q(id)) })'",
            "print $ENV{HOME}",
            "print \"$ENV{HOME}\"",
            "print while <STDIN>",
            "print <*.txt>",
            "print <<EOF",
            "$SIG{ALRM} = 1",
            "&main",
            "$x->method",
            "$code->()",
            "CORE::system('id')",
            "main'system('id')",
            "require POSIX",
            "use POSIX",
            "eval 'system(1)'",
            "do 'x.pl'",
            "$h{a} / system('x') / 1",
            "length / system('x') / 1",
            "print \"\\N{LATIN SMALL LETTER A}\"",
            "qx(id)",
            "print # hide\n; system('id')",
            "print ${\\ 1}",
            "*STDOUT = *STDERR",
            "glob('*')",
            "kill 9, 1",
            "print 'x",
            "$h{s}; system(q(id)); s}x}y}",
            "s}x}y}",
            "BEGIN { @ARGV = (\"id|\") }",
            "push @ARGV, \"rm -rf x|\"",
            "$ARGV[0] = \"id|\"",
            "$#ARGV = 0",
            "BEGIN { $^I = \"\" }",
            "print STDOUT <STDIN>",
            "$x // system(1) . q(/) . q(a)",
            "next if eof && $x",
            "print **STDOUT",
            "1xsystem(1)",
            "print 1if system(1)",
        ] {
            assert!(Reader::new(code).read().is_err(), "{code:?}");
        }
    }

    /// Programs made of pieces of Perl, filters' and dangerous ones mixed: the reading never
    /// panics; and in a mix without strings or patterns (whose text may hold anything),
    /// nothing it accepts holds a call, the environment or `@ARGV` (a `<STDIN>` after a term
    /// is a comparison, as Perl reads it too).
    #[test]
    fn mixed_pieces_are_read_without_panic_and_never_accept_a_call() {
        const CODE: &[&str] = &[
            "print ",
            "if ",
            "}",
            "]",
            "(",
            ")",
            "{",
            " system(1)",
            "->",
            "//",
            "&&",
            "**",
            "<STDIN>",
            "<",
            ">",
            "@ARGV ",
            "$_",
            ";",
            " ",
            "1",
            "x",
            "日",
            "$x",
            "=",
            "?",
            ":",
            "%ENV ",
            "END {",
            "\\",
            "$F[",
            "$h{",
            "&",
            "*",
            "%",
            "-",
        ];
        const TEXT: &[&str] = &[
            "/x/", "s/a/b/", "e", "g", "`id`", "\"", "'", "@{[", "${\\", "q(", "tr/", "y/", "#",
            "(?{", "s{", "m!", "\\N{",
        ];
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut accepted = 0;
        for round in 0..40_000_u32 {
            let with_text = round.is_multiple_of(2);
            let len = 1 + (next() % 12) as usize;
            let code: String = (0..len)
                .map(|_| {
                    let pick = next() as usize;
                    if with_text && pick.is_multiple_of(3) {
                        TEXT[pick / 3 % TEXT.len()]
                    } else {
                        CODE[pick / 3 % CODE.len()]
                    }
                })
                .collect();
            if Reader::new(&code).read().is_ok() && !with_text {
                accepted += 1;
                for banned in [" system(1)", "%ENV ", "@ARGV "] {
                    assert!(!code.contains(banned), "{code:?} holds {banned:?}");
                }
            }
        }
        assert!(
            accepted > 100,
            "only {accepted} accepted: the mix tests little"
        );
    }

    #[test]
    fn perl_filters_run_and_their_neighbours_wait() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("perl -ne 'print if /x/' notes.txt", Safe),
            ("perl -pe 's/foo/bar/g' notes.txt", Safe),
            ("perl -lane 'print $F[0]' notes.txt src/a.c", Safe),
            ("cat notes.txt | perl -F: -lane 'print $F[1]'", Safe),
            ("perl -0777 -ne 'print length' notes.txt", Safe),
            ("perl -e 'print \"Hello World!\\n\"'", Safe),
            ("perl -E 'say \"Hello World!\"'", Safe),
            ("perl -C -e '{print $1}'", Safe),
            ("perl -l -e 'print 1' -- notes.txt", Safe),
            ("perl -pi -e 's/a/b/' notes.txt", Destructive),
            ("perl -i.bak -pe 's/a/b/' notes.txt", Destructive),
            ("perl -ne 'print if /x/' /etc/shadow", NotSafe),
            ("perl -ne 'print' 'rm -rf x|'", NotSafe),
            ("perl -ne 'print' *.txt", NotSafe),
            ("perl -ne 'print' $FILE", NotSafe),
            ("perl -MPOSIX -e 'print 1'", NotSafe),
            ("perl -Mstrict -ne 'print'", NotSafe),
            ("perl -e 'system(\"rm -rf x\")'", Destructive),
            ("perl -e 'unlink q(notes.txt)'", NotSafe),
            ("perl -pe 's/x/`id`/e' notes.txt", NotSafe),
            ("perl -F'(?{system(1)})' -ane 'print' notes.txt", NotSafe),
            ("perl -ne \"$CODE\" notes.txt", NotSafe),
            ("perl script.pl", NotSafe),
            ("perl -x script.pl", NotSafe),
            ("perl -d -e 1", NotSafe),
            ("perl -lMPOSIX -e 'print 1'", NotSafe),
            ("perl -MO=Deparse -E '{print $1}'", Safe),
            ("perl -MO=Deparse,-p -ne 'print if /x/'", Safe),
            ("perl -MO=Deparse -e 'system(1)'", NotSafe),
            ("perl -MO=Debug -e 'print 1'", NotSafe),
            ("perl -MO=Deparse,$OPTS -e 'print 1'", NotSafe),
            ("perl -e'print q|{\"a\":1}|' | json_pp", Safe),
            ("perl -le'system(1)'", NotSafe),
            ("perl -CSD -ne 'print' notes.txt", Safe),
            ("perl -ne 'print' -e 'system(1)'", NotSafe),
        ]);
    }
}
