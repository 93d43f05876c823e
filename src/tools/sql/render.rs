//! A statement's result as the three faces of a [`ToolOutput`]: a one-line summary, compact
//! tab-separated text for the LLM, a table in a code block for chat (within its budget), and
//! the whole fetched result as `result.csv` when either face had to leave something out.
//!
//! The chat table is drawn here rather than with comfy-table: for a 5 x 6 result comfy-table
//! took about 40 µs, more than half of what the query itself costs through sqlx, against
//! about 3 µs for this psql-style layout (see `benches/sql.rs`).

use std::fmt::Write as _;

use unicode_width::UnicodeWidthStr;

use super::value::Cell;
use crate::core::tools::{Attachment, ToolOutput};

/// Characters of one value shown in a chat table; longer values end in `…`.
const CHAT_CELL_CHARS: usize = 40;
/// A table wider than this is shown as `column: value` lines instead.
const CHAT_TABLE_WIDTH: usize = 100;
/// Characters kept free in the LLM text for the closing note.
const NOTE_RESERVE: usize = 240;
/// The attachment's file name.
pub(crate) const CSV_NAME: &str = "result.csv";

/// How many rows the statement produced, as far as we know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowCount {
    /// Every row was read; this many (the kept rows may be fewer, for confirmed calls that
    /// ran to the end past the row limit).
    Exact(u64),
    /// The row limit stopped the fetch: there were more rows than were kept.
    MoreThanKept,
}

/// A statement's result as fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResultSet {
    /// Column names; empty for a statement that returns no rows.
    pub columns: Vec<String>,
    /// At most the row limit.
    pub rows: Vec<Vec<Cell>>,
    pub count: RowCount,
    /// Rows the engine reports changed, for a confirmed statement that wrote.
    pub rows_affected: Option<u64>,
}

/// How much each face may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    pub llm_chars: usize,
    pub chat_chars: usize,
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl ResultSet {
    fn kept(&self) -> u64 {
        self.rows.len() as u64
    }

    /// `12 rows`, `200 of 200+ rows`, `200 of 5000 rows`, counting `shown` rows.
    fn rows_phrase(&self, shown: u64) -> String {
        match self.count {
            RowCount::Exact(total) if total == shown => plural(total, "row", "rows"),
            RowCount::Exact(total) => format!("{shown} of {total} rows"),
            RowCount::MoreThanKept => format!("{shown} of {}+ rows", self.kept()),
        }
    }

    fn summary(&self) -> String {
        let affected = self
            .rows_affected
            .map(|n| plural(n, "row affected", "rows affected"));
        match (affected, self.columns.is_empty()) {
            (Some(affected), true) => affected,
            (Some(affected), false) => {
                format!("{affected}, {} returned", self.rows_phrase(self.kept()))
            }
            (None, true) => "done, no rows returned".to_owned(),
            (None, false) => self.rows_phrase(self.kept()),
        }
    }
}

/// Renders a result within the budgets.
pub(crate) fn render(result: &ResultSet, budget: Budget) -> ToolOutput {
    let summary = result.summary();
    if result.columns.is_empty() {
        // Only confirmed calls report a count, and they commit when they succeed.
        let text = match result.rows_affected {
            Some(_) => format!("the statement ran and was committed: {summary}"),
            None => "the statement ran; it returns no rows".to_owned(),
        };
        return ToolOutput {
            text,
            chat: summary.clone(),
            summary,
            attachment: None,
        };
    }
    let (text, text_rows) = llm_text(result, budget.llm_chars);
    let chat = chat_text(result, budget.chat_chars);
    let shortened = text_rows < result.rows.len() || chat.rows < result.rows.len() || chat.cut;
    ToolOutput {
        summary,
        text,
        chat: chat.text,
        attachment: shortened.then(|| Attachment {
            filename: CSV_NAME.to_owned(),
            bytes: csv(result).into_bytes(),
        }),
    }
}

// ---------------------------------------------------------------------------------------------
// Cleaning values for display.

/// Characters that render as nothing or reorder text: shown as escapes so nothing hides.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}'
        | '\u{034F}'
        | '\u{061C}'
        | '\u{115F}'..='\u{1160}'
        | '\u{17B4}'..='\u{17B5}'
        | '\u{180B}'..='\u{180F}'
        | '\u{200B}'..='\u{200F}'
        | '\u{2028}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{3164}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{FEFF}'
        | '\u{FFA0}'
        | '\u{FFF0}'..='\u{FFFB}'
        | '\u{E0000}'..='\u{E007F}'
    )
}

/// One line of visible text: newlines and tabs as `\n` and `\t`, other control and invisible
/// characters as `\u{…}`.
fn one_line(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || is_invisible(c) => {
                let _ = write!(out, "\\u{{{:04X}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// A chat cell: one line, no backticks (a run of three would end the code block, and Discord
/// ends a block at any run), at most [`CHAT_CELL_CHARS`] characters. Says whether it cut.
fn chat_cell(value: &str) -> (String, bool) {
    let line = one_line(value).replace('`', "ˋ");
    match line.char_indices().nth(CHAT_CELL_CHARS - 1) {
        Some((cut, _)) if line.chars().count() > CHAT_CELL_CHARS => {
            (format!("{}…", &line[..cut]), true)
        }
        _ => (line, false),
    }
}

// ---------------------------------------------------------------------------------------------
// The LLM's text.

/// A header line, then one tab-separated line per row, as many as fit `budget` characters,
/// then a note when rows were left out. Returns the text and how many rows it holds.
fn llm_text(result: &ResultSet, budget: usize) -> (String, usize) {
    let room = budget.saturating_sub(NOTE_RESERVE);
    let mut text = result
        .columns
        .iter()
        .map(|c| one_line(c))
        .collect::<Vec<_>>()
        .join("\t");
    let mut used = text.chars().count();
    let mut shown = 0;
    for row in &result.rows {
        let line = row
            .iter()
            .map(|cell| one_line(cell.as_text()))
            .collect::<Vec<_>>()
            .join("\t");
        let len = line.chars().count() + 1;
        if used + len > room {
            break;
        }
        text.push('\n');
        text.push_str(&line);
        used += len;
        shown += 1;
    }
    if result.rows.is_empty() {
        text.push_str("\n(no rows)");
    }
    let mut notes = Vec::new();
    if shown < result.rows.len() {
        notes.push(format!(
            "only the first {shown} of the {} fetched rows fit here",
            result.rows.len()
        ));
    }
    match result.count {
        RowCount::MoreThanKept => notes.push(format!(
            "the row limit stopped the query after {} rows, the rest was not fetched",
            result.rows.len()
        )),
        RowCount::Exact(total) if total > result.kept() => notes.push(format!(
            "the statement returned {total} rows, {} were kept",
            result.rows.len()
        )),
        RowCount::Exact(_) => {}
    }
    if !notes.is_empty() {
        let _ = write!(
            text,
            "\n[{}; to see other rows, narrow the query: fewer columns, WHERE, ORDER BY with LIMIT/OFFSET, or aggregates]",
            notes.join("; ")
        );
    }
    (text, shown)
}

// ---------------------------------------------------------------------------------------------
// The chat rendering.

struct Chat {
    text: String,
    /// Rows shown.
    rows: usize,
    /// Some value was cut to fit a cell.
    cut: bool,
}

/// A code block with a table (or `column: value` lines for wide rows), as many rows as fit
/// `budget` characters, and a footer.
fn chat_text(result: &ResultSet, budget: usize) -> Chat {
    let mut cut = false;
    let mut clean = |value: &str| {
        let (text, was_cut) = chat_cell(value);
        cut |= was_cut;
        text
    };
    let header: Vec<String> = result.columns.iter().map(|c| clean(c)).collect();
    let rows: Vec<Vec<String>> = result
        .rows
        .iter()
        .map(|row| row.iter().map(|cell| clean(cell.as_text())).collect())
        .collect();
    let numeric: Vec<bool> = (0..header.len())
        .map(|i| {
            let mut values = result.rows.iter().filter_map(|r| r.get(i));
            values.clone().any(|c| matches!(c, Cell::Number(_)))
                && values.all(|c| matches!(c, Cell::Number(_) | Cell::Null))
        })
        .collect();

    let fits =
        |body: &str, shown: usize| fenced(body, &footer(result, shown)).chars().count() <= budget;
    // Each column is as wide as its widest cell, plus padding and a separator.
    let width: usize = column_widths(&header, &rows).iter().map(|w| w + 3).sum();
    let wide = width > CHAT_TABLE_WIDTH;

    let (body, shown) = if wide {
        let mut body = String::new();
        let mut shown = 0;
        for (n, row) in rows.iter().enumerate() {
            let mut record = format!("-- row {} --", n + 1);
            for (name, value) in header.iter().zip(row) {
                let _ = write!(record, "\n{name}: {value}");
            }
            let candidate = if body.is_empty() {
                record
            } else {
                format!("{body}\n{record}")
            };
            if !fits(&candidate, n + 1) {
                break;
            }
            body = candidate;
            shown = n + 1;
        }
        (body, shown)
    } else {
        let whole = table(&header, &rows, &numeric);
        if fits(&whole, rows.len()) {
            (whole, rows.len())
        } else {
            // More rows never make the table shorter, so the largest count that fits can be
            // found by bisection: a few renderings instead of one per row.
            let (mut lo, mut hi) = (0, rows.len().saturating_sub(1));
            while lo < hi {
                let mid = (lo + hi).div_ceil(2);
                if fits(&table(&header, &rows[..mid], &numeric), mid) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            (table(&header, &rows[..lo], &numeric), lo)
        }
    };
    let text = if shown == 0 && !rows.is_empty() {
        footer(result, 0)
    } else {
        fenced(&body, &footer(result, shown))
    };
    Chat {
        text,
        rows: shown,
        cut,
    }
}

/// The display width of each column: its widest cell, header included.
fn column_widths(header: &[String], rows: &[Vec<String>]) -> Vec<usize> {
    (0..header.len())
        .map(|i| {
            std::iter::once(&header[i])
                .chain(rows.iter().filter_map(|r| r.get(i)))
                .map(|cell| cell.width())
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// psql's look: no outer border, `|` between columns, a `-+-` rule under the header,
/// numeric columns right-aligned.
fn table(header: &[String], rows: &[Vec<String>], numeric: &[bool]) -> String {
    let widths = column_widths(header, rows);
    let mut out = String::new();
    table_line(&mut out, header, &widths, numeric);
    out.push('\n');
    for (i, w) in widths.iter().enumerate() {
        if i > 0 {
            out.push('+');
        }
        out.extend(std::iter::repeat_n('-', w + 2));
    }
    for row in rows {
        out.push('\n');
        table_line(&mut out, row, &widths, numeric);
    }
    out
}

fn table_line(out: &mut String, cells: &[String], widths: &[usize], numeric: &[bool]) {
    let start = out.len();
    for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
        if i > 0 {
            out.push('|');
        }
        out.push(' ');
        let pad = std::iter::repeat_n(' ', width.saturating_sub(cell.width()));
        if numeric.get(i).copied().unwrap_or(false) {
            out.extend(pad);
            out.push_str(cell);
        } else {
            out.push_str(cell);
            out.extend(pad);
        }
        out.push(' ');
    }
    let kept = out[start..].trim_end().len();
    out.truncate(start + kept);
}

fn fenced(body: &str, footer: &str) -> String {
    format!("```text\n{body}\n```\n{footer}")
}

fn footer(result: &ResultSet, shown: usize) -> String {
    let rows = if result.rows.is_empty() {
        "no rows".to_owned()
    } else {
        result.rows_phrase(shown as u64)
    };
    let mut footer = match result.rows_affected {
        Some(n) => format!("{}, {rows}", plural(n, "row affected", "rows affected")),
        None => rows,
    };
    if shown < result.rows.len() {
        let _ = write!(footer, " (all {} in {CSV_NAME})", result.rows.len());
    }
    footer
}

// ---------------------------------------------------------------------------------------------
// The attachment.

/// RFC 4180 CSV of every fetched row; NULL is an empty field.
fn csv(result: &ResultSet) -> String {
    fn field(out: &mut String, value: &str) {
        if value.contains([',', '"', '\n', '\r']) || value.starts_with(' ') || value.ends_with(' ')
        {
            out.push('"');
            out.push_str(&value.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(value);
        }
    }
    let mut out = String::new();
    let mut line = |values: &mut dyn Iterator<Item = &str>| {
        for (i, value) in values.enumerate() {
            if i > 0 {
                out.push(',');
            }
            field(&mut out, value);
        }
        out.push_str("\r\n");
    };
    line(&mut result.columns.iter().map(String::as_str));
    for row in &result.rows {
        line(&mut row.iter().map(|cell| match cell {
            Cell::Null => "",
            other => other.as_text(),
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Cell {
        Cell::Text(s.to_owned())
    }

    fn number(n: i64) -> Cell {
        Cell::Number(n.to_string())
    }

    fn result(rows: usize, count: RowCount) -> ResultSet {
        ResultSet {
            columns: vec!["id".into(), "name".into(), "note".into()],
            rows: (0..rows)
                .map(|i| vec![number(i as i64 + 1), text(&format!("name {i}")), Cell::Null])
                .collect(),
            count,
            rows_affected: None,
        }
    }

    const ROOMY: Budget = Budget {
        llm_chars: 100_000,
        chat_chars: 100_000,
    };

    #[test]
    fn a_small_result_fits_everywhere() {
        let out = render(&result(2, RowCount::Exact(2)), ROOMY);
        assert_eq!(out.summary, "2 rows");
        assert_eq!(out.text, "id\tname\tnote\n1\tname 0\tNULL\n2\tname 1\tNULL");
        assert_eq!(
            out.chat,
            "```text\n id | name   | note\n----+--------+------\n  1 | name 0 | NULL\n  2 | name 1 | NULL\n```\n2 rows"
        );
        assert_eq!(out.attachment, None);
    }

    #[test]
    fn a_capped_result_says_so() {
        let out = render(&result(200, RowCount::MoreThanKept), ROOMY);
        assert_eq!(out.summary, "200 of 200+ rows");
        assert!(out.chat.ends_with("```\n200 of 200+ rows"), "{}", out.chat);
        assert!(
            out.text
                .contains("the row limit stopped the query after 200 rows")
        );
    }

    #[test]
    fn chat_keeps_to_its_budget_and_attaches_the_rest() {
        let budget = Budget {
            llm_chars: 100_000,
            chat_chars: 500,
        };
        let out = render(&result(200, RowCount::MoreThanKept), budget);
        assert!(out.chat.chars().count() <= 500, "{}", out.chat.len());
        let footer = out.chat.lines().last().unwrap_or_default();
        assert!(
            footer.starts_with("1") && footer.ends_with("of 200+ rows (all 200 in result.csv)"),
            "{footer}"
        );
        let attachment = out.attachment.expect("attachment");
        assert_eq!(attachment.filename, "result.csv");
        let csv = String::from_utf8(attachment.bytes).unwrap();
        assert_eq!(csv.lines().count(), 201);
        assert!(csv.starts_with("id,name,note\r\n1,name 0,\r\n"), "{csv}");
    }

    #[test]
    fn llm_text_keeps_whole_rows_within_budget() {
        let budget = Budget {
            llm_chars: 600,
            chat_chars: 100_000,
        };
        let out = render(&result(200, RowCount::Exact(200)), budget);
        assert!(out.text.chars().count() <= 600, "{}", out.text.len());
        assert!(out.text.contains("only the first"), "{}", out.text);
        assert!(out.attachment.is_some());
    }

    #[test]
    fn cells_cannot_break_the_code_block() {
        let mut r = result(1, RowCount::Exact(1));
        r.rows[0][1] = text("a\n```\n@everyone\u{200B}x\u{7}");
        let out = render(&r, ROOMY);
        assert_eq!(out.chat.matches("```").count(), 2, "{}", out.chat);
        assert!(
            out.chat.contains("a\\nˋˋˋ\\n@everyone\\u{200B}x\\u{0007}"),
            "{}",
            out.chat
        );
        assert!(
            out.text.contains("a\\n```\\n@everyone\\u{200B}x\\u{0007}"),
            "{}",
            out.text
        );
    }

    #[test]
    fn long_values_are_cut_in_chat_and_kept_in_csv() {
        let mut r = result(1, RowCount::Exact(1));
        let long = "y".repeat(100);
        r.rows[0][2] = text(&long);
        let out = render(&r, ROOMY);
        assert!(
            out.chat.contains(&format!("{}…", "y".repeat(39))),
            "{}",
            out.chat
        );
        let csv = String::from_utf8(out.attachment.expect("cut means attached").bytes).unwrap();
        assert!(csv.contains(&long));
    }

    #[test]
    fn wide_rows_become_column_value_lines() {
        let columns: Vec<String> = (0..12).map(|i| format!("column_{i}")).collect();
        let r = ResultSet {
            rows: vec![
                columns
                    .iter()
                    .map(|c| text(&format!("value of {c}")))
                    .collect(),
            ],
            columns,
            count: RowCount::Exact(1),
            rows_affected: None,
        };
        let out = render(&r, ROOMY);
        assert!(
            out.chat
                .starts_with("```text\n-- row 1 --\ncolumn_0: value of column_0\n"),
            "{}",
            out.chat
        );
    }

    #[test]
    fn writes_report_rows_affected() {
        let write = ResultSet {
            columns: Vec::new(),
            rows: Vec::new(),
            count: RowCount::Exact(0),
            rows_affected: Some(3),
        };
        let out = render(&write, ROOMY);
        assert_eq!(
            (out.summary.as_str(), out.chat.as_str()),
            ("3 rows affected", "3 rows affected")
        );
        assert_eq!(
            out.text,
            "the statement ran and was committed: 3 rows affected"
        );

        let mut returning = result(1, RowCount::Exact(1));
        returning.rows_affected = Some(1);
        let out = render(&returning, ROOMY);
        assert_eq!(out.summary, "1 row affected, 1 row returned");
        assert!(out.chat.ends_with("1 row affected, 1 row"), "{}", out.chat);
    }

    #[test]
    fn no_rows_still_shows_the_columns() {
        let out = render(&result(0, RowCount::Exact(0)), ROOMY);
        assert_eq!(out.summary, "0 rows");
        assert_eq!(out.text, "id\tname\tnote\n(no rows)");
        assert!(out.chat.ends_with("```\nno rows"), "{}", out.chat);
    }

    #[test]
    fn wide_characters_keep_the_columns_aligned() {
        let r = ResultSet {
            columns: vec!["name".into(), "n".into()],
            rows: vec![
                vec![text("東京"), number(1)],
                vec![text("Oslo"), number(22)],
            ],
            count: RowCount::Exact(2),
            rows_affected: None,
        };
        let out = render(&r, ROOMY);
        assert_eq!(
            out.chat,
            "```text\n name |  n\n------+----\n 東京 |  1\n Oslo | 22\n```\n2 rows"
        );
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        let r = ResultSet {
            columns: vec!["a".into()],
            rows: vec![vec![text("x,\"y\"\nz")], vec![text(" pad")]],
            count: RowCount::Exact(2),
            rows_affected: None,
        };
        assert_eq!(csv(&r), "a\r\n\"x,\"\"y\"\"\nz\"\r\n\" pad\"\r\n");
    }
}
