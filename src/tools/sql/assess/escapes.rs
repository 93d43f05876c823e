//! PostgreSQL's Unicode-escaped identifiers, decoded before the parser sees them.
//!
//! `U&"pg\005fread_file"` is the identifier `pg_read_file` to PostgreSQL, but sqlparser
//! reads it as the word `U`, an `&` and a quoted word holding a backslash: a function with
//! that name would look unknown, not like the server-file reader it is. So the three tokens
//! are merged into one quoted word with the escapes undone (`\XXXX`, `\+XXXXXX`, a doubled
//! escape character, and another escape character chosen with `UESCAPE 'c'`), exactly as the
//! server does. Text whose escapes the server would reject, or that this decoder cannot
//! follow, is reported as an error, which the caller treats as text it cannot read.

use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

/// Merges every `U&"..."` (with an optional `UESCAPE 'c'`) into one decoded quoted word.
pub(super) fn decode_unicode_identifiers(
    tokens: Vec<TokenWithSpan>,
) -> Result<Vec<TokenWithSpan>, String> {
    if !tokens.iter().any(|t| t.token == Token::Ampersand) {
        return Ok(tokens);
    }
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    let mut index = 0;
    while index < tokens.len() {
        let Some(quoted) = unicode_identifier_at(&tokens, index) else {
            out.push(tokens[index].clone());
            index += 1;
            continue;
        };
        let mut next = index + 3;
        let mut escape = '\\';
        if let Some((chosen, after)) = uescape_after(&tokens, next)? {
            escape = chosen;
            next = after;
        }
        let value = decode(&quoted.value, escape)?;
        out.push(TokenWithSpan {
            token: Token::Word(Word {
                value,
                quote_style: Some('"'),
                keyword: sqlparser::keywords::Keyword::NoKeyword,
            }),
            span: tokens[index].span,
        });
        index = next;
    }
    Ok(out)
}

/// The quoted word of `U&"..."` when one starts at `index` (no space inside `U&"`).
fn unicode_identifier_at(tokens: &[TokenWithSpan], index: usize) -> Option<&Word> {
    match (
        &tokens.get(index)?.token,
        &tokens.get(index + 1)?.token,
        &tokens.get(index + 2)?.token,
    ) {
        (Token::Word(u), Token::Ampersand, Token::Word(quoted))
            if u.quote_style.is_none()
                && u.value.eq_ignore_ascii_case("u")
                && quoted.quote_style == Some('"') =>
        {
            Some(quoted)
        }
        _ => None,
    }
}

/// `UESCAPE 'c'` starting at `index` (after optional whitespace): the escape character and
/// the index after it.
fn uescape_after(tokens: &[TokenWithSpan], index: usize) -> Result<Option<(char, usize)>, String> {
    let significant = |from: usize| {
        (from..tokens.len()).find(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
    };
    let Some(keyword) = significant(index) else {
        return Ok(None);
    };
    match &tokens[keyword].token {
        Token::Word(word)
            if word.quote_style.is_none() && word.value.eq_ignore_ascii_case("uescape") => {}
        _ => return Ok(None),
    }
    let value = significant(keyword + 1).map(|i| (i, &tokens[i].token));
    match value {
        Some((i, Token::SingleQuotedString(text))) => {
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None)
                    if !c.is_ascii_hexdigit()
                        && !matches!(c, '+' | '\'' | '"')
                        && !c.is_whitespace() =>
                {
                    Ok(Some((c, i + 1)))
                }
                _ => Err(format!("invalid Unicode escape character {text:?}")),
            }
        }
        _ => Err("UESCAPE must be followed by a one-character string".to_owned()),
    }
}

/// Undoes the escapes of a `U&` identifier's text.
fn decode(text: &str, escape: char) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != escape {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&escape) {
            chars.next();
            out.push(escape);
            continue;
        }
        let digits = if chars.peek() == Some(&'+') {
            chars.next();
            6
        } else {
            4
        };
        let hex: String = chars.by_ref().take(digits).collect();
        let code = (hex.len() == digits && hex.chars().all(|h| h.is_ascii_hexdigit()))
            .then(|| u32::from_str_radix(&hex, 16).ok())
            .flatten()
            .filter(|&code| code != 0)
            .and_then(char::from_u32)
            .ok_or_else(|| format!("invalid Unicode escape {escape}{hex} in an identifier"))?;
        out.push(code);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn words(sql: &str) -> Result<Vec<String>, String> {
        let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql)
            .tokenize_with_location()
            .map_err(|e| e.to_string())?;
        Ok(decode_unicode_identifiers(tokens)?
            .into_iter()
            .filter_map(|t| match t.token {
                Token::Word(w) => Some(w.value),
                _ => None,
            })
            .collect())
    }

    #[test]
    fn escapes_are_undone_as_the_server_does() {
        assert_eq!(
            words(r#"SELECT U&"pg\005fread_file"('x')"#).unwrap(),
            ["SELECT", "pg_read_file"]
        );
        assert_eq!(
            words(r#"SELECT u&"pg\+00005Fread_file"()"#).unwrap(),
            ["SELECT", "pg_read_file"]
        );
        assert_eq!(
            words(r#"SELECT U&"pg!005fread!!file" UESCAPE '!'()"#).unwrap(),
            ["SELECT", "pg_read!file"]
        );
        assert_eq!(words(r#"SELECT U&"a""b""#).unwrap(), ["SELECT", "a\"b"]);
        // Not a U& identifier: a space, or a bitwise and of a column and a quoted name.
        assert_eq!(words(r#"SELECT u & "x""#).unwrap(), ["SELECT", "u", "x"]);
    }

    #[test]
    fn escapes_the_server_rejects_are_errors() {
        for sql in [
            r#"SELECT U&"\00zz"()"#,
            r#"SELECT U&"\0000"()"#,
            r#"SELECT U&"\d800"()"#,
            r#"SELECT U&"x" UESCAPE 'ab'"#,
            r#"SELECT U&"x" UESCAPE '+'"#,
            r#"SELECT U&"x" UESCAPE 1"#,
        ] {
            assert!(words(sql).is_err(), "{sql}");
        }
    }
}
