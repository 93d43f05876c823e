//! Words: what a shell word will be when the command runs, as far as the line shows it.
//!
//! A word is *literal* when it is plain text, single-quoted text, double-quoted literal text
//! or backslash escapes; its value is then known. Anything the shell expands (parameters,
//! command and arithmetic substitution, ANSI-C and translated quoting, brace expansion) makes
//! the value unknown and is reported as a problem; command substitutions hidden anywhere in
//! the word (also inside `${x:-$(...)}` or `$(( $(...) ))`) are handed back so the walker can
//! judge the commands they run. A leading `~` and unquoted glob characters keep the value
//! known, because the path checks can judge them.

use brush_parser::word::{Parameter, ParameterExpr, WordPiece, WordPieceWithSource};

use super::arith;
use super::braces::{self, BracesRefused};
use super::syntax::{self, ParseFailure};

/// How deeply expansions may hide inside one another in one word before the word is refused.
const MAX_WORD_NESTING: usize = 8;

/// One word of a command, as the assessor sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Arg {
    /// As written in the line, quotes included; used in reasons.
    pub raw: String,
    /// The value after quote removal, when the line fully shows it.
    pub value: Option<String>,
    /// The glob pattern (quoted characters escaped with `\`) when the word holds unquoted
    /// `*`, `?` or `[`, so the shell replaces it with matching file names.
    pub pattern: Option<String>,
    /// Whether the word starts with an unquoted `~` (a home directory).
    pub tilde: bool,
    /// Whether the word stands for several words once the line runs, each its value's
    /// shape (`{}` before `+` in `find -exec`: every path found, each under a start).
    pub several: bool,
}

impl Arg {
    /// A word whose value is only known when the line runs (`{}` in `find -exec`, the
    /// arguments `xargs` appends).
    pub(super) fn opaque(raw: &str) -> Self {
        Self {
            raw: raw.to_owned(),
            value: None,
            pattern: None,
            tilde: false,
            several: false,
        }
    }

    /// A word known to be exactly `text` (used for words split out of a literal script).
    pub(super) fn literal(text: &str) -> Self {
        Self {
            raw: text.to_owned(),
            value: Some(text.to_owned()),
            pattern: None,
            tilde: false,
            several: false,
        }
    }

    pub(super) fn text(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// Whether the word may stand for something `accept` accepts: a literal word is tested,
    /// a word only known at run time may be anything (and may even split into several).
    pub(super) fn may_be(&self, accept: impl Fn(&str) -> bool) -> bool {
        self.text().is_none_or(accept)
    }

    /// Whether the word stands for a path only known when the line runs, shown by its
    /// shape (`{}` of `find -exec` is `./{}`, as are the paths `xargs -0` appends).
    pub(super) fn is_placeholder(&self) -> bool {
        self.value
            .as_deref()
            .is_some_and(|value| value.ends_with("/{}") && value != self.raw)
    }

    /// Whether the word may become several words when the line runs.
    pub(super) fn may_be_several(&self) -> bool {
        self.value.is_none() || self.pattern.is_some() || self.several
    }
}

/// The words' values when the line shows every one of them whole: no word only known when
/// the line runs, and no glob pattern.
pub(super) fn shown_words(args: &[Arg]) -> Option<Vec<&str>> {
    args.iter()
        .map(|arg| arg.pattern.is_none().then(|| arg.text()).flatten())
        .collect()
}

/// What the walker needs to know about one word.
#[derive(Debug, Clone)]
pub(super) struct WordReport {
    pub arg: Arg,
    /// The first expansion that makes the value unknown, as a sentence.
    pub problem: Option<String>,
    /// Scripts the word runs when it is expanded (`$(...)`, backquotes), in order.
    pub substitutions: Vec<String>,
    /// Set when the word could not be parsed; the line then cannot be shown harmless.
    pub failure: Option<ParseFailure>,
}

/// Reads one word as written in the line after brace expansion: the words it becomes
/// ([`braces`]), each read by [`analyze`]. A word whose braces riskgate does not expand
/// itself is read whole, its braces a problem.
pub(super) fn analyze_expanded(raw: &str) -> Vec<WordReport> {
    match braces::expand_braces(raw) {
        Ok(Some(words)) => words.iter().map(|word| analyze(word)).collect(),
        Ok(None) => vec![analyze(raw)],
        Err(refused) => {
            let mut report = analyze(raw);
            report.arg.value = None;
            report.arg.pattern = None;
            report.problem = Some(match refused {
                BracesRefused::TooMany(_) => refused.to_string(),
                BracesRefused::Unsupported(_) => format!(
                    "`{raw}` is a brace expansion, which the shell turns into several words"
                ),
            });
            vec![report]
        }
    }
}

/// Reads one word as written in the line.
pub(super) fn analyze(raw: &str) -> WordReport {
    let mut reader = Reader::default();
    let pieces = match syntax::parse_word(raw) {
        Ok(pieces) => pieces,
        Err(failure) => {
            return WordReport {
                arg: Arg::opaque(raw),
                problem: Some(format!("the word `{raw}` could not be read")),
                substitutions: Vec::new(),
                failure: Some(failure),
            };
        }
    };
    let mut value = String::new();
    let mut pattern = String::new();
    // The word's characters, quoted ones blanked out, for brace expansion.
    let mut unquoted: Vec<char> = Vec::new();
    let mut globbed = false;
    let mut tilde = false;
    for (index, piece) in pieces.iter().enumerate() {
        let source = slice(raw, piece);
        match &piece.piece {
            WordPiece::Text(text) => {
                value.push_str(text);
                pattern.push_str(text);
                unquoted.extend(text.chars());
                if has_glob(text) {
                    globbed = true;
                }
                if has_extglob(text) {
                    reader.problem(format!(
                        "`{raw}` is an extended glob pattern, which expands to file names"
                    ));
                }
                if text.contains("=~") || text.contains(":~") {
                    reader.problem(format!("the `~` in `{raw}` may expand to a home directory"));
                }
            }
            WordPiece::SingleQuotedText(text) => {
                value.push_str(text);
                escape_into(&mut pattern, text);
                unquoted.push(QUOTED);
            }
            WordPiece::EscapeSequence(escape) => {
                let unescaped = unescape(escape);
                value.push_str(unescaped);
                escape_into(&mut pattern, unescaped);
                unquoted.push(QUOTED);
            }
            WordPiece::AnsiCQuotedText(inner) if let Some(text) = ansi_c(inner) => {
                value.push_str(&text);
                escape_into(&mut pattern, &text);
                unquoted.push(QUOTED);
            }
            WordPiece::DoubleQuotedSequence(inner) => {
                unquoted.push(QUOTED);
                for inner_piece in inner {
                    match literal_text(&inner_piece.piece) {
                        Some(text) => {
                            value.push_str(&text);
                            escape_into(&mut pattern, &text);
                        }
                        None => reader.expansion(inner_piece, raw, 0),
                    }
                }
            }
            WordPiece::ArithmeticExpression(expression)
                if let Some(number) = arith::evaluate(&expression.value) =>
            {
                // A number: nothing to split or glob.
                value.push_str(&number.to_string());
                pattern.push_str(&number.to_string());
                unquoted.push(QUOTED);
            }
            WordPiece::TildeExpansion(_) if index == 0 => {
                tilde = true;
                value.push_str(source);
                escape_into(&mut pattern, source);
                unquoted.push(QUOTED);
            }
            _ => {
                unquoted.push(QUOTED);
                reader.expansion(piece, raw, 0);
            }
        }
    }
    if has_brace_expansion(&unquoted) {
        reader.problem(format!(
            "`{raw}` is a brace expansion, which the shell turns into several words"
        ));
    }
    let known = reader.problem.is_none() && reader.failure.is_none();
    WordReport {
        arg: Arg {
            raw: raw.to_owned(),
            value: known.then_some(value),
            pattern: (known && globbed).then_some(pattern),
            tilde,
            several: false,
        },
        problem: reader.problem,
        substitutions: reader.substitutions,
        failure: reader.failure,
    }
}

/// The text of a piece inside double quotes that expands to known text: literal text,
/// an escape, or integer arithmetic.
fn literal_text(piece: &WordPiece) -> Option<String> {
    match piece {
        WordPiece::Text(text) => Some(text.clone()),
        WordPiece::EscapeSequence(escape) => Some(unescape(escape).to_owned()),
        WordPiece::ArithmeticExpression(expression) => {
            arith::evaluate(&expression.value).map(|n| n.to_string())
        }
        _ => None,
    }
}

/// Finds the command substitutions in a here-document body that the shell expands.
/// Returns whether the body holds any expansion at all (so its text is not what it shows).
pub(super) fn heredoc_expansions(body: &str) -> (bool, Vec<String>, Option<ParseFailure>) {
    let pieces = match syntax::parse_heredoc(body) {
        Ok(pieces) => pieces,
        Err(failure) => return (true, Vec::new(), Some(failure)),
    };
    let mut reader = Reader::default();
    let mut expands = false;
    for piece in &pieces {
        match &piece.piece {
            WordPiece::Text(_) | WordPiece::EscapeSequence(_) => {}
            _ => {
                expands = true;
                reader.expansion(piece, body, 0);
            }
        }
    }
    (expands, reader.substitutions, reader.failure)
}

/// Finds the command substitutions in text that the shell expands as a word or an
/// arithmetic expression (a `for` list, a `case` pattern, `(( ... ))`).
pub(super) fn hidden_substitutions(text: &str) -> (Vec<String>, Option<ParseFailure>) {
    let mut reader = Reader::default();
    reader.text(text, 0);
    (reader.substitutions, reader.failure)
}

#[derive(Default)]
struct Reader {
    problem: Option<String>,
    substitutions: Vec<String>,
    failure: Option<ParseFailure>,
}

impl Reader {
    fn problem(&mut self, reason: String) {
        self.problem.get_or_insert(reason);
    }

    /// Notes an expansion piece: why it makes the word unknown, and what it runs.
    fn expansion(&mut self, piece: &WordPieceWithSource, text: &str, depth: usize) {
        if depth > MAX_WORD_NESTING {
            self.failure = Some(ParseFailure::TooDeep);
            return;
        }
        let source = slice(text, piece);
        match &piece.piece {
            WordPiece::Text(_) | WordPiece::SingleQuotedText(_) | WordPiece::EscapeSequence(_) => {}
            WordPiece::AnsiCQuotedText(_) => self.problem(format!(
                "`{source}` is ANSI-C quoting, whose escapes the shell decodes"
            )),
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                if matches!(piece.piece, WordPiece::GettextDoubleQuotedSequence(_)) {
                    self.problem(format!(
                        "`{source}` is a translated string, which the shell looks up"
                    ));
                }
                for inner_piece in inner {
                    self.expansion(inner_piece, text, depth + 1);
                }
            }
            WordPiece::TildeExpansion(_) => {
                self.problem(format!("`{source}` expands to a home directory"))
            }
            WordPiece::ParameterExpansion(expression) => {
                self.problem(format!("`{source}` expands a variable"));
                for text in parameter_texts(expression) {
                    self.text(text, depth + 1);
                }
            }
            WordPiece::CommandSubstitution(script)
            | WordPiece::BackquotedCommandSubstitution(script) => {
                self.problem(format!("`{source}` substitutes the output of a command"));
                self.substitutions.push(script.clone());
            }
            WordPiece::ArithmeticExpression(expression) => {
                self.problem(format!("`{source}` expands an arithmetic expression"));
                self.text(&expression.value, depth + 1);
            }
        }
    }

    /// Reads text the shell expands again (a default value, a pattern, an arithmetic
    /// expression) for substitutions hidden in it.
    fn text(&mut self, text: &str, depth: usize) {
        if !text.contains(['$', '`']) {
            return;
        }
        if depth > MAX_WORD_NESTING {
            self.failure = Some(ParseFailure::TooDeep);
            return;
        }
        match syntax::parse_word(text) {
            Ok(pieces) => {
                for piece in &pieces {
                    self.expansion(piece, text, depth + 1);
                }
            }
            Err(failure) => self.failure = Some(failure),
        }
    }
}

/// The texts inside a parameter expansion that the shell expands in turn.
fn parameter_texts(expression: &ParameterExpr) -> Vec<&str> {
    let mut texts = Vec::new();
    let parameter = match expression {
        ParameterExpr::Parameter { parameter, .. }
        | ParameterExpr::ParameterLength { parameter, .. }
        | ParameterExpr::Transform { parameter, .. } => parameter,
        ParameterExpr::UseDefaultValues {
            parameter,
            default_value: text,
            ..
        }
        | ParameterExpr::AssignDefaultValues {
            parameter,
            default_value: text,
            ..
        }
        | ParameterExpr::IndicateErrorIfNullOrUnset {
            parameter,
            error_message: text,
            ..
        }
        | ParameterExpr::UseAlternativeValue {
            parameter,
            alternative_value: text,
            ..
        }
        | ParameterExpr::RemoveSmallestSuffixPattern {
            parameter,
            pattern: text,
            ..
        }
        | ParameterExpr::RemoveLargestSuffixPattern {
            parameter,
            pattern: text,
            ..
        }
        | ParameterExpr::RemoveSmallestPrefixPattern {
            parameter,
            pattern: text,
            ..
        }
        | ParameterExpr::RemoveLargestPrefixPattern {
            parameter,
            pattern: text,
            ..
        }
        | ParameterExpr::UppercaseFirstChar {
            parameter,
            pattern: text,
            ..
        }
        | ParameterExpr::UppercasePattern {
            parameter,
            pattern: text,
            ..
        }
        | ParameterExpr::LowercaseFirstChar {
            parameter,
            pattern: text,
            ..
        }
        | ParameterExpr::LowercasePattern {
            parameter,
            pattern: text,
            ..
        } => {
            texts.extend(text.as_deref());
            parameter
        }
        ParameterExpr::Substring {
            parameter,
            offset,
            length,
            ..
        } => {
            texts.push(offset.value.as_str());
            texts.extend(length.as_ref().map(|l| l.value.as_str()));
            parameter
        }
        ParameterExpr::ReplaceSubstring {
            parameter,
            pattern,
            replacement,
            ..
        } => {
            texts.push(pattern.as_str());
            texts.extend(replacement.as_deref());
            parameter
        }
        ParameterExpr::VariableNames { .. } | ParameterExpr::MemberKeys { .. } => return texts,
    };
    if let Parameter::NamedWithIndex { index, .. } = parameter {
        // An array index is an arithmetic expression: `${a[$(cmd)]}` runs `cmd`.
        texts.push(index.as_str());
    }
    texts
}

fn slice<'a>(text: &'a str, piece: &WordPieceWithSource) -> &'a str {
    text.get(piece.start_index..piece.end_index).unwrap_or(text)
}

/// `\x` -> `x`; a backslash-newline (line continuation) disappears.
/// The text of ANSI-C quoting (`$'...'`, given what stands between the quotes) as bash
/// decodes it: `\n`, `\t`, `\\`, `\'`, octal `\NNN` and hex `\xHH` escapes, and the rest.
/// `None` for what this does not decode the way every locale would: a NUL (which ends the
/// string), a byte above ASCII, `\u`/`\U` characters, `\c` controls and escapes bash
/// leaves alone (`\z`).
pub(super) fn ansi_c(inner: &str) -> Option<String> {
    let mut text = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            text.push(c);
            continue;
        }
        let decoded = match chars.next()? {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'e' | 'E' => '\u{1b}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            c @ ('\\' | '\'' | '"' | '?') => c,
            digit @ '0'..='7' => {
                let mut value = digit.to_digit(8)?;
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(next) => {
                            value = value * 8 + next;
                            chars.next();
                        }
                        None => break,
                    }
                }
                ascii(value)?
            }
            'x' => {
                let mut value = chars.next()?.to_digit(16)?;
                if let Some(next) = chars.peek().and_then(|c| c.to_digit(16)) {
                    value = value * 16 + next;
                    chars.next();
                }
                ascii(value)?
            }
            _ => return None,
        };
        text.push(decoded);
    }
    Some(text)
}

/// A byte value as its ASCII character, but for NUL (which ends a string in the shell).
fn ascii(value: u32) -> Option<char> {
    (1..0x80).contains(&value).then(|| char::from_u32(value))?
}

fn unescape(escape: &str) -> &str {
    let rest = escape.strip_prefix('\\').unwrap_or(escape);
    if rest == "\n" { "" } else { rest }
}

/// Appends literal text to a glob pattern, escaping the characters globbing would read.
fn escape_into(pattern: &mut String, text: &str) {
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
}

/// Stands for a quoted character or an expansion when looking for brace expansions.
const QUOTED: char = '\0';

/// Whether unquoted characters form a brace expansion: a `{` with a matching `}` and, at the
/// first level inside, a `,` (`{a,b}`) or a sequence (`{1..3}`, `{a..e..2}`). Linear, unlike
/// brush-parser's brace parser, which backtracks exponentially on `{a,{a,{a,...` (and panics
/// on `{1..99999999999999999999}`). It may see an expansion bash would not, never the reverse.
fn has_brace_expansion(chars: &[char]) -> bool {
    let mut opens: Vec<(usize, bool)> = Vec::new();
    for (index, &c) in chars.iter().enumerate() {
        match c {
            '{' => opens.push((index, false)),
            ',' => {
                if let Some(last) = opens.last_mut() {
                    last.1 = true;
                }
            }
            '}' => {
                if let Some((start, comma)) = opens.pop() {
                    let inner: String = chars[start + 1..index].iter().collect();
                    if comma || is_sequence(&inner) {
                        return true;
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// `x..y` or `x..y..step`, with `x` and `y` both numbers or both single letters.
fn is_sequence(inner: &str) -> bool {
    let parts: Vec<&str> = inner.split("..").collect();
    let number = |p: &str| {
        let digits = p.strip_prefix(['-', '+']).unwrap_or(p);
        !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
    };
    let letter = |p: &str| p.len() == 1 && p.chars().all(|c| c.is_ascii_alphabetic());
    match parts.as_slice() {
        [from, to] | [from, to, _] if parts.len() == 2 || number(parts[2]) => {
            (number(from) && number(to)) || (letter(from) && letter(to))
        }
        _ => false,
    }
}

/// Unquoted `*`, `?`, or a `[` closed by a later `]`.
fn has_glob(text: &str) -> bool {
    text.contains(['*', '?']) || text.find('[').is_some_and(|i| text[i..].contains(']'))
}

/// `@(...)`, `!(...)`, `+(...)`, `?(...)`, `*(...)` (bash `extglob`, on in brush's bash mode).
pub(super) fn has_extglob(text: &str) -> bool {
    ["@(", "!(", "+(", "?(", "*("]
        .iter()
        .any(|opener| text.contains(opener))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_quoting_is_decoded_as_bash_does() {
        for (inner, text) in [
            ("\\t", "\t"),
            ("a\\nb", "a\nb"),
            ("\\\\ \\' \\\" \\?", "\\ ' \" ?"),
            ("\\101\\102\\x41\\x4a", "ABAJ"),
            ("\\e[1m\\E", "\u{1b}[1m\u{1b}"),
            ("plain é", "plain é"),
        ] {
            assert_eq!(ansi_c(inner).as_deref(), Some(text), "{inner}");
        }
        for inner in [
            "\\0", "a\\x00", "\\x", "\\xg", "\\200", "\\xff", "\\u00e9", "\\cA", "\\z", "\\",
        ] {
            assert_eq!(ansi_c(inner), None, "{inner}");
        }
        let report = analyze("$'a\\tb'x");
        assert_eq!(report.arg.value.as_deref(), Some("a\tbx"));
        assert_eq!(report.problem, None);
        let report = analyze("$'*'");
        assert_eq!(report.arg.pattern, None, "a quoted star is no glob");
        assert!(analyze("$'\\u00e9'").problem.is_some());
    }

    #[test]
    fn literal_words_keep_their_value() {
        let cases = [
            ("plain", "plain"),
            ("'single quoted'", "single quoted"),
            ("\"double quoted\"", "double quoted"),
            ("a\\ b", "a b"),
            ("\\rm", "rm"),
            ("\"a\\$b\"", "a$b"),
            ("mi'x'\"ed\"", "mixed"),
            ("--file=x", "--file=x"),
        ];
        for (raw, value) in cases {
            let report = analyze(raw);
            assert_eq!(report.arg.value.as_deref(), Some(value), "{raw}");
            assert!(report.problem.is_none(), "{raw}: {:?}", report.problem);
        }
    }

    #[test]
    fn expansions_make_the_value_unknown() {
        for raw in [
            "$HOME",
            "\"$HOME\"",
            "${x:-y}",
            "$(whoami)",
            "`whoami`",
            "$((x+2))",
            "$'\\u00e9'",
            "$\"hi\"",
            "{a,b}",
            "x{1..3}",
            "@(a|b)",
        ] {
            let report = analyze(raw);
            assert!(report.arg.value.is_none(), "{raw}");
            assert!(report.problem.is_some(), "{raw}");
        }
    }

    #[test]
    fn substitutions_are_found_where_they_hide() {
        let cases = [
            ("$(rm -rf /)", "rm -rf /"),
            ("\"a$(rm x)b\"", "rm x"),
            ("`rm y`", "rm y"),
            ("${x:-$(rm z)}", "rm z"),
            ("$((1 + $(rm w)))", "rm w"),
            ("${a[$(rm v)]}", "rm v"),
        ];
        for (raw, script) in cases {
            let report = analyze(raw);
            assert_eq!(report.substitutions, vec![script.to_owned()], "{raw}");
        }
    }

    #[test]
    fn globs_and_tildes_are_marked() {
        let star = analyze("*.txt");
        assert_eq!(star.arg.pattern.as_deref(), Some("*.txt"));
        let quoted = analyze("'*.txt'");
        assert_eq!(quoted.arg.pattern, None);
        let mixed = analyze("'*'.t?t");
        assert_eq!(mixed.arg.pattern.as_deref(), Some("\\*.t?t"));
        let home = analyze("~/.ssh/id_rsa");
        assert!(home.arg.tilde);
        assert_eq!(home.arg.value.as_deref(), Some("~/.ssh/id_rsa"));
        assert!(!analyze("'~/x'").arg.tilde);
    }

    /// brush-parser 0.4 panics (`n.parse().unwrap()`) on a huge `~N`; the guard turns that
    /// into a failure instead of a crash.
    #[test]
    fn parser_panics_become_failures() {
        let report = analyze("~99999999999999999999999");
        assert_eq!(report.failure, Some(ParseFailure::Panicked));
    }

    #[test]
    fn brace_expansions_are_found_in_linear_time() {
        for raw in [
            "{a,b}",
            "x{1..3}y",
            "{a..e..2}",
            "{,x}",
            "{a,{b,c}}",
            "{1..99999999999999999999}",
        ] {
            assert!(analyze(raw).problem.is_some(), "{raw}");
        }
        for raw in [
            "{}", "{x}", "'{a,b}'", "\\{a,b}", "{a,b", "a}", "{1..}", "{ab..cd}",
        ] {
            assert!(analyze(raw).problem.is_none(), "{raw}");
        }
        let nasty = format!("{}b", "{a,".repeat(2000));
        let started = std::time::Instant::now();
        let _ = analyze(&nasty);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
}
