//! What a person may safely read of a call. [`legible`] shows every character that is
//! invisible, changes the text's direction, could drive a terminal, or can be taken for
//! another as an escape, `\u{202e}`, and counts what it escaped by kind, so an approval can
//! say plainly that the call holds such characters. Only what is shown changes: the stored
//! arguments, their hash and what runs are the call exactly as the model wrote it.
//!
//! The classes, in the order they are checked:
//! - a backslash followed by `u{` (so every `\u{…}` shown is an escape: typed text
//!   `\u{202e}` is shown as `\u{5c}u{202e}`);
//! - controls (C0, DEL, C1: CR, ESC and so terminal escape sequences), except newline and
//!   tab where lines are kept;
//! - the bidirectional controls (U+061C, U+200E/F, U+202A–202E, U+2066–2069);
//! - whitespace other than space, newline and tab (NBSP, U+2000–200A, U+3000, U+2028/9),
//!   and the blank braille pattern U+2800, which renders as a space;
//! - private-use and unassigned code points (nobody knows what they look like);
//! - format characters (Cf: zero-width spaces and joiners, soft hyphen, BOM, tags) and the
//!   other default-ignorable code points (variation selectors, Hangul fillers), except a
//!   joiner or selector where a script or an emoji needs it;
//! - combining marks on an ASCII character, on an escaped one, or piled more than
//!   [`MARKS_ON_ONE_LETTER`] high;
//! - characters confusable with ASCII (UTS #39 skeletons: Cyrillic and Greek look-alikes,
//!   fullwidth forms, look-alike punctuation) where they can pass for ASCII: in a word with
//!   ASCII letters or digits, in a word made only of look-alikes, or as punctuation beside
//!   ASCII text. Japanese with its fullwidth brackets, Russian words, accented French (and
//!   its apostrophe, U+2019 inside a word) and emoji stay as they are.
//!
//! The Unicode data comes from crates rather than tables written here: confusables and
//! default-ignorables from `unicode-security` (its UTS #39 skeleton, whose first step drops
//! default-ignorable code points), general categories and emoji properties from
//! `unicode-properties`, scripts from `unicode-script`, combining classes from
//! `unicode-normalization`. The twelve bidirectional controls are the whole of their
//! property and are listed here.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;
use unicode_properties::{
    GeneralCategory, GeneralCategoryGroup, UnicodeEmoji, UnicodeGeneralCategory,
};
use unicode_script::{Script, UnicodeScript};
use unicode_security::GeneralSecurityProfile;

/// More combining marks than this on one letter are escaped: scripts that stack marks use
/// up to four; a pile of them overflows onto the lines around it and hides them.
pub const MARKS_ON_ONE_LETTER: usize = 4;

/// Why a character is shown as an escape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Hidden {
    /// A control character: a terminal may act on it (ESC, CR, C1 controls).
    Control,
    /// A bidirectional control: it reorders how the text around it is drawn.
    Direction,
    /// Zero-width, format or otherwise default-ignorable: drawn as nothing.
    Invisible,
    /// Whitespace other than space, newline and tab.
    Space,
    /// A combining mark on an ASCII or escaped character, or one of a pile.
    Mark,
    /// A character that can pass for an ASCII one.
    LookAlike,
    /// A private-use or unassigned code point.
    Unassigned,
    /// A backslash before `u{` in the call itself, escaped so it cannot pass for an escape.
    Backslash,
}

impl Hidden {
    /// How a warning names `n` of them.
    fn named(self, n: usize) -> String {
        let (one, many) = match self {
            Self::Control => ("control character", "control characters"),
            Self::Direction => ("direction control", "direction controls"),
            Self::Invisible => ("invisible character", "invisible characters"),
            Self::Space => ("unusual space", "unusual spaces"),
            Self::Mark => ("stray combining mark", "stray combining marks"),
            Self::LookAlike => ("look-alike character", "look-alike characters"),
            Self::Unassigned => (
                "private-use or unassigned character",
                "private-use or unassigned characters",
            ),
            Self::Backslash => ("backslash before `u{`", "backslashes before `u{`"),
        };
        format!("{n} {}", if n == 1 { one } else { many })
    }
}

/// Whether newline and tab are shown as they are (a block of text) or escaped (a text
/// shown on one line, such as a reason that quotes the call).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    Kept,
    Escaped,
}

/// How many characters were escaped, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Escaped {
    pub total: usize,
    pub kinds: BTreeMap<Hidden, usize>,
}

impl Escaped {
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// How many of one kind.
    pub fn count(&self, kind: Hidden) -> usize {
        self.kinds.get(&kind).copied().unwrap_or(0)
    }

    fn add(&mut self, kind: Hidden) {
        self.total += 1;
        *self.kinds.entry(kind).or_default() += 1;
    }

    /// Adds what another text escaped.
    pub fn merge(&mut self, other: &Escaped) {
        self.total += other.total;
        for (kind, n) in &other.kinds {
            *self.kinds.entry(*kind).or_default() += n;
        }
    }

    /// A short note for a list of calls (`/pending`), when anything was escaped.
    pub fn note(&self) -> Option<String> {
        let s = if self.total == 1 { "" } else { "s" };
        (!self.is_empty()).then(|| format!("⚠ {} character{s} shown as `\\u{{…}}`", self.total))
    }

    /// The line an approval shows when anything was escaped: what the call contains, how it
    /// is shown, and that what runs is the call as written.
    pub fn warning(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let hidden = self.total - self.count(Hidden::Backslash);
        let listed: Vec<String> = self
            .kinds
            .iter()
            .filter(|(kind, _)| **kind != Hidden::Backslash)
            .map(|(kind, n)| kind.named(*n))
            .collect();
        let mut text = String::from("⚠ ");
        if hidden > 0 {
            let (these, it_them) = if hidden == 1 {
                ("1 character that is", "it")
            } else {
                (&*format!("{hidden} characters that are"), "them")
            };
            let _ = write!(
                text,
                "This call contains {these} invisible, change the text's direction or can pass for others ({}), shown here as `\\u{{…}}` with the code point in hex. What runs is the call exactly as written, with {it_them} in it.",
                listed.join(", "),
            );
        } else {
            text.push_str("What runs is the call exactly as written.");
        }
        if self.count(Hidden::Backslash) > 0 {
            text.push_str(
                " A backslash the call itself has before `u{` is shown as `\\u{5c}`, so every `\\u{…}` here stands for one character.",
            );
        }
        Some(text)
    }
}

/// A text as a person may safely read it, and what had to be escaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Legible {
    pub text: String,
    pub escaped: Escaped,
}

/// `text` with every character a person could misread escaped as `\u{hex}` (see the module
/// documentation for the classes), and the count of what was escaped.
pub fn legible(text: &str, lines: Lines) -> Legible {
    let plain =
        |b: u8| (b' '..=b'~').contains(&b) || (lines == Lines::Kept && (b == b'\n' || b == b'\t'));
    if text.bytes().all(plain) && !text.contains("\\u{") {
        return Legible {
            text: text.to_owned(),
            escaped: Escaped::default(),
        };
    }
    let chars: Vec<char> = text.chars().collect();
    let mut reader = Reader::new(&chars, lines);
    let mut shown = String::with_capacity(text.len() + 16);
    let mut escaped = Escaped::default();
    for (i, &c) in chars.iter().enumerate() {
        match reader.judge(i) {
            None => shown.push(c),
            Some(kind) => {
                escaped.add(kind);
                let _ = write!(shown, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    Legible {
        text: shown,
        escaped,
    }
}

const ZWNJ: char = '\u{200c}';
const ZWJ: char = '\u{200d}';
const KEYCAP: char = '\u{20e3}';
const EMOJI_STYLE: char = '\u{fe0f}';
const TEXT_STYLE: char = '\u{fe0e}';
const APOSTROPHE: char = '\u{2019}';

/// The Bidi_Control property: every character whose only job is to steer direction.
fn is_direction_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// The UTS #39 skeleton of one character: `None` when it is default-ignorable (the skeleton
/// drops those), else whether it is made of ASCII only.
fn skeleton_is_ascii(c: char) -> Option<bool> {
    let mut buffer = [0; 4];
    let mut skeleton = unicode_security::skeleton(c.encode_utf8(&mut buffer)).peekable();
    skeleton.peek()?;
    Some(skeleton.all(|s| s.is_ascii()))
}

fn group(c: char) -> GeneralCategoryGroup {
    c.general_category_group()
}

fn is_mark(c: char) -> bool {
    group(c) == GeneralCategoryGroup::Mark
}

fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}')
}

/// Scripts whose letters join, where ZWJ and ZWNJ choose the letters' forms.
fn is_joining_script(script: Script) -> bool {
    matches!(
        script,
        Script::Arabic
            | Script::Syriac
            | Script::Nko
            | Script::Mongolian
            | Script::Mandaic
            | Script::Manichaean
            | Script::Psalter_Pahlavi
            | Script::Adlam
            | Script::Hanifi_Rohingya
            | Script::Sogdian
    )
}

/// What a word (a run of letters, digits, marks and joiners) holds, for look-alikes.
#[derive(Debug, Clone, Copy, Default)]
struct Word {
    /// An ASCII letter or digit: a look-alike among them passes for ASCII.
    ascii: bool,
    /// Every letter and digit in it is a non-ASCII look-alike: the whole word passes for
    /// an ASCII one.
    only_look_alikes: bool,
}

/// One pass over a text: what each character is, and where the current letter's marks stand.
struct Reader<'a> {
    chars: &'a [char],
    lines: Lines,
    /// Per character: a non-ASCII character whose skeleton is ASCII.
    look_alike: Vec<bool>,
    /// Per character: the word it belongs to, if any.
    word_of: Vec<Option<usize>>,
    words: Vec<Word>,
    /// The character marks attach to, and whether it was shown as it is.
    base: Option<(char, bool)>,
    marks: usize,
}

impl<'a> Reader<'a> {
    fn new(chars: &'a [char], lines: Lines) -> Self {
        let look_alike: Vec<bool> = chars
            .iter()
            .map(|&c| !c.is_ascii() && skeleton_is_ascii(c) == Some(true))
            .collect();
        let mut word_of = vec![None; chars.len()];
        let mut words: Vec<Word> = Vec::new();
        for (i, &c) in chars.iter().enumerate() {
            let letter = matches!(
                group(c),
                GeneralCategoryGroup::Letter | GeneralCategoryGroup::Number
            );
            if !(letter || is_mark(c) || c == ZWJ || c == ZWNJ) {
                continue;
            }
            let continues = i > 0 && word_of[i - 1].is_some();
            if !continues {
                words.push(Word {
                    ascii: false,
                    only_look_alikes: true,
                });
            }
            let index = words.len() - 1;
            word_of[i] = Some(index);
            if letter {
                let word = &mut words[index];
                word.ascii |= c.is_ascii();
                word.only_look_alikes &= look_alike[i];
            }
        }
        Self {
            chars,
            lines,
            look_alike,
            word_of,
            words,
            base: None,
            marks: 0,
        }
    }

    fn at(&self, i: Option<usize>) -> Option<char> {
        i.and_then(|i| self.chars.get(i).copied())
    }

    /// Whether character `i` is escaped, and why; keeps track of the letter marks sit on.
    fn judge(&mut self, i: usize) -> Option<Hidden> {
        let c = self.chars[i];
        let verdict = self.kind(i);
        if is_mark(c) && !is_variation_selector(c) {
            self.marks += 1;
        } else if !(c == ZWJ || c == ZWNJ || is_variation_selector(c)) {
            self.base = Some((c, verdict.is_none()));
            self.marks = 0;
        }
        verdict
    }

    fn kind(&mut self, i: usize) -> Option<Hidden> {
        let c = self.chars[i];
        if c == '\n' || c == '\t' {
            return (self.lines == Lines::Escaped).then_some(Hidden::Control);
        }
        if c.is_ascii() {
            return if c.is_ascii_control() {
                Some(Hidden::Control)
            } else if c == '\\'
                && self.at(Some(i + 1)) == Some('u')
                && self.at(Some(i + 2)) == Some('{')
            {
                Some(Hidden::Backslash)
            } else {
                None
            };
        }
        if is_direction_control(c) {
            return Some(Hidden::Direction);
        }
        match c.general_category() {
            GeneralCategory::Control => return Some(Hidden::Control),
            GeneralCategory::SpaceSeparator
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator => return Some(Hidden::Space),
            GeneralCategory::PrivateUse
            | GeneralCategory::Unassigned
            | GeneralCategory::Surrogate => {
                return Some(Hidden::Unassigned);
            }
            _ => {}
        }
        if c == '\u{2800}' {
            return Some(Hidden::Space);
        }
        if self.needed_by_script_or_emoji(i) {
            return None;
        }
        if c.general_category() == GeneralCategory::Format || skeleton_is_ascii(c).is_none() {
            return Some(Hidden::Invisible);
        }
        if is_mark(c) {
            return self.mark();
        }
        if self.look_alike[i] {
            return self.look_alike_passes(i).then_some(Hidden::LookAlike);
        }
        None
    }

    /// A joiner or selector that a script or an emoji sequence needs, shown as it is.
    fn needed_by_script_or_emoji(&self, i: usize) -> bool {
        let c = self.chars[i];
        let previous = self.at(i.checked_sub(1));
        let next = self.at(Some(i + 1));
        let emoji = |x: Option<char>| x.is_some_and(|x| !x.is_ascii() && x.is_emoji_char());
        let keycap_base = |x: Option<char>| x.is_some_and(|x| matches!(x, '0'..='9' | '#' | '*'));
        match c {
            ZWJ if (emoji(previous) || previous == Some(EMOJI_STYLE)) && emoji(next) => true,
            ZWJ | ZWNJ => self.joins_letters(i),
            EMOJI_STYLE if keycap_base(previous) && next == Some(KEYCAP) => true,
            EMOJI_STYLE | TEXT_STYLE => emoji(previous),
            KEYCAP => previous == Some(EMOJI_STYLE) && keycap_base(self.at(i.checked_sub(2))),
            '\u{e0100}'..='\u{e01ef}' => previous.is_some_and(|x| x.script() == Script::Han),
            _ => false,
        }
    }

    /// ZWJ or ZWNJ after a virama (Indic conjuncts), or between two letters of one joining
    /// script (Persian's ZWNJ).
    fn joins_letters(&self, i: usize) -> bool {
        let next = self.at(Some(i + 1));
        let next_letter =
            next.filter(|x| !x.is_ascii() && group(*x) == GeneralCategoryGroup::Letter);
        let Some(next_letter) = next_letter else {
            return false;
        };
        let previous = self.at(i.checked_sub(1));
        if previous.is_some_and(|x| unicode_normalization::char::canonical_combining_class(x) == 9)
        {
            return true;
        }
        let base = self.chars[..i].iter().rev().find(|x| !is_mark(**x));
        base.is_some_and(|base| {
            group(*base) == GeneralCategoryGroup::Letter
                && base.script() == next_letter.script()
                && is_joining_script(base.script())
        })
    }

    /// A combining mark: shown on a non-ASCII letter shown as it is, up to a few.
    fn mark(&self) -> Option<Hidden> {
        let on_shown_letter = self
            .base
            .is_some_and(|(base, shown)| shown && !base.is_ascii());
        (!on_shown_letter || self.marks >= MARKS_ON_ONE_LETTER).then_some(Hidden::Mark)
    }

    /// Whether look-alike `i` can pass for ASCII where it stands.
    fn look_alike_passes(&self, i: usize) -> bool {
        let c = self.chars[i];
        if let Some(word) = self.word_of[i].map(|w| self.words[w]) {
            if word.ascii {
                // Among ASCII letters only a letter of the Latin alphabet itself (œ, ı) is
                // taken for what it is.
                return !(c.identifier_allowed() && c.script() == Script::Latin);
            }
            return word.only_look_alikes;
        }
        let letter = |j: Option<usize>| {
            self.at(j)
                .is_some_and(|x| group(x) == GeneralCategoryGroup::Letter)
        };
        if c == APOSTROPHE && letter(i.checked_sub(1)) && letter(Some(i + 1)) {
            // An apostrophe inside a word (l’été, it’s) reads as one, not as a quote.
            return false;
        }
        // Punctuation or a symbol: shown as it is only inside text that is plainly not
        // ASCII, like fullwidth brackets in Japanese.
        let plain = |j: usize| {
            self.chars.get(j).is_some_and(|&x| {
                !x.is_ascii()
                    && !self.look_alike[j]
                    && matches!(
                        group(x),
                        GeneralCategoryGroup::Letter
                            | GeneralCategoryGroup::Number
                            | GeneralCategoryGroup::Punctuation
                            | GeneralCategoryGroup::Symbol
                    )
            })
        };
        let apart = |j: Option<usize>| match j {
            None => true,
            Some(j) => matches!(self.chars.get(j), None | Some(' ' | '\n' | '\t')) || plain(j),
        };
        let previous = i.checked_sub(1);
        let next = i + 1;
        let beside_plain = previous.is_some_and(plain) || plain(next);
        !(apart(previous) && apart(Some(next)) && beside_plain)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// What a block of text shows, and its escapes by kind.
    fn shown(text: &str) -> (String, Vec<(Hidden, usize)>) {
        let legible = legible(text, Lines::Kept);
        let kinds = legible
            .escaped
            .kinds
            .iter()
            .map(|(k, n)| (*k, *n))
            .collect();
        (legible.text, kinds)
    }

    /// Checks each case: the text, exactly what is shown, and the one kind escaped.
    fn check(cases: &[(&str, &str)], kind: Hidden) {
        for (text, expected) in cases {
            let (text_shown, kinds) = shown(text);
            assert_eq!(text_shown, *expected, "{text:?}");
            let escapes = expected.matches("\\u{").count();
            assert_eq!(kinds, [(kind, escapes)], "{text:?}");
        }
    }

    /// Reads a shown text back: every `\u{hex}` is the one character it names.
    fn decode(shown: &str) -> String {
        let mut out = String::new();
        let mut rest = shown;
        while let Some(at) = rest.find("\\u{") {
            out.push_str(&rest[..at]);
            let after = &rest[at + 3..];
            let end = after.find('}').expect("an escape ends");
            let code = u32::from_str_radix(&after[..end], 16).expect("hex");
            out.push(char::from_u32(code).expect("a character"));
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        out
    }

    #[test]
    fn plain_text_newlines_and_tabs_are_shown_as_they_are() {
        for text in [
            "ls -la",
            "SELECT 1;\n\tSELECT 2",
            "printf '%s\\n' \\x41",
            "",
            "a\\b",
        ] {
            assert_eq!(shown(text), (text.to_owned(), vec![]), "{text:?}");
        }
    }

    #[test]
    fn controls_are_escaped_so_a_terminal_acts_on_none() {
        check(
            &[
                ("ls\rrm -rf /", "ls\\u{d}rm -rf /"),
                ("\x1b[2J\x1b]0;title\x07", "\\u{1b}[2J\\u{1b}]0;title\\u{7}"),
                ("a\0b\x7f", "a\\u{0}b\\u{7f}"),
                ("next\u{85}line", "next\\u{85}line"),
                ("\u{9b}31m", "\\u{9b}31m"),
                ("form\x0bfeed\x0c", "form\\u{b}feed\\u{c}"),
            ],
            Hidden::Control,
        );
    }

    #[test]
    fn every_direction_control_is_escaped() {
        for c in [
            '\u{061c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}',
            '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
        ] {
            let text = format!("a{c}b");
            let expected = format!("a\\u{{{:x}}}b", u32::from(c));
            check(&[(&text, &expected)], Hidden::Direction);
        }
        check(
            &[("rm -rf /\u{202e}/tmp", "rm -rf /\\u{202e}/tmp")],
            Hidden::Direction,
        );
    }

    #[test]
    fn zero_width_format_and_default_ignorable_characters_are_escaped() {
        check(
            &[
                ("r\u{200b}m", "r\\u{200b}m"),
                ("a\u{200c}b\u{200d}c", "a\\u{200c}b\\u{200d}c"),
                (
                    "\u{2060}\u{2061}\u{2062}\u{2063}\u{2064}",
                    "\\u{2060}\\u{2061}\\u{2062}\\u{2063}\\u{2064}",
                ),
                ("\u{feff}SELECT 1", "\\u{feff}SELECT 1"),
                ("a\u{180e}b", "a\\u{180e}b"),
                ("pass\u{ad}word", "pass\\u{ad}word"),
                (
                    "ok\u{e0001}\u{e0069}\u{e0067}\u{e006e}\u{e007f}",
                    "ok\\u{e0001}\\u{e0069}\\u{e0067}\\u{e006e}\\u{e007f}",
                ),
                ("a\u{fe0f}b\u{fe00}", "a\\u{fe0f}b\\u{fe00}"),
                ("x\u{e0100}", "x\\u{e0100}"),
                ("a\u{34f}b", "a\\u{34f}b"),
                ("\u{3164}\u{115f}\u{ffa0}", "\\u{3164}\\u{115f}\\u{ffa0}"),
            ],
            Hidden::Invisible,
        );
        // An unassigned default-ignorable code point is counted as unassigned.
        check(&[("\u{2065}", "\\u{2065}")], Hidden::Unassigned);
        // A selector smuggling data after an emoji: only the first is the emoji's.
        check(
            &[(
                "😀\u{fe0f}\u{fe01}\u{e0143}",
                "😀\u{fe0f}\\u{fe01}\\u{e0143}",
            )],
            Hidden::Invisible,
        );
    }

    #[test]
    fn whitespace_other_than_space_newline_and_tab_is_escaped() {
        check(
            &[
                ("rm\u{a0}-rf", "rm\\u{a0}-rf"),
                (
                    "a\u{2000}b\u{200a}c\u{202f}d\u{205f}e",
                    "a\\u{2000}b\\u{200a}c\\u{202f}d\\u{205f}e",
                ),
                ("東京\u{3000}大阪", "東京\\u{3000}大阪"),
                ("one\u{2028}two\u{2029}", "one\\u{2028}two\\u{2029}"),
                ("a\u{1680}b\u{2800}c", "a\\u{1680}b\\u{2800}c"),
            ],
            Hidden::Space,
        );
    }

    #[test]
    fn marks_on_ascii_or_piled_high_are_escaped() {
        check(
            &[
                ("cafe\u{301}", "cafe\\u{301}"),
                ("\u{301}start", "\\u{301}start"),
                ("a \u{20dd}", "a \\u{20dd}"),
                ("1\u{20e3}", "1\\u{20e3}"),
                (
                    "ệ\u{300}\u{301}\u{302}\u{303}\u{304}\u{305}",
                    "ệ\u{300}\u{301}\u{302}\u{303}\\u{304}\\u{305}",
                ),
            ],
            Hidden::Mark,
        );
        // A mark on an escaped character is escaped with it.
        let (text, kinds) = shown("\u{200b}\u{301}");
        assert_eq!(text, "\\u{200b}\\u{301}");
        assert_eq!(kinds, [(Hidden::Invisible, 1), (Hidden::Mark, 1)]);
    }

    #[test]
    fn look_alikes_that_can_pass_for_ascii_are_escaped() {
        check(
            &[
                // Cyrillic р and а among ASCII letters.
                (
                    "curl https://\u{440}\u{430}ypal.com",
                    "curl https://\\u{440}\\u{430}ypal.com",
                ),
                // A Cyrillic word made only of look-alikes reads as ASCII "poe".
                ("cat \u{440}\u{43e}\u{435}", "cat \\u{440}\\u{43e}\\u{435}"),
                // Greek omicron in an ASCII word.
                ("r\u{3bf}ot", "r\\u{3bf}ot"),
                // Fullwidth letters, a fullwidth semicolon, mathematical bold.
                ("\u{ff52}\u{ff4d} -rf", "\\u{ff52}\\u{ff4d} -rf"),
                ("true\u{ff1b}rm", "true\\u{ff1b}rm"),
                ("\u{1d41a}dmin", "\\u{1d41a}dmin"),
                // The Greek question mark is a semicolon; hyphens and a one-dot leader.
                ("a\u{37e} b", "a\\u{37e} b"),
                ("\u{2010}\u{2010}force", "\\u{2010}\\u{2010}force"),
                ("file\u{2024}txt", "file\\u{2024}txt"),
                // Quotes that are not the shell's, a dental click that reads as l.
                ("echo \u{2018}x\u{2019}", "echo \\u{2018}x\\u{2019}"),
                ("\u{1c0}s", "\\u{1c0}s"),
                ("\u{ff08}test\u{ff09}", "\\u{ff08}test\\u{ff09}"),
            ],
            Hidden::LookAlike,
        );
    }

    #[test]
    fn private_use_and_unassigned_code_points_are_escaped() {
        check(
            &[
                ("a\u{e000}b", "a\\u{e000}b"),
                ("\u{f8ff}\u{10fffd}", "\\u{f8ff}\\u{10fffd}"),
                ("\u{378}\u{fffe}\u{10ffff}", "\\u{378}\\u{fffe}\\u{10ffff}"),
            ],
            Hidden::Unassigned,
        );
    }

    #[test]
    fn a_typed_escape_cannot_pass_for_one_of_ours() {
        // The call holds the six characters `\u{202e}`, not U+202E.
        check(
            &[
                ("printf '\\u{202e}'", "printf '\\u{5c}u{202e}'"),
                ("\\\\u{41}", "\\\\u{5c}u{41}"),
            ],
            Hidden::Backslash,
        );
        // Other backslashes are the call's own and stay.
        for text in ["\\u202e", "a\\nb", "\\U{41}", "\\u", "\\"] {
            assert_eq!(shown(text), (text.to_owned(), vec![]), "{text:?}");
        }
        // Typed text and a real character are told apart.
        let typed = legible("\\u{202e}", Lines::Kept).text;
        let real = legible("\u{202e}", Lines::Kept).text;
        assert_ne!(typed, real);
        assert_eq!(decode(&typed), "\\u{202e}");
        assert_eq!(decode(&real), "\u{202e}");
    }

    #[test]
    fn legitimate_non_latin_text_stays_readable() {
        for text in [
            "東京都のテスト（試験）です。「こんにちは、世界」",
            "第〇回の価格は１２３円",
            "echo 'café crème, naïve, cœur, Noël, garçon'",
            "l’été, aujourd’hui, it’s",
            "привет, мир; Москва",
            "Καλημέρα κόσμε",
            "kırmızı, straße, ø, Tiếng Việt",
            "السلام عليكم",
            "می\u{200c}خواهم",
            "नमस्ते, क्\u{200d}ष",
            "👍🏽 ❤\u{fe0f} 👨\u{200d}👩\u{200d}👧 🇯🇵 1\u{fe0f}\u{20e3} ❤\u{fe0f}\u{200d}🔥 ✌\u{fe0e}",
            "葛\u{e0100}城",
        ] {
            assert_eq!(shown(text), (text.to_owned(), vec![]), "{text:?}");
        }
    }

    #[test]
    fn one_line_texts_escape_newlines_and_tabs() {
        let one = legible("a\nb\tc", Lines::Escaped);
        assert_eq!(one.text, "a\\u{a}b\\u{9}c");
        assert_eq!(one.escaped.count(Hidden::Control), 2);
    }

    #[test]
    fn the_warning_says_what_the_call_contains_and_that_it_runs_as_written() {
        assert_eq!(legible("ls", Lines::Kept).escaped.warning(), None);
        let hidden = legible("a\u{202e}b\u{200b}c\u{200b}", Lines::Kept).escaped;
        assert_eq!(hidden.total, 3);
        assert_eq!(
            hidden.warning().as_deref(),
            Some(
                "⚠ This call contains 3 characters that are invisible, change the text's direction or can pass for others (1 direction control, 2 invisible characters), shown here as `\\u{…}` with the code point in hex. What runs is the call exactly as written, with them in it."
            )
        );
        let one = legible("a\u{200b}", Lines::Kept).escaped;
        assert!(
            one.warning().is_some_and(|w| w
                .starts_with("⚠ This call contains 1 character that is invisible")
                && w.contains("(1 invisible character)")
                && w.ends_with("with it in it.")),
            "{one:?}"
        );
        let typed = legible("\\u{41}", Lines::Kept).escaped;
        assert_eq!(
            typed.warning().as_deref(),
            Some(
                "⚠ What runs is the call exactly as written. A backslash the call itself has before `u{` is shown as `\\u{5c}`, so every `\\u{…}` here stands for one character."
            )
        );
        let mut both = hidden.clone();
        both.merge(&typed);
        assert_eq!(both.total, 4);
        assert!(
            both.warning().is_some_and(
                |w| w.contains("3 characters") && w.contains("stands for one character")
            ),
            "{both:?}"
        );
    }

    proptest! {
        /// Whatever the text, what is shown reads back to exactly the text, and shows no
        /// character that a terminal or Discord would act on or draw as nothing.
        #[test]
        fn what_is_shown_reads_back_to_the_text_exactly(text in "(\\PC|\\p{C}|\\\\u\\{|[\u{200b}-\u{206f}]|\\s){0,40}") {
            let shown = legible(&text, Lines::Kept);
            prop_assert_eq!(decode(&shown.text), text.clone());
            for c in shown.text.chars() {
                prop_assert!(
                    c == '\n' || c == '\t' || !(c.is_control() || is_direction_control(c)
                        || c.general_category() == GeneralCategory::Format),
                    "{:?} shown raw in {:?}", c, shown.text
                );
            }
            let one_line = legible(&text, Lines::Escaped);
            prop_assert!(!one_line.text.contains('\n'));
            prop_assert_eq!(decode(&one_line.text), text);
        }
    }
}
