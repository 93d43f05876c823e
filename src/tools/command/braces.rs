//! Brace expansion (`{a,b}`, `x{1..3}`), done by riskgate itself on a word as written, so
//! that the gate and the plan see the same words: the assessor judges each word the
//! expansion yields, and a planned line runs exactly those words.
//!
//! Like bash, the leftmost brace expression is expanded first, then what it yields, and
//! words that come out empty are dropped. Quoted and escaped characters never expand; the
//! words come back as written, quotes kept, for the usual reading of a word.
//!
//! Kept deliberately small: a word holding `$` or a backquote is not expanded (what the
//! shell expands there is only known when the line runs), letter sequences run only within
//! one case (`{a..e}`, never `{Z..a}`, which yields quotes and backslashes), and a word
//! yielding more than [`MAX_WORDS`] words, or longer than [`MAX_LENGTH`], is refused.

/// The most words one word may become.
pub const MAX_WORDS: usize = 256;
/// The longest word expanded.
pub const MAX_LENGTH: usize = 4096;

/// Why a word with braces was not expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BracesRefused {
    #[error("`{0}` expands to more than {MAX_WORDS} words")]
    TooMany(String),
    #[error("`{0}` is a brace expansion riskgate does not expand itself")]
    Unsupported(String),
}

/// One character of a word: whether the shell may read it as brace syntax.
#[derive(Debug, Clone, Copy)]
struct Char {
    c: char,
    active: bool,
}

/// The words `raw` becomes, quotes kept; `Ok(None)` when it holds no brace expansion.
pub fn expand_braces(raw: &str) -> Result<Option<Vec<String>>, BracesRefused> {
    if !raw.contains('{') {
        return Ok(None);
    }
    if raw.len() > MAX_LENGTH {
        return Err(BracesRefused::Unsupported(raw.to_owned()));
    }
    let chars = mark(raw);
    if first_expression(&chars).is_none() {
        return Ok(None);
    }
    if raw.contains(['$', '`']) {
        return Err(BracesRefused::Unsupported(raw.to_owned()));
    }
    let mut out = Vec::new();
    expand(&chars, raw, &mut out)?;
    Ok(Some(
        out.into_iter()
            .map(|word| word.iter().map(|ch| ch.c).collect::<String>())
            .filter(|word| !word.is_empty())
            .collect(),
    ))
}

/// Whether `raw` holds a brace expression this module would expand.
pub fn has_expression(raw: &str) -> bool {
    raw.contains('{') && (raw.len() > MAX_LENGTH || first_expression(&mark(raw)).is_some())
}

/// Marks the characters outside quotes and escapes.
fn mark(raw: &str) -> Vec<Char> {
    let mut chars = Vec::with_capacity(raw.len());
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in raw.chars() {
        let active = quote.is_none() && !escaped;
        match (quote, c) {
            _ if escaped => escaped = false,
            (None | Some('"'), '\\') => escaped = true,
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        let active = active && !matches!(c, '\\' | '\'' | '"');
        chars.push(Char { c, active });
    }
    chars
}

/// The leftmost brace expression: where it opens and closes, and its parts (the text
/// between top-level commas) or `None` for a sequence.
fn first_expression(chars: &[Char]) -> Option<(usize, usize)> {
    let opens = |ch: &Char| ch.active && ch.c == '{';
    let mut from = 0;
    while let Some(offset) = chars[from..].iter().position(opens) {
        let start = from + offset;
        if let Some(end) = closing(chars, start)
            && (has_top_level_comma(&chars[start + 1..end])
                || sequence(&text(&chars[start + 1..end])).is_some())
        {
            return Some((start, end));
        }
        from = start + 1;
    }
    None
}

/// The matching `}` of the `{` at `start`.
fn closing(chars: &[Char], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (index, ch) in chars.iter().enumerate().skip(start) {
        if !ch.active {
            continue;
        }
        match ch.c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(index);
                }
            }
            _ => {}
        }
    }
    None
}

fn has_top_level_comma(inner: &[Char]) -> bool {
    split_top_level(inner).len() > 1
}

/// The parts of a brace expression's inside between its top-level commas.
fn split_top_level(inner: &[Char]) -> Vec<&[Char]> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (index, ch) in inner.iter().enumerate() {
        if !ch.active {
            continue;
        }
        match ch.c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&inner[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
}

fn text(chars: &[Char]) -> String {
    chars.iter().map(|ch| ch.c).collect()
}

/// Expands `chars` into `out`: the leftmost expression's alternatives, each followed by
/// the rest, each expanded again.
fn expand(chars: &[Char], raw: &str, out: &mut Vec<Vec<Char>>) -> Result<(), BracesRefused> {
    let Some((start, end)) = first_expression(chars) else {
        if out.len() == MAX_WORDS {
            return Err(BracesRefused::TooMany(raw.to_owned()));
        }
        out.push(chars.to_vec());
        return Ok(());
    };
    let inner = &chars[start + 1..end];
    let alternatives: Vec<Vec<Char>> = match sequence(&text(inner)) {
        Some(items) => items?
            .into_iter()
            .map(|item| item.chars().map(|c| Char { c, active: false }).collect())
            .collect(),
        None => split_top_level(inner)
            .into_iter()
            .map(<[Char]>::to_vec)
            .collect(),
    };
    for alternative in alternatives {
        let mut word = chars[..start].to_vec();
        word.extend(alternative);
        word.extend_from_slice(&chars[end + 1..]);
        expand(&word, raw, out)?;
    }
    Ok(())
}

/// `x..y` or `x..y..step`: integers (zero-padded when an end is) or letters of one case.
/// `None` when the text is no sequence; `Some(Err)` when it is one too long to expand.
fn sequence(inner: &str) -> Option<Result<Vec<String>, BracesRefused>> {
    let parts: Vec<&str> = inner.split("..").collect();
    let (from, to, step) = match parts.as_slice() {
        [from, to] => (*from, *to, None),
        [from, to, step] => (*from, *to, Some(step.parse::<i64>().ok()?)),
        _ => return None,
    };
    let step = step.map_or(1, i64::unsigned_abs).max(1);
    let too_many = || Some(Err(BracesRefused::TooMany(format!("{{{inner}}}"))));
    let number = |s: &str| {
        let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
        !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
    };
    if number(from) && number(to) {
        let (Ok(a), Ok(b)) = (from.parse::<i64>(), to.parse::<i64>()) else {
            return too_many();
        };
        if a.abs_diff(b) / step >= MAX_WORDS as u64 {
            return too_many();
        }
        let padded = |s: &str| s.trim_start_matches('-').starts_with('0') && s.len() > 1;
        let width = if padded(from) || padded(to) {
            from.len().max(to.len())
        } else {
            0
        };
        let values = walk(a, b, step).map(|n| {
            if n < 0 {
                format!("-{:0>w$}", n.unsigned_abs(), w = width.saturating_sub(1))
            } else {
                format!("{n:0>width$}")
            }
        });
        return Some(Ok(values.collect()));
    }
    let letter = |s: &str| {
        let mut chars = s.chars();
        chars
            .next()
            .filter(|c| c.is_ascii_alphabetic() && chars.next().is_none())
    };
    let (a, b) = (letter(from)?, letter(to)?);
    if a.is_ascii_lowercase() != b.is_ascii_lowercase() {
        return Some(Err(BracesRefused::Unsupported(format!("{{{inner}}}"))));
    }
    Some(Ok(walk(i64::from(a as u8), i64::from(b as u8), step)
        .map(|n| char::from(n as u8).to_string())
        .collect()))
}

/// From `a` to `b` inclusive, by `step`, upwards or downwards.
fn walk(a: i64, b: i64, step: u64) -> impl Iterator<Item = i64> {
    let count = a.abs_diff(b) / step + 1;
    let step = i64::try_from(step).unwrap_or(i64::MAX);
    (0..count).map(move |i| {
        let offset = i64::try_from(i).unwrap_or(i64::MAX).saturating_mul(step);
        if a <= b { a + offset } else { a - offset }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(raw: &str) -> Option<Vec<String>> {
        expand_braces(raw).expect("expands")
    }

    fn list(items: &[&str]) -> Option<Vec<String>> {
        Some(items.iter().map(|s| (*s).to_owned()).collect())
    }

    #[test]
    fn lists_and_sequences_expand_like_bash() {
        assert_eq!(words("{a,b,c}"), list(&["a", "b", "c"]));
        assert_eq!(words("x{1..3}y"), list(&["x1y", "x2y", "x3y"]));
        assert_eq!(words("{a..e..2}"), list(&["a", "c", "e"]));
        assert_eq!(words("{3..1}"), list(&["3", "2", "1"]));
        assert_eq!(words("{01..03}"), list(&["01", "02", "03"]));
        assert_eq!(words("{-1..1}"), list(&["-1", "0", "1"]));
        assert_eq!(
            words("src/{main,lib}.rs"),
            list(&["src/main.rs", "src/lib.rs"])
        );
        assert_eq!(words("{a,{b,c}}d"), list(&["ad", "bd", "cd"]));
        assert_eq!(words("{a,b}{1,2}"), list(&["a1", "a2", "b1", "b2"]));
        // Empty words are dropped; quotes stay for the reading of the word.
        assert_eq!(words("{,x}"), list(&["x"]));
        assert_eq!(words("{'a b',c}"), list(&["'a b'", "c"]));
        assert_eq!(words("{x}{a,b}"), list(&["{x}a", "{x}b"]));
    }

    #[test]
    fn words_without_an_expression_are_left_alone() {
        for raw in [
            "{}",
            "{x}",
            "'{a,b}'",
            "\\{a,b}",
            "\"{a,b}\"",
            "{a,b",
            "a}",
            "{1..}",
            "x{}",
        ] {
            assert_eq!(words(raw), None, "{raw}");
        }
    }

    #[test]
    fn words_it_cannot_vouch_for_are_refused() {
        for raw in [
            "{1..1000}",
            "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}",
            "{Z..a}",
            "{a,$x}",
            "{1..99999999999999999999}",
        ] {
            assert!(expand_braces(raw).is_err(), "{raw}");
        }
        assert!(expand_braces("{a,`id`}").is_err());
        let nasty = format!("{}b", "{a,".repeat(2000));
        let started = std::time::Instant::now();
        let _ = expand_braces(&nasty);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
}
