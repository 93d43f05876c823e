//! A linear pre-check of a script's structure, run before brush-parser sees it.
//!
//! brush-parser's PEG grammar backtracks without memoisation, and on *unclosed* constructs
//! the backtracking is exponential: twenty unclosed `(` take most of a second, eighteen
//! unterminated `case` items several seconds. Bash rejects all such scripts anyway, so this
//! check refuses them first, in one pass: unclosed `(`, `$(`, `${`, backquotes and quotes,
//! unterminated here-documents, and `case`/`if`/`do`/`{` without their `esac`/`fi`/`done`/`}`.
//! It reads quoting, comments and here-documents the way the shell does; where it is unsure
//! it errs towards finding a problem, which only costs a confirmation.

/// Why the script cannot be well formed, or `None` when every construct it opens is closed.
pub(super) fn unclosed(text: &str) -> Option<&'static str> {
    Scanner::new(text, Vec::new()).run()
}

/// The same check for the body of a here-document the shell expands (its delimiter
/// unquoted): text read as inside double quotes, except that `"` is an ordinary character,
/// where `$(`, `${` and backquotes open code that must be closed. [`unclosed`] skips the
/// bodies, and brush-parser backtracks exponentially on them as on scripts (a 3 KiB line
/// with an unclosed `$(` in a here-document took minutes; found by fuzz/shell_assess).
pub(super) fn unclosed_in_heredoc(body: &str) -> Option<&'static str> {
    Scanner::new(body, vec![Frame::HereDocBody]).run()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    Paren,
    CommandSubstitution,
    Parameter,
    DoubleQuote,
    Backquote,
    /// The body of an expanding here-document: the bottom frame, never closed.
    HereDocBody,
    /// `$(( ... ))`, where `<<` shifts and starts no here-document.
    Arithmetic,
    /// A `(` inside an arithmetic expansion.
    ArithmeticParen,
}

/// `case`/`esac`, `if`/`fi`, `do`/`done`, `{`/`}`.
const CASE: usize = 0;
const IF: usize = 1;
const DO: usize = 2;
const GROUP: usize = 3;

struct Scanner {
    chars: Vec<char>,
    at: usize,
    frames: Vec<Frame>,
    /// Here-documents whose bodies start at the next newline: (delimiter, strip tabs).
    heredocs: Vec<(String, bool)>,
    /// The unquoted word being read, for keywords.
    word: String,
    /// Whether a word (quoted or not) is being read.
    word_started: bool,
    /// Whether the next word starts a command (where keywords are reserved).
    command_position: bool,
    /// Open `case`, `if`, `do` and `{` counts.
    keywords: [usize; 4],
}

impl Scanner {
    fn new(text: &str, frames: Vec<Frame>) -> Self {
        Self {
            chars: text.chars().collect(),
            at: 0,
            frames,
            heredocs: Vec::new(),
            word: String::new(),
            word_started: false,
            command_position: true,
            keywords: [0; 4],
        }
    }

    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.at + offset).copied()
    }

    fn in_code(&self) -> bool {
        matches!(
            self.frames.last(),
            None | Some(Frame::Paren | Frame::CommandSubstitution | Frame::Backquote)
        )
    }

    fn run(&mut self) -> Option<&'static str> {
        while let Some(c) = self.peek(0) {
            match self.frames.last() {
                Some(Frame::DoubleQuote) => self.in_double_quotes(c),
                Some(Frame::HereDocBody) => self.in_heredoc_body(c),
                Some(Frame::Parameter) => self.in_parameter(c),
                Some(Frame::Arithmetic | Frame::ArithmeticParen) => {
                    if let Some(problem) = self.in_arithmetic(c) {
                        return Some(problem);
                    }
                }
                _ => {
                    if let Some(problem) = self.in_code_char(c) {
                        return Some(problem);
                    }
                }
            }
        }
        self.end_word();
        if !self.heredocs.is_empty() {
            return Some("a here-document is not terminated");
        }
        match self.frames.last() {
            Some(Frame::Paren) => return Some("a `(` is not closed"),
            Some(Frame::CommandSubstitution) => return Some("a `$(` is not closed"),
            Some(Frame::Parameter) => return Some("a `${` is not closed"),
            Some(Frame::DoubleQuote) => return Some("a `\"` is not closed"),
            Some(Frame::Backquote) => return Some("a backquote is not closed"),
            Some(Frame::Arithmetic | Frame::ArithmeticParen) => {
                return Some("a `$((` is not closed");
            }
            Some(Frame::HereDocBody) | None => {}
        }
        if self.keywords[CASE] > 0 {
            return Some("a `case` has no `esac`");
        }
        if self.keywords[IF] > 0 {
            return Some("an `if` has no `fi`");
        }
        if self.keywords[DO] > 0 {
            return Some("a `do` has no `done`");
        }
        if self.keywords[GROUP] > 0 {
            return Some("a `{` has no `}`");
        }
        None
    }

    fn in_code_char(&mut self, c: char) -> Option<&'static str> {
        match c {
            '\\' => {
                self.word_started = true;
                self.word.push('\\');
                self.at += 2;
            }
            '\'' => {
                self.word_started = true;
                self.word.push('\'');
                self.at += 1;
                if !self.skip_single_quoted(false) {
                    return Some("a `'` is not closed");
                }
            }
            '"' => {
                self.word_started = true;
                self.word.push('"');
                self.open(Frame::DoubleQuote, 1);
            }
            '`' => {
                self.word_started = true;
                self.word.push('`');
                if self.frames.last() == Some(&Frame::Backquote) {
                    self.frames.pop();
                } else {
                    self.frames.push(Frame::Backquote);
                }
                self.at += 1;
            }
            '$' => return self.dollar(),
            '#' if !self.word_started => {
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.at += 1;
                }
            }
            '(' => {
                self.end_word();
                self.frames.push(Frame::Paren);
                self.command_position = true;
                self.at += 1;
            }
            ')' => {
                self.end_word();
                // An unmatched `)` ends a `case` pattern; only opened frames are closed.
                if matches!(
                    self.frames.last(),
                    Some(Frame::Paren | Frame::CommandSubstitution)
                ) {
                    self.frames.pop();
                }
                self.command_position = true;
                self.at += 1;
            }
            '\n' => {
                self.end_word();
                self.command_position = true;
                self.at += 1;
                if !self.heredocs.is_empty() && !self.read_heredoc_bodies() {
                    return Some("a here-document is not terminated");
                }
            }
            ';' | '&' | '|' => {
                self.end_word();
                self.command_position = true;
                self.at += 1;
            }
            '<' if self.peek(1) == Some('<') && self.peek(2) == Some('<') => {
                // A here-string, not a here-document.
                self.end_word();
                self.at += 3;
            }
            '<' if self.peek(1) == Some('<') => self.heredoc_start(),
            '<' | '>' => {
                self.end_word();
                self.at += 1;
            }
            ' ' | '\t' => {
                self.end_word();
                self.at += 1;
            }
            other => {
                self.word_started = true;
                self.word.push(other);
                self.at += 1;
            }
        }
        None
    }

    /// `$(`, `${`, `$'...'` or a plain `$`, in code.
    fn dollar(&mut self) -> Option<&'static str> {
        self.word_started = true;
        self.word.push('$');
        match self.peek(1) {
            Some('(') => self.open_parenthesis_after_dollar(),
            Some('{') => self.open(Frame::Parameter, 2),
            Some('\'') => {
                self.at += 2;
                if !self.skip_single_quoted(true) {
                    return Some("a `$'` is not closed");
                }
            }
            _ => self.at += 1,
        }
        None
    }

    /// Opens `frame`, whose opening takes `width` characters.
    fn open(&mut self, frame: Frame, width: usize) {
        self.frames.push(frame);
        self.at += width;
    }

    /// `$((` opens an arithmetic expansion, `$(` a command substitution; `at` is on the `$`.
    fn open_parenthesis_after_dollar(&mut self) {
        if self.peek(2) == Some('(') {
            self.open(Frame::Arithmetic, 3);
        } else {
            self.open(Frame::CommandSubstitution, 2);
        }
    }

    /// Inside `$(( ... ))`: brackets nest, quotes and expansions open as elsewhere, and `<`
    /// is an operator. A `)` that closes the first `(` alone (`$((ls) | wc -l)`) makes it
    /// a command substitution holding a subshell, as bash reads it.
    fn in_arithmetic(&mut self, c: char) -> Option<&'static str> {
        match c {
            '\\' => self.at += 2,
            '\'' => {
                self.at += 1;
                if !self.skip_single_quoted(false) {
                    return Some("a `'` is not closed");
                }
            }
            '"' => self.open(Frame::DoubleQuote, 1),
            '`' => self.open(Frame::Backquote, 1),
            '$' => return self.dollar(),
            '(' => self.open(Frame::ArithmeticParen, 1),
            ')' => {
                if self.frames.last() == Some(&Frame::ArithmeticParen) {
                    self.frames.pop();
                    self.at += 1;
                } else if self.peek(1) == Some(')') {
                    self.frames.pop();
                    self.at += 2;
                } else {
                    self.frames.pop();
                    self.open(Frame::CommandSubstitution, 1);
                }
            }
            _ => self.at += 1,
        }
        None
    }

    /// `<<` or `<<-` and its delimiter: the body starts on the next line.
    fn heredoc_start(&mut self) {
        self.end_word();
        self.at += 2;
        let strip_tabs = self.peek(0) == Some('-');
        if strip_tabs {
            self.at += 1;
        }
        let delimiter = self.heredoc_delimiter();
        self.heredocs.push((delimiter, strip_tabs));
        self.command_position = false;
    }

    fn in_double_quotes(&mut self, c: char) {
        match c {
            '\\' => self.at += 2,
            '"' => {
                self.frames.pop();
                self.at += 1;
            }
            '`' => self.open(Frame::Backquote, 1),
            '$' if self.peek(1) == Some('(') => self.open_parenthesis_after_dollar(),
            '$' if self.peek(1) == Some('{') => self.open(Frame::Parameter, 2),
            _ => self.at += 1,
        }
    }

    fn in_heredoc_body(&mut self, c: char) {
        match c {
            '"' => self.at += 1,
            other => self.in_double_quotes(other),
        }
    }

    fn in_parameter(&mut self, c: char) {
        match c {
            '\\' => self.at += 2,
            '}' => {
                self.frames.pop();
                self.at += 1;
            }
            '\'' => {
                // Inside `${...}` outside double quotes, single quotes quote; inside double
                // quotes they are literal. Either way, skipping to the next `'` when there is
                // one is close enough for balance.
                let rest = &self.chars[self.at + 1..];
                match rest.iter().position(|&q| q == '\'') {
                    Some(end) => self.at += end + 2,
                    None => self.at += 1,
                }
            }
            '"' => self.open(Frame::DoubleQuote, 1),
            '`' => self.open(Frame::Backquote, 1),
            '$' if self.peek(1) == Some('(') => self.open_parenthesis_after_dollar(),
            '$' if self.peek(1) == Some('{') => self.open(Frame::Parameter, 2),
            _ => self.at += 1,
        }
    }

    /// Skips to the closing `'`; with `escapes` (`$'...'`) a backslash escapes the next
    /// character. Returns whether the quote was closed.
    fn skip_single_quoted(&mut self, escapes: bool) -> bool {
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                '\\' if escapes => self.at += 1,
                '\'' => return true,
                _ => {}
            }
        }
        false
    }

    /// Reads a here-document delimiter word and removes its quoting.
    fn heredoc_delimiter(&mut self) -> String {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.at += 1;
        }
        let mut delimiter = String::new();
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                '\\' => {
                    self.at += 1;
                    if let Some(next) = self.peek(0) {
                        delimiter.push(next);
                        self.at += 1;
                    }
                }
                '\'' | '"' => {
                    self.at += 1;
                    while let Some(inner) = self.peek(0) {
                        self.at += 1;
                        if inner == c {
                            break;
                        }
                        delimiter.push(inner);
                    }
                }
                other => {
                    delimiter.push(other);
                    self.at += 1;
                }
            }
        }
        delimiter
    }

    /// After a newline: skips the bodies of the pending here-documents. Returns whether
    /// every one was terminated.
    fn read_heredoc_bodies(&mut self) -> bool {
        let pending = std::mem::take(&mut self.heredocs);
        for (delimiter, strip_tabs) in pending {
            loop {
                if self.at >= self.chars.len() {
                    return false;
                }
                let end = self.chars[self.at..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(self.chars.len(), |offset| self.at + offset);
                let line: String = self.chars[self.at..end].iter().collect();
                self.at = (end + 1).min(self.chars.len().max(end));
                let line = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if line == delimiter {
                    break;
                }
            }
        }
        true
    }

    /// Ends the current word, counting it if it is a keyword in command position.
    fn end_word(&mut self) {
        if !self.word_started {
            return;
        }
        let word = std::mem::take(&mut self.word);
        self.word_started = false;
        if !self.in_code() {
            return;
        }
        let was_command_position = self.command_position;
        self.command_position = false;
        if !was_command_position {
            return;
        }
        let opens = |keywords: &mut [usize; 4], kind: usize| keywords[kind] += 1;
        let closes = |keywords: &mut [usize; 4], kind: usize| {
            keywords[kind] = keywords[kind].saturating_sub(1);
        };
        match word.as_str() {
            "case" => opens(&mut self.keywords, CASE),
            "esac" => closes(&mut self.keywords, CASE),
            "if" => {
                opens(&mut self.keywords, IF);
                self.command_position = true;
            }
            "fi" => closes(&mut self.keywords, IF),
            "do" => {
                opens(&mut self.keywords, DO);
                self.command_position = true;
            }
            "done" => closes(&mut self.keywords, DO),
            "{" => {
                opens(&mut self.keywords, GROUP);
                self.command_position = true;
            }
            "}" => closes(&mut self.keywords, GROUP),
            "then" | "else" | "elif" | "while" | "until" | "!" | "time" => {
                self.command_position = true;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{unclosed, unclosed_in_heredoc};

    #[test]
    fn heredoc_bodies() {
        for body in [
            "it's \"quoted\" (text) a ) b }\n",
            "$(ls) ${x:-\"}\"} `pwd` $((1 + (2)))\n",
            "\\$( is not code\n",
            "$(echo \")\")\n",
        ] {
            assert_eq!(unclosed_in_heredoc(body), None, "{body:?}");
        }
        for body in [
            "$(ls\n",
            "${x\n",
            "`ls\n",
            "$(echo \"a)\n",
            "x $(ls !(a b\n",
        ] {
            assert!(unclosed_in_heredoc(body).is_some(), "{body:?}");
        }
    }

    #[test]
    fn well_formed_scripts_pass() {
        for script in [
            "ls -la | wc -l",
            "echo '(' \")\" \\( ; ls",
            "echo $(echo ')'); ls",
            "echo \"$(echo \"(\")\"",
            "echo ${x:-'}'} ${y:-\"(\"}",
            "echo `echo a` # (unclosed in a comment",
            "echo a#(b)",
            "case x in a) ls;; (b) pwd;; esac",
            "if true; then ls; elif x; then y; else z; fi",
            "for f in a b; do echo $f; done",
            "while true; do { ls; }; done",
            "cat <<EOF\n(((( case if do {\nEOF\nls",
            "cat <<-'E O'\n\t((\n\tE O\n",
            "cat <<A <<B\n(\nA\n)\nB\n",
            "echo $'it\\'s ('",
            "echo case if do { done",
            "f() { ls; }",
            "echo {a,b} } {",
            "(( 1 + (2) ))",
            "[[ ( -f x ) ]]",
            "echo <<< '(('",
            "echo $((1 << 4)) $(( (2 << 1) + 1 )) \"$((3<<1))\" ${x:-$((1<<2))}",
            "echo $(((1 + 2) * 3)) $(($(echo 1) << 2))",
            "echo $((ls) | wc -l)",
        ] {
            assert_eq!(unclosed(script), None, "{script:?}");
        }
    }

    #[test]
    fn unclosed_constructs_are_found() {
        for script in [
            "((((ls",
            "echo $(ls",
            "echo ${x",
            "echo \"abc",
            "echo 'abc",
            "echo `ls",
            "echo $'abc",
            "cat <<EOF\nbody\n",
            "cat <<EOF\nbody\nEOF \n",
            "case x in x) case x in x) ",
            "if true; then ls",
            "for f in a; do ls",
            "{ ls;",
            "echo $((1 + 2)",
            "echo $((1 << 2)) && cat <<EOF\nbody\n",
            "echo $((1 + (2 ))",
        ] {
            assert!(unclosed(script).is_some(), "{script:?}");
        }
    }
}
