//! One result value as text, decoded per engine from what the driver hands over.
//!
//! sqlx is built without its chrono/time/decimal/uuid features, and PostgreSQL and MySQL send
//! prepared-statement results in their binary formats, so dates, numerics, UUIDs and the like
//! are decoded here from the documented wire formats. A value that cannot be decoded becomes
//! `<type name>`: one odd column never fails the whole call.

use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};

use sqlx::mysql::{MySql, MySqlRow, MySqlValueRef};
use sqlx::postgres::{PgRow, PgTypeInfo, PgTypeKind, PgValueFormat, PgValueRef};
use sqlx::sqlite::{SqliteRow, SqliteValueRef};
use sqlx::{Decode, Row, TypeInfo, ValueRef};

/// Characters of one value kept; the rest is cut with a note. Bounds memory and the CSV.
pub(crate) const CELL_CHARS: usize = 8_192;
/// Byte strings up to this long are shown in hex; longer ones as `<N bytes>`.
const HEX_BYTES: usize = 64;

/// One value of a result row, formatted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cell {
    Null,
    /// A number: right-aligned in tables.
    Number(String),
    /// Anything else, as text.
    Text(String),
}

impl Cell {
    fn text(s: impl Into<String>) -> Self {
        Self::Text(cap_chars(s.into()))
    }

    fn opaque(type_name: &str) -> Self {
        Self::Text(format!("<{type_name}>"))
    }

    /// The value as plain text, NULL as `NULL`.
    pub(crate) fn as_text(&self) -> &str {
        match self {
            Self::Null => "NULL",
            Self::Number(s) | Self::Text(s) => s,
        }
    }
}

fn cap_chars(mut s: String) -> String {
    if let Some((cut, _)) = s.char_indices().nth(CELL_CHARS) {
        let more = s[cut..].chars().count();
        s.truncate(cut);
        let _ = write!(s, "… ({more} more characters)");
    }
    s
}

/// A float as engines' own clients show it: `279.0` rather than Rust's `279`.
fn float(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        f.to_string()
    }
}

/// [`float`] for single precision, which widening to `f64` would print as `0.10000000149…`.
fn float32(f: f32) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e7 {
        format!("{f:.1}")
    } else {
        f.to_string()
    }
}

/// `\x0a1b` for short byte strings, `<N bytes>` for long ones.
fn bytes_cell(bytes: &[u8]) -> Cell {
    if bytes.len() <= HEX_BYTES {
        let mut s = String::with_capacity(2 + bytes.len() * 2);
        s.push_str("\\x");
        for b in bytes {
            let _ = write!(s, "{b:02x}");
        }
        Cell::Text(s)
    } else {
        Cell::Text(format!("<{} bytes>", bytes.len()))
    }
}

// ---------------------------------------------------------------------------------------------
// SQLite: dynamically typed; the value's own storage class decides.

/// The cells of one SQLite row.
pub(crate) fn sqlite_row(row: &SqliteRow) -> Vec<Cell> {
    (0..row.len())
        .map(|i| match row.try_get_raw(i) {
            Ok(value) => sqlite_value(value),
            Err(_) => Cell::opaque("unreadable"),
        })
        .collect()
}

fn sqlite_value(value: SqliteValueRef<'_>) -> Cell {
    if value.is_null() {
        return Cell::Null;
    }
    let type_info = value.type_info().into_owned();
    let decoded = match type_info.name() {
        "INTEGER" => <i64 as Decode<sqlx::Sqlite>>::decode(value)
            .map(|n| Cell::Number(n.to_string()))
            .ok(),
        "REAL" => <f64 as Decode<sqlx::Sqlite>>::decode(value)
            .map(|f| Cell::Number(float(f)))
            .ok(),
        "BLOB" => <Vec<u8> as Decode<sqlx::Sqlite>>::decode(value)
            .map(|b| bytes_cell(&b))
            .ok(),
        _ => <String as Decode<sqlx::Sqlite>>::decode(value)
            .map(Cell::text)
            .ok(),
    };
    decoded.unwrap_or_else(|| Cell::opaque(type_info.name()))
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: binary format, by type OID (https://www.postgresql.org/docs/current/datatype.html
// and the *_send functions of the server for the layouts).

/// The cells of one PostgreSQL row.
pub(crate) fn postgres_row(row: &PgRow) -> Vec<Cell> {
    (0..row.len())
        .map(|i| match row.try_get_raw(i) {
            Ok(value) => postgres_value(value),
            Err(_) => Cell::opaque("unreadable"),
        })
        .collect()
}

fn postgres_value(value: PgValueRef<'_>) -> Cell {
    if value.is_null() {
        return Cell::Null;
    }
    let type_info = value.type_info().into_owned();
    let Ok(bytes) = value.as_bytes() else {
        return Cell::opaque(type_info.name());
    };
    if value.format() == PgValueFormat::Text {
        // Only our own simple-protocol queries produce text; it is already what psql shows.
        return match std::str::from_utf8(bytes) {
            Ok(s) => Cell::text(s),
            Err(_) => Cell::opaque(type_info.name()),
        };
    }
    match pg_typed(&type_info, bytes) {
        Some(PgText::Number(s)) => Cell::Number(s),
        Some(PgText::Bytes) => bytes_cell(bytes),
        Some(PgText::Text(s)) => Cell::text(s),
        None => Cell::opaque(type_info.name()),
    }
}

/// A decoded PostgreSQL value, before it becomes a [`Cell`].
enum PgText {
    Number(String),
    Text(String),
    /// `bytea`: shown like other byte strings.
    Bytes,
}

/// Decodes by the type's kind first (enums, domains, arrays of any element), then by OID.
fn pg_typed(type_info: &PgTypeInfo, bytes: &[u8]) -> Option<PgText> {
    match type_info.kind() {
        PgTypeKind::Enum(_) => utf8(bytes).map(PgText::Text),
        PgTypeKind::Domain(base) => pg_typed(base, bytes),
        PgTypeKind::Array(element) => pg_array(bytes, &|oid, b| {
            pg_by_oid(oid, b)
                .or_else(|| pg_typed(element, b))
                .map(pg_plain)
        })
        .map(PgText::Text),
        _ => match type_info.oid() {
            Some(oid) => pg_by_oid(oid.0, bytes),
            // Extension types have no fixed OID; citext is text on the wire.
            None if type_info.name().eq_ignore_ascii_case("citext") => {
                utf8(bytes).map(PgText::Text)
            }
            None => None,
        },
    }
}

fn pg_plain(text: PgText) -> String {
    match text {
        PgText::Number(s) | PgText::Text(s) => s,
        PgText::Bytes => "<bytes>".to_owned(),
    }
}

fn utf8(bytes: &[u8]) -> Option<String> {
    std::str::from_utf8(bytes).ok().map(str::to_owned)
}

fn be<const N: usize>(bytes: &[u8], at: usize) -> Option<[u8; N]> {
    bytes.get(at..at + N)?.try_into().ok()
}

fn be_i16(bytes: &[u8], at: usize) -> Option<i16> {
    be(bytes, at).map(i16::from_be_bytes)
}

fn be_u16(bytes: &[u8], at: usize) -> Option<u16> {
    be(bytes, at).map(u16::from_be_bytes)
}

fn be_i32(bytes: &[u8], at: usize) -> Option<i32> {
    be(bytes, at).map(i32::from_be_bytes)
}

fn be_u32(bytes: &[u8], at: usize) -> Option<u32> {
    be(bytes, at).map(u32::from_be_bytes)
}

fn be_i64(bytes: &[u8], at: usize) -> Option<i64> {
    be(bytes, at).map(i64::from_be_bytes)
}

/// Built-in types by OID (`pg_type.dat`); `None` for types not handled here.
fn pg_by_oid(oid: u32, bytes: &[u8]) -> Option<PgText> {
    let exact = |n: usize| bytes.len() == n;
    let number = |s: String| Some(PgText::Number(s));
    match oid {
        // bool
        16 if exact(1) => Some(PgText::Text(
            if bytes[0] != 0 { "true" } else { "false" }.to_owned(),
        )),
        // bytea
        17 => Some(PgText::Bytes),
        // "char"
        18 if exact(1) => Some(PgText::Text(char::from(bytes[0]).to_string())),
        // name, text, xml, json, unknown, bpchar, varchar
        19 | 25 | 142 | 114 | 705 | 1042 | 1043 => utf8(bytes).map(PgText::Text),
        // int8
        20 => number(be_i64(bytes, 0).filter(|_| exact(8))?.to_string()),
        // int2
        21 => number(be_i16(bytes, 0).filter(|_| exact(2))?.to_string()),
        // int4
        23 => number(be_i32(bytes, 0).filter(|_| exact(4))?.to_string()),
        // oid, regproc, xid, cid, regprocedure, regoper, regoperator, regclass, regtype, …
        24 | 26 | 28 | 29 | 2202..=2206 | 4089 | 4096 => {
            number(be_u32(bytes, 0).filter(|_| exact(4))?.to_string())
        }
        // float4, float8
        700 => number(float32(f32::from_be_bytes(
            be(bytes, 0).filter(|_| exact(4))?,
        ))),
        701 => number(float(f64::from_be_bytes(
            be(bytes, 0).filter(|_| exact(8))?,
        ))),
        // money: cents, assuming the usual two fraction digits
        790 => number(fixed_point(be_i64(bytes, 0).filter(|_| exact(8))?, 2)),
        // macaddr
        829 if exact(6) => Some(PgText::Text(
            bytes
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(":"),
        )),
        // inet, cidr
        869 | 650 => pg_inet(bytes).map(PgText::Text),
        // date
        1082 => pg_date(be_i32(bytes, 0).filter(|_| exact(4))?).map(PgText::Text),
        // time
        1083 => Some(PgText::Text(time_of_day(
            be_i64(bytes, 0).filter(|_| exact(8))?,
        ))),
        // timestamp, timestamptz (sent in UTC)
        1114 | 1184 => {
            let micros = be_i64(bytes, 0).filter(|_| exact(8))?;
            let mut s = pg_timestamp(micros)?;
            if oid == 1184 && micros != i64::MAX && micros != i64::MIN {
                s.push_str("+00");
            }
            Some(PgText::Text(s))
        }
        // interval
        1186 if exact(16) => Some(PgText::Text(pg_interval(
            be_i64(bytes, 0)?,
            be_i32(bytes, 8)?,
            be_i32(bytes, 12)?,
        ))),
        // timetz: time, then the zone's offset in seconds west of UTC
        1266 if exact(12) => {
            let mut s = time_of_day(be_i64(bytes, 0)?);
            s.push_str(&utc_offset(-be_i32(bytes, 8)?));
            Some(PgText::Text(s))
        }
        // numeric
        1700 => pg_numeric(bytes).map(PgText::Number),
        // record
        2249 => pg_record(bytes).map(PgText::Text),
        // uuid
        2950 if exact(16) => Some(PgText::Text(uuid(bytes))),
        // jsonb: a version byte (1), then the text
        3802 if bytes.first() == Some(&1) => utf8(&bytes[1..]).map(PgText::Text),
        // Built-in array types, when a value arrives without its kind (inside a record).
        1000 | 1001 | 1005 | 1007 | 1016 | 1009 | 1015 | 1014 | 1021 | 1022 | 1231 | 2951 | 199
        | 3807 | 1182 | 1115 | 1185 | 1003 => {
            pg_array(bytes, &|oid, b| pg_by_oid(oid, b).map(pg_plain)).map(PgText::Text)
        }
        _ => None,
    }
}

/// `12345` with scale 2 is `123.45`.
fn fixed_point(value: i64, scale: u32) -> String {
    let unit = 10_i64.pow(scale);
    let sign = if value < 0 { "-" } else { "" };
    let abs = value.unsigned_abs();
    let unit = unit.unsigned_abs();
    format!(
        "{sign}{}.{:0width$}",
        abs / unit,
        abs % unit,
        width = scale as usize
    )
}

/// `numeric`: ndigits, weight, sign, dscale, then base-10000 digits.
fn pg_numeric(bytes: &[u8]) -> Option<String> {
    let ndigits = usize::try_from(be_i16(bytes, 0)?).ok()?;
    let weight = i32::from(be_i16(bytes, 2)?);
    let sign = be_u16(bytes, 4)?;
    let dscale = usize::from(be_u16(bytes, 6)?);
    if bytes.len() != 8 + 2 * ndigits {
        return None;
    }
    match sign {
        0xC000 => return Some("NaN".to_owned()),
        0xD000 => return Some("Infinity".to_owned()),
        0xF000 => return Some("-Infinity".to_owned()),
        0x0000 | 0x4000 => {}
        _ => return None,
    }
    let digit = |k: i32| -> Option<i16> {
        match usize::try_from(k) {
            Ok(k) if k < ndigits => be_i16(bytes, 8 + 2 * k),
            _ => Some(0),
        }
    };
    let mut s = String::new();
    if sign == 0x4000 {
        s.push('-');
    }
    if weight < 0 {
        s.push('0');
    } else {
        for k in 0..=weight {
            let d = digit(k)?;
            if k == 0 {
                let _ = write!(s, "{d}");
            } else {
                let _ = write!(s, "{d:04}");
            }
        }
    }
    if dscale > 0 {
        let mut fraction = String::with_capacity(dscale + 4);
        let mut k = weight + 1;
        while fraction.len() < dscale {
            let _ = write!(fraction, "{:04}", digit(k)?);
            k += 1;
        }
        fraction.truncate(dscale);
        s.push('.');
        s.push_str(&fraction);
    }
    Some(s)
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Days from 1970-01-01 to 2000-01-01, PostgreSQL's epoch.
const PG_EPOCH_DAYS: i64 = 10_957;

/// `2024-03-01`, or `0044-03-15 BC` as PostgreSQL writes years before 1.
fn format_date(days_since_1970: i64) -> (String, bool) {
    let (year, month, day) = civil_from_days(days_since_1970);
    if year <= 0 {
        (format!("{:04}-{month:02}-{day:02}", 1 - year), true)
    } else {
        (format!("{year:04}-{month:02}-{day:02}"), false)
    }
}

fn pg_date(days: i32) -> Option<String> {
    match days {
        i32::MAX => Some("infinity".to_owned()),
        i32::MIN => Some("-infinity".to_owned()),
        _ => {
            let (date, bc) = format_date(i64::from(days) + PG_EPOCH_DAYS);
            Some(if bc { format!("{date} BC") } else { date })
        }
    }
}

/// `HH:MM:SS` plus the fraction of a second without trailing zeros.
fn time_of_day(micros: i64) -> String {
    // 24:00:00 is a valid time of day in PostgreSQL, so no modulo here.
    let micros = micros.max(0);
    let secs = micros / 1_000_000;
    let mut s = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    push_fraction(&mut s, micros % 1_000_000);
    s
}

fn push_fraction(s: &mut String, micros: i64) {
    if micros != 0 {
        let fraction = format!("{micros:06}");
        s.push('.');
        s.push_str(fraction.trim_end_matches('0'));
    }
}

fn pg_timestamp(micros: i64) -> Option<String> {
    match micros {
        i64::MAX => Some("infinity".to_owned()),
        i64::MIN => Some("-infinity".to_owned()),
        _ => {
            let days = micros.div_euclid(86_400_000_000);
            let (date, bc) = format_date(days + PG_EPOCH_DAYS);
            let mut s = format!("{date} {}", time_of_day(micros.rem_euclid(86_400_000_000)));
            if bc {
                s.push_str(" BC");
            }
            Some(s)
        }
    }
}

/// `+02`, `-05:30`.
fn utc_offset(seconds_east: i32) -> String {
    let sign = if seconds_east < 0 { '-' } else { '+' };
    let abs = seconds_east.unsigned_abs();
    let (h, m, s) = (abs / 3600, abs / 60 % 60, abs % 60);
    match (m, s) {
        (0, 0) => format!("{sign}{h:02}"),
        (_, 0) => format!("{sign}{h:02}:{m:02}"),
        _ => format!("{sign}{h:02}:{m:02}:{s:02}"),
    }
}

/// PostgreSQL's default interval style: `1 year 2 mons 3 days 04:05:06.5`.
fn pg_interval(micros: i64, days: i32, months: i32) -> String {
    fn unit(n: i64, one: &str, many: &str) -> String {
        format!("{n} {}", if n == 1 { one } else { many })
    }
    let mut parts = Vec::new();
    let (years, months) = (months / 12, months % 12);
    if years != 0 {
        parts.push(unit(i64::from(years), "year", "years"));
    }
    if months != 0 {
        parts.push(unit(i64::from(months), "mon", "mons"));
    }
    if days != 0 {
        parts.push(unit(i64::from(days), "day", "days"));
    }
    if micros != 0 || parts.is_empty() {
        let sign = if micros < 0 { "-" } else { "" };
        let abs = micros.unsigned_abs();
        let secs = abs / 1_000_000;
        let mut s = format!(
            "{sign}{:02}:{:02}:{:02}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        );
        push_fraction(&mut s, (abs % 1_000_000) as i64);
        parts.push(s);
    }
    parts.join(" ")
}

/// `inet`/`cidr`: family, bits, is_cidr, address length, address.
fn pg_inet(bytes: &[u8]) -> Option<String> {
    let (family, bits, is_cidr, len) = (
        *bytes.first()?,
        *bytes.get(1)?,
        *bytes.get(2)?,
        *bytes.get(3)?,
    );
    let address = bytes.get(4..4 + usize::from(len))?;
    let (text, full) = match family {
        2 => (
            Ipv4Addr::from(<[u8; 4]>::try_from(address).ok()?).to_string(),
            32,
        ),
        3 => (
            Ipv6Addr::from(<[u8; 16]>::try_from(address).ok()?).to_string(),
            128,
        ),
        _ => return None,
    };
    Some(if is_cidr != 0 || bits != full {
        format!("{text}/{bits}")
    } else {
        text
    })
}

fn uuid(bytes: &[u8]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Quotes an array element or record field as PostgreSQL's text output does.
fn pg_quote(item: &str, empty_needs_quotes: bool) -> String {
    let special =
        |c: char| matches!(c, '{' | '}' | ',' | '"' | '\\' | '(' | ')') || c.is_whitespace();
    if (empty_needs_quotes && item.is_empty())
        || item.eq_ignore_ascii_case("null")
        || item.chars().any(special)
    {
        let escaped = item.replace('\\', "\\\\").replace('"', "\\\"");
        format!("\"{escaped}\"")
    } else {
        item.to_owned()
    }
}

type ElementDecoder<'a> = dyn Fn(u32, &[u8]) -> Option<String> + 'a;

/// Arrays: ndim, has-nulls flag, element OID, (length, lower bound) per dimension, then
/// each element as length (-1 for NULL) and bytes. Written like PostgreSQL: `{1,2,NULL}`.
fn pg_array(bytes: &[u8], element: &ElementDecoder<'_>) -> Option<String> {
    let ndim = usize::try_from(be_i32(bytes, 0)?).ok()?;
    let element_oid = be_u32(bytes, 8)?;
    if ndim == 0 {
        return Some("{}".to_owned());
    }
    let mut dims = Vec::with_capacity(ndim);
    for d in 0..ndim {
        dims.push(usize::try_from(be_i32(bytes, 12 + 8 * d)?).ok()?);
    }
    let mut at = 12 + 8 * ndim;
    let total: usize = dims.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n))?;
    let mut items = Vec::with_capacity(total.min(10_000));
    for _ in 0..total {
        let len = be_i32(bytes, at)?;
        at += 4;
        if len < 0 {
            items.push("NULL".to_owned());
            continue;
        }
        let len = usize::try_from(len).ok()?;
        let raw = bytes.get(at..at + len)?;
        at += len;
        items.push(pg_quote(&element(element_oid, raw)?, true));
    }
    fn nest(items: &[String], dims: &[usize]) -> String {
        match dims.split_first() {
            None => String::new(),
            Some((_, [])) => format!("{{{}}}", items.join(",")),
            Some((&n, rest)) => {
                let chunk = items.len() / n.max(1);
                let inner: Vec<String> =
                    items.chunks(chunk.max(1)).map(|c| nest(c, rest)).collect();
                format!("{{{}}}", inner.join(","))
            }
        }
    }
    Some(nest(&items, &dims))
}

/// Anonymous records: field count, then per field its OID, length and bytes: `(1,abc)`.
fn pg_record(bytes: &[u8]) -> Option<String> {
    let fields = usize::try_from(be_i32(bytes, 0)?).ok()?;
    let mut at = 4;
    let mut items = Vec::with_capacity(fields.min(1_000));
    for _ in 0..fields {
        let oid = be_u32(bytes, at)?;
        let len = be_i32(bytes, at + 4)?;
        at += 8;
        if len < 0 {
            items.push(String::new());
            continue;
        }
        let len = usize::try_from(len).ok()?;
        let raw = bytes.get(at..at + len)?;
        at += len;
        items.push(pg_quote(&pg_plain(pg_by_oid(oid, raw)?), false));
    }
    Some(format!("({})", items.join(",")))
}

// ---------------------------------------------------------------------------------------------
// MySQL and MariaDB: the binary protocol of prepared statements, by column type name.

/// The cells of one MySQL/MariaDB row.
pub(crate) fn mysql_row(row: &MySqlRow) -> Vec<Cell> {
    (0..row.len())
        .map(|i| match row.try_get_raw(i) {
            Ok(value) => mysql_value(value),
            Err(_) => Cell::opaque("unreadable"),
        })
        .collect()
}

fn mysql_value(value: MySqlValueRef<'_>) -> Cell {
    if value.is_null() {
        return Cell::Null;
    }
    let type_info = value.type_info().into_owned();
    let name = type_info.name();
    let decoded = match name {
        "BOOLEAN" | "TINYINT" | "SMALLINT" | "MEDIUMINT" | "INT" | "BIGINT" | "YEAR" => {
            <i64 as Decode<MySql>>::decode(value)
                .ok()
                .map(|n| Cell::Number(n.to_string()))
        }
        "TINYINT UNSIGNED" | "SMALLINT UNSIGNED" | "MEDIUMINT UNSIGNED" | "INT UNSIGNED"
        | "BIGINT UNSIGNED" => <u64 as Decode<MySql>>::decode(value)
            .ok()
            .map(|n| Cell::Number(n.to_string())),
        "FLOAT" => <f32 as Decode<MySql>>::decode(value)
            .ok()
            .map(|f| Cell::Number(float32(f))),
        "DOUBLE" => <f64 as Decode<MySql>>::decode(value)
            .ok()
            .map(|f| Cell::Number(float(f))),
        "DECIMAL" => <&str as Decode<MySql>>::decode(value)
            .ok()
            .map(|s| Cell::Number(s.to_owned())),
        "DATE" | "DATETIME" | "TIMESTAMP" => <&[u8] as Decode<MySql>>::decode(value)
            .ok()
            .and_then(mysql_datetime)
            .map(Cell::Text),
        "TIME" => <sqlx::mysql::types::MySqlTime as Decode<MySql>>::decode(value)
            .ok()
            .map(|t| Cell::Text(t.to_string())),
        "BIT" => <&[u8] as Decode<MySql>>::decode(value).ok().map(|b| {
            let n = b
                .iter()
                .fold(0u128, |acc, &byte| (acc << 8) | u128::from(byte));
            Cell::Number(n.to_string())
        }),
        "BINARY" | "VARBINARY" | "TINYBLOB" | "BLOB" | "MEDIUMBLOB" | "LONGBLOB" | "GEOMETRY" => {
            <&[u8] as Decode<MySql>>::decode(value)
                .ok()
                .map(mysql_bytes)
        }
        _ => <&str as Decode<MySql>>::decode(value).ok().map(Cell::text),
    };
    decoded.unwrap_or_else(|| Cell::opaque(name))
}

/// Binary columns often hold text (`GROUP_CONCAT`, some JSON functions): show it when it is
/// printable UTF-8, bytes otherwise.
fn mysql_bytes(bytes: &[u8]) -> Cell {
    match std::str::from_utf8(bytes) {
        Ok(s) if s.chars().all(|c| !c.is_control() || c == '\n' || c == '\t') => Cell::text(s),
        _ => bytes_cell(bytes),
    }
}

/// DATE/DATETIME/TIMESTAMP: a length byte (0, 4, 7 or 11), year (LE u16), month, day, then
/// hour, minute, second, then microseconds (LE u32).
fn mysql_datetime(bytes: &[u8]) -> Option<String> {
    let (&len, rest) = bytes.split_first()?;
    if rest.len() != usize::from(len) {
        return None;
    }
    if len == 0 {
        return Some("0000-00-00".to_owned());
    }
    let year = u16::from_le_bytes(be(rest, 0)?);
    let mut s = format!("{year:04}-{:02}-{:02}", rest.get(2)?, rest.get(3)?);
    if len >= 7 {
        let _ = write!(
            s,
            " {:02}:{:02}:{:02}",
            rest.get(4)?,
            rest.get(5)?,
            rest.get(6)?
        );
    }
    if len >= 11 {
        push_fraction(&mut s, i64::from(u32::from_le_bytes(be(rest, 7)?)));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_follow_the_proleptic_calendar() {
        assert_eq!(pg_date(0).as_deref(), Some("2000-01-01"));
        assert_eq!(pg_date(-1).as_deref(), Some("1999-12-31"));
        assert_eq!(pg_date(8_826).as_deref(), Some("2024-03-01"));
        assert_eq!(pg_date(-730_119).as_deref(), Some("0001-01-01"));
        assert_eq!(pg_date(-730_120).as_deref(), Some("0001-12-31 BC"));
        assert_eq!(pg_date(i32::MAX).as_deref(), Some("infinity"));
    }

    #[test]
    fn timestamps_and_times_drop_trailing_zeros() {
        let micros = (8_826_i64 * 86_400 + 3_723) * 1_000_000 + 500_000;
        assert_eq!(
            pg_timestamp(micros).as_deref(),
            Some("2024-03-01 01:02:03.5")
        );
        assert_eq!(
            pg_timestamp(-1).as_deref(),
            Some("1999-12-31 23:59:59.999999")
        );
        assert_eq!(time_of_day(0), "00:00:00");
        assert_eq!(utc_offset(5 * 3600 + 1800), "+05:30");
        assert_eq!(utc_offset(-3600), "-01");
    }

    #[test]
    fn numerics_keep_their_scale() {
        fn numeric(ndigits: i16, weight: i16, sign: u16, dscale: u16, digits: &[i16]) -> Vec<u8> {
            let mut b = Vec::new();
            b.extend(ndigits.to_be_bytes());
            b.extend(weight.to_be_bytes());
            b.extend(sign.to_be_bytes());
            b.extend(dscale.to_be_bytes());
            for d in digits {
                b.extend(d.to_be_bytes());
            }
            b
        }
        // 12345.678 = 1|2345|6780 with weight 1
        assert_eq!(
            pg_numeric(&numeric(3, 1, 0, 3, &[1, 2345, 6780])).as_deref(),
            Some("12345.678")
        );
        // -0.0001 = weight -1, digit 1
        assert_eq!(
            pg_numeric(&numeric(1, -1, 0x4000, 4, &[1])).as_deref(),
            Some("-0.0001")
        );
        // 0.00000123 = weight -2, digit 123 -> 0000 0123
        assert_eq!(
            pg_numeric(&numeric(1, -2, 0, 8, &[123])).as_deref(),
            Some("0.00000123")
        );
        // 10000 = weight 1, digits 1 (trailing zero groups omitted), scale 0
        assert_eq!(
            pg_numeric(&numeric(1, 1, 0, 0, &[1])).as_deref(),
            Some("10000")
        );
        assert_eq!(
            pg_numeric(&numeric(0, 0, 0, 2, &[])).as_deref(),
            Some("0.00")
        );
        assert_eq!(
            pg_numeric(&numeric(0, 0, 0xC000, 0, &[])).as_deref(),
            Some("NaN")
        );
        assert_eq!(pg_numeric(&[0, 1]), None, "short input is not a panic");
    }

    #[test]
    fn intervals_read_like_postgres() {
        assert_eq!(pg_interval(0, 0, 0), "00:00:00");
        assert_eq!(
            pg_interval(4 * 3_600_000_000 + 5 * 60_000_000 + 6_500_000, 3, 14),
            "1 year 2 mons 3 days 04:05:06.5"
        );
        assert_eq!(pg_interval(-1_000_000, -1, 0), "-1 days -00:00:01");
    }

    #[test]
    fn arrays_nest_and_quote() {
        fn array(dims: &[i32], oid: u32, items: &[Option<&[u8]>]) -> Vec<u8> {
            let mut b = Vec::new();
            b.extend((dims.len() as i32).to_be_bytes());
            b.extend(0i32.to_be_bytes());
            b.extend(oid.to_be_bytes());
            for d in dims {
                b.extend(d.to_be_bytes());
                b.extend(1i32.to_be_bytes());
            }
            for item in items {
                match item {
                    None => b.extend((-1i32).to_be_bytes()),
                    Some(raw) => {
                        b.extend((raw.len() as i32).to_be_bytes());
                        b.extend(*raw);
                    }
                }
            }
            b
        }
        let decode = |oid, b: &[u8]| pg_by_oid(oid, b).map(pg_plain);
        let ints = array(
            &[2, 2],
            23,
            &[
                Some(&1i32.to_be_bytes()),
                Some(&2i32.to_be_bytes()),
                None,
                Some(&4i32.to_be_bytes()),
            ],
        );
        assert_eq!(
            pg_array(&ints, &decode).as_deref(),
            Some("{{1,2},{NULL,4}}")
        );
        let texts = array(&[3], 25, &[Some(b"a b"), Some(b""), Some(b"null")]);
        assert_eq!(
            pg_array(&texts, &decode).as_deref(),
            Some(r#"{"a b","","null"}"#)
        );
        assert_eq!(
            pg_array(&array(&[], 23, &[]), &decode).as_deref(),
            Some("{}")
        );
    }

    #[test]
    fn network_addresses_and_uuids() {
        assert_eq!(
            pg_inet(&[2, 32, 0, 4, 192, 168, 0, 1]).as_deref(),
            Some("192.168.0.1")
        );
        assert_eq!(
            pg_inet(&[2, 24, 1, 4, 10, 0, 0, 0]).as_deref(),
            Some("10.0.0.0/24")
        );
        let id: Vec<u8> = (0u8..16).collect();
        assert_eq!(uuid(&id), "00010203-0405-0607-0809-0a0b0c0d0e0f");
    }

    #[test]
    fn mysql_dates_by_length() {
        assert_eq!(
            mysql_datetime(&[4, 0xe8, 0x07, 3, 1]).as_deref(),
            Some("2024-03-01")
        );
        assert_eq!(
            mysql_datetime(&[11, 0xe8, 0x07, 3, 1, 13, 4, 5, 0x20, 0xa1, 0x07, 0]).as_deref(),
            Some("2024-03-01 13:04:05.5")
        );
        assert_eq!(mysql_datetime(&[0]).as_deref(), Some("0000-00-00"));
        assert_eq!(mysql_datetime(&[7, 1]), None);
    }

    #[test]
    fn long_values_are_cut_and_bytes_shown_short() {
        let long = "x".repeat(CELL_CHARS + 5);
        assert_eq!(
            Cell::text(long).as_text(),
            format!("{}… (5 more characters)", "x".repeat(CELL_CHARS))
        );
        assert_eq!(bytes_cell(&[0, 255]).as_text(), "\\x00ff");
        assert_eq!(bytes_cell(&[0; 100]).as_text(), "<100 bytes>");
        assert_eq!(fixed_point(-1234, 2), "-12.34");
        assert_eq!(fixed_point(5, 2), "0.05");
        assert_eq!(float(279.0), "279.0");
        assert_eq!(float(89.9), "89.9");
        assert_eq!(float(1e20), "100000000000000000000");
    }
}
