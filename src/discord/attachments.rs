//! Attachments as part of a message: the text files a person attaches, and the `message.txt`
//! Discord's client makes of a long paste, reach the model with the message; every other
//! attachment is named to the model with why it was not read, so neither the model nor the
//! person believes a file was seen when it was not.
//!
//! - What is read ([`classify`]): a declared text type ([`is_text_type`]: `text/*`, JSON,
//!   XML, YAML, TOML, SQL, scripts), or a text file's name ([`TEXT_EXTENSIONS`]) whatever
//!   the type says (mime tables disagree: `.ts` is `video/mp2t` to some, and Discord may give
//!   no type or `application/octet-stream`). Either is kept only when its bytes are UTF-8
//!   without NUL bytes ([`decode`]); images, archives and other binaries are not downloaded.
//! - Downloads ([`download`]): http(s) only; none for a declared size over
//!   `discord.max_attachment_bytes`, and none read past it whatever was declared (a body that
//!   runs on is dropped, which closes the connection); each within [`FETCH_TIMEOUT`], all of
//!   a message's at once. A failure is named to the model and the person, never an error.
//! - The model reads each as a block after the message's text ([`Read::appended_to`]):
//!   `[attachment NAME, N bytes, TYPE]`, the content, `[end of attachment NAME]`, within
//!   `discord.attachment_budget_chars` for the whole message, shared fairly ([`shares`]); a
//!   cut says how much was left out, as the agent's other budgets do, in characters.
//! - The person gets one short reply listing what was read and what was not, and why
//!   ([`Read::notice`]); file names in it are inert as Markdown, as quoted text is elsewhere.

use std::time::Duration;

use serenity::all::Attachment;

use super::render::{MESSAGE_LIMIT, quoted};
use crate::config::DiscordSettings;
use crate::core::tools::{error_chain, format_bytes, format_duration};

/// How long one attachment's download may take, from connecting to its last byte.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(15);
/// How long connecting to the server that holds an attachment may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Characters of a file name kept in what the model reads (Discord allows long names).
const MODEL_NAME_CHARS: usize = 100;
/// Characters of a file name, and of a reason, kept in the notice, so it stays one message.
const NOTICE_NAME_CHARS: usize = 40;
const NOTICE_REASON_CHARS: usize = 80;

/// Extensions of files that are text, for attachments Discord gives no text type.
pub const TEXT_EXTENSIONS: &[&str] = &[
    "txt",
    "text",
    "md",
    "markdown",
    "rst",
    "adoc",
    "org",
    "tex",
    "csv",
    "tsv",
    "log",
    "out",
    "json",
    "jsonl",
    "ndjson",
    "yaml",
    "yml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "config",
    "env",
    "properties",
    "xml",
    "html",
    "htm",
    "css",
    "scss",
    "sql",
    "py",
    "pyi",
    "rs",
    "go",
    "java",
    "kt",
    "kts",
    "scala",
    "c",
    "h",
    "cc",
    "cpp",
    "cxx",
    "hpp",
    "cs",
    "rb",
    "php",
    "pl",
    "lua",
    "r",
    "swift",
    "dart",
    "ex",
    "exs",
    "erl",
    "hs",
    "ml",
    "clj",
    "js",
    "mjs",
    "cjs",
    "ts",
    "tsx",
    "jsx",
    "vue",
    "svelte",
    "sh",
    "bash",
    "zsh",
    "fish",
    "ps1",
    "bat",
    "cmd",
    "awk",
    "diff",
    "patch",
    "proto",
    "graphql",
    "gql",
    "tf",
    "tfvars",
    "hcl",
    "nix",
    "gradle",
    "dockerfile",
    "gitignore",
    "editorconfig",
    "lock",
];

/// Names without an extension that are text.
const TEXT_NAMES: &[&str] = &[
    "dockerfile",
    "makefile",
    "readme",
    "license",
    "jenkinsfile",
    "procfile",
    "gemfile",
    "vagrantfile",
];

/// `application/…` subtypes that are text, besides every `+json`, `+xml` and `+yaml` one.
const TEXT_APPLICATION_TYPES: &[&str] = &[
    "json",
    "xml",
    "yaml",
    "x-yaml",
    "toml",
    "x-toml",
    "sql",
    "x-sql",
    "javascript",
    "x-javascript",
    "ecmascript",
    "typescript",
    "x-typescript",
    "x-sh",
    "x-shellscript",
    "x-python",
    "x-ruby",
    "x-perl",
    "x-php",
    "x-httpd-php",
    "graphql",
    "ndjson",
    "x-ndjson",
    "csv",
    "x-tex",
    "x-latex",
    "x-diff",
    "x-patch",
];

/// What Discord says of one attachment, before anything is downloaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offered {
    pub filename: String,
    /// The size Discord declares, in bytes.
    pub size: u64,
    pub content_type: Option<String>,
    pub url: String,
}

impl From<&Attachment> for Offered {
    fn from(attachment: &Attachment) -> Self {
        Self {
            filename: attachment.filename.clone(),
            size: u64::from(attachment.size),
            content_type: attachment.content_type.clone(),
            url: attachment.url.clone(),
        }
    }
}

/// How much of a message's attachments is downloaded and shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `discord.max_attachment_bytes`.
    pub max_bytes: u64,
    /// `discord.attachment_budget_chars`.
    pub budget_chars: usize,
    /// [`FETCH_TIMEOUT`] outside tests.
    pub timeout: Duration,
}

impl Limits {
    pub fn from_settings(settings: &DiscordSettings) -> Self {
        Self {
            max_bytes: settings.max_attachment_bytes,
            budget_chars: usize::try_from(settings.attachment_budget_chars).unwrap_or(usize::MAX),
            timeout: FETCH_TIMEOUT,
        }
    }
}

/// What an attachment's type and name say before any byte is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A declared text type: downloaded, kept if its bytes are UTF-8.
    Text,
    /// Another type (or none) on a text file's name: the same.
    TextName,
    /// Anything else: not downloaded.
    Other,
}

/// Whether an attachment is worth downloading (see the module's documentation).
pub fn classify(content_type: Option<&str>, filename: &str) -> Kind {
    if content_type.is_some_and(is_text_type) {
        Kind::Text
    } else if has_text_name(filename) {
        Kind::TextName
    } else {
        Kind::Other
    }
}

/// `text/*`, and the `application/…` types that are text ([`TEXT_APPLICATION_TYPES`], and
/// every `+json`, `+xml` or `+yaml` one). Parameters such as `; charset=utf-8`, spaces and
/// case do not matter.
pub fn is_text_type(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match essence.split_once('/') {
        Some(("text", sub)) => !sub.is_empty(),
        Some(("application", sub)) => {
            TEXT_APPLICATION_TYPES.contains(&sub)
                || [".json", "+json", "+xml", "+yaml"]
                    .iter()
                    .any(|suffix| sub.ends_with(suffix))
        }
        _ => false,
    }
}

/// A name with a text file's extension ([`TEXT_EXTENSIONS`]), or one of the few text files
/// without one (`Dockerfile`, `Makefile`, `README`, ...).
fn has_text_name(filename: &str) -> bool {
    let name = filename.to_ascii_lowercase();
    match name.rsplit_once('.') {
        Some((_, extension)) => TEXT_EXTENSIONS.contains(&extension),
        None => TEXT_NAMES.contains(&name.as_str()),
    }
}

/// Why an attachment's content did not reach the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotRead {
    /// Neither a text type nor a text file's name: images, archives, PDFs, programs.
    NotText,
    /// Larger than `discord.max_attachment_bytes` (this many), declared or found reading.
    TooLarge { cap: u64 },
    /// The bytes are not UTF-8, or hold NUL bytes (a binary, or UTF-16 text).
    NotUtf8,
    /// The download failed: why, in a few words (never the URL).
    Failed(String),
}

impl NotRead {
    /// Why, for the model.
    fn for_model(&self) -> String {
        let why = match self {
            Self::NotText => "it is not a text file".to_owned(),
            Self::TooLarge { cap } => format!(
                "it is larger than the {} bytes the bot reads of an attachment (discord.max_attachment_bytes)",
                grouped(*cap)
            ),
            Self::NotUtf8 => "its bytes are not UTF-8 text".to_owned(),
            Self::Failed(why) => format!("its download failed: {why}"),
        };
        format!("not read, {why}; you have not seen its content")
    }

    /// Why, for the person, in a few words.
    fn for_person(&self) -> String {
        match self {
            Self::NotText => "not text".to_owned(),
            Self::TooLarge { cap } => format!(
                "over the {} limit (discord.max_attachment_bytes)",
                format_bytes(*cap)
            ),
            Self::NotUtf8 => "not UTF-8 text".to_owned(),
            Self::Failed(why) => format!("download failed: {why}"),
        }
    }
}

/// One attachment once its download was tried (or not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub offered: Offered,
    /// Its text, or why there is none.
    pub result: Result<String, NotRead>,
}

/// The HTTP client attachments are downloaded with: reqwest, as serenity reaches Discord
/// with it (a proxy the environment names applies to both), with its own time limits.
pub fn client() -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .redirect(reqwest::redirect::Policy::limited(3))
        .user_agent(concat!("riskgate/", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Downloads what is worth reading of `offered`, all at once, within `limits`.
pub async fn read_all(client: &reqwest::Client, offered: &[Offered], limits: Limits) -> Read {
    let reads = offered.iter().map(|o| read_one(client, o, limits));
    let results = futures_util::future::join_all(reads).await;
    let outcomes = offered
        .iter()
        .cloned()
        .zip(results)
        .map(|(offered, result)| Outcome { offered, result })
        .collect();
    Read::new(outcomes, limits.budget_chars)
}

async fn read_one(
    client: &reqwest::Client,
    offered: &Offered,
    limits: Limits,
) -> Result<String, NotRead> {
    if classify(offered.content_type.as_deref(), &offered.filename) == Kind::Other {
        return Err(NotRead::NotText);
    }
    if offered.size > limits.max_bytes {
        return Err(NotRead::TooLarge {
            cap: limits.max_bytes,
        });
    }
    let bytes = download(client, &offered.url, limits).await?;
    decode(&bytes)
}

/// The body at `url` (http or https only), if it has at most `limits.max_bytes` bytes and
/// arrives within `limits.timeout`. Reading stops at the first chunk past the cap.
pub async fn download(
    client: &reqwest::Client,
    url: &str,
    limits: Limits,
) -> Result<Vec<u8>, NotRead> {
    let url =
        url::Url::parse(url).map_err(|_| NotRead::Failed("its address is not a URL".to_owned()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(NotRead::Failed(format!(
            "its address is {}:, not http(s)",
            url.scheme()
        )));
    }
    match tokio::time::timeout(limits.timeout, capped_body(client, url, limits.max_bytes)).await {
        Ok(body) => body,
        Err(_) => Err(NotRead::Failed(format!(
            "no whole answer within {}",
            format_duration(limits.timeout)
        ))),
    }
}

async fn capped_body(
    client: &reqwest::Client,
    url: url::Url,
    cap: u64,
) -> Result<Vec<u8>, NotRead> {
    let mut response = client.get(url).send().await.map_err(failure)?;
    let status = response.status();
    if !status.is_success() {
        return Err(NotRead::Failed(format!("HTTP {status}")));
    }
    let too_large = NotRead::TooLarge { cap };
    if response.content_length().is_some_and(|length| length > cap) {
        return Err(too_large);
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(failure)? {
        if (bytes.len() + chunk.len()) as u64 > cap {
            // Dropping the response closes the connection: the rest is never downloaded.
            return Err(too_large);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// A failed request in a few words, without its URL (Discord's carry signed parameters).
fn failure(error: reqwest::Error) -> NotRead {
    let why = if error.is_timeout() {
        "it timed out".to_owned()
    } else if error.is_connect() {
        "the server could not be reached".to_owned()
    } else {
        error_chain(&error.without_url())
    };
    NotRead::Failed(why)
}

/// The text of an attachment's bytes: UTF-8 (a leading byte-order mark dropped) without NUL
/// bytes, which only binaries and UTF-16 text hold.
pub fn decode(bytes: &[u8]) -> Result<String, NotRead> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.contains(&0) {
        return Err(NotRead::NotUtf8);
    }
    std::str::from_utf8(bytes)
        .map(str::to_owned)
        .map_err(|_| NotRead::NotUtf8)
}

/// Each length's share of `budget` characters: its whole length when all fit, else the
/// budget split evenly, what shorter ones leave going to the longer ones.
pub fn shares(lengths: &[usize], budget: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&i| lengths[i]);
    let mut shares = vec![0; lengths.len()];
    let mut left = budget;
    for (done, &i) in order.iter().enumerate() {
        let fair = left / (lengths.len() - done);
        shares[i] = lengths[i].min(fair);
        left -= shares[i];
    }
    shares
}

/// A message's attachments as the model and the person are shown them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    outcomes: Vec<Outcome>,
    /// Characters of each attachment's text the model is shown.
    shares: Vec<usize>,
    budget: usize,
}

impl Read {
    /// The attachments' texts within `budget` characters for the message.
    pub fn new(outcomes: Vec<Outcome>, budget: usize) -> Self {
        let lengths: Vec<usize> = outcomes
            .iter()
            .map(|o| o.result.as_ref().map_or(0, |text| text.chars().count()))
            .collect();
        Self {
            shares: shares(&lengths, budget),
            outcomes,
            budget,
        }
    }

    pub fn outcomes(&self) -> &[Outcome] {
        &self.outcomes
    }

    /// The message's `text` with a block for each attachment after it: the text's
    /// beginning, within its share of the budget, or why it was not read.
    pub fn appended_to(&self, text: &str) -> String {
        let blocks: Vec<String> = self
            .outcomes
            .iter()
            .zip(&self.shares)
            .map(|(outcome, &share)| self.block(outcome, share))
            .collect();
        let blocks = blocks.join("\n\n");
        if text.trim().is_empty() {
            blocks
        } else {
            format!("{text}\n\n{blocks}")
        }
    }

    fn block(&self, outcome: &Outcome, share: usize) -> String {
        let offered = &outcome.offered;
        let name = plain(&offered.filename, MODEL_NAME_CHARS);
        let kind = offered
            .content_type
            .as_deref()
            .map_or_else(|| "no type".to_owned(), |t| plain(t, MODEL_NAME_CHARS));
        let text = match &outcome.result {
            Ok(text) => text,
            Err(why) => {
                let size = grouped(offered.size);
                return format!(
                    "[attachment {name}, {size} bytes, {kind}: {}]",
                    why.for_model()
                );
            }
        };
        let total = text.chars().count();
        let kept: String = text.chars().take(share).collect();
        let mut block = format!(
            "[attachment {name}, {} bytes, {kind}]\n{}\n",
            grouped(text.len() as u64),
            unframed(&kept)
        );
        if share < total {
            block.push_str(&format!(
                "[... {} of its {} characters were left out: a message's attachments are shown {} characters at most (discord.attachment_budget_chars)]\n",
                grouped((total - share) as u64),
                grouped(total as u64),
                grouped(self.budget as u64),
            ));
        }
        block.push_str(&format!("[end of attachment {name}]"));
        block
    }

    /// One short message for the person: which attachments the model read (and how much of
    /// each, when cut), which it did not and why.
    pub fn notice(&self) -> String {
        let mut read = Vec::new();
        let mut not_read = Vec::new();
        for (outcome, &share) in self.outcomes.iter().zip(&self.shares) {
            let name = quoted(&plain(&outcome.offered.filename, NOTICE_NAME_CHARS));
            match &outcome.result {
                Ok(text) => {
                    let size = format_bytes(text.len() as u64);
                    let total = text.chars().count();
                    read.push(if share < total {
                        format!(
                            "{name} ({size}, the first {} of {} characters)",
                            grouped(share as u64),
                            grouped(total as u64)
                        )
                    } else {
                        format!("{name} ({size})")
                    });
                }
                Err(why) => {
                    let size = format_bytes(outcome.offered.size);
                    let why = quoted(&plain(&why.for_person(), NOTICE_REASON_CHARS));
                    not_read.push(format!("{name} ({size}): {why}"));
                }
            }
        }
        let notice = sentences(&read.join(", "), &not_read.join("; "));
        if notice.chars().count() <= MESSAGE_LIMIT {
            return notice;
        }
        // Ten attachments with long names and reasons: the counts, in one message.
        let count = |n: usize| {
            if n == 0 {
                String::new()
            } else {
                format!("{n} attachments")
            }
        };
        sentences(&count(read.len()), &count(not_read.len()))
    }
}

fn sentences(read: &str, not_read: &str) -> String {
    let mut notice = String::from("📎");
    if !read.is_empty() {
        notice.push_str(&format!(" Read for the model: {read}."));
    }
    if !not_read.is_empty() {
        notice.push_str(&format!(" Not read: {not_read}."));
    }
    notice
}

/// Content that cannot end its own block early.
fn unframed(text: &str) -> String {
    text.replace("[end of attachment", "[end of attachment_")
}

/// A name on one line, without the brackets that frame a block, at most `chars` characters.
fn plain(text: &str, chars: usize) -> String {
    let mut out: String = text
        .chars()
        .map(|c| match c {
            '[' => '(',
            ']' => ')',
            c if c.is_control() => ' ',
            c => c,
        })
        .take(chars)
        .collect();
    if text.chars().count() > chars {
        out.push('…');
    }
    out
}

/// `262,144`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered(filename: &str, content_type: Option<&str>, size: u64) -> Offered {
        Offered {
            filename: filename.to_owned(),
            size,
            content_type: content_type.map(str::to_owned),
            url: format!("https://cdn.example/{filename}"),
        }
    }

    fn read_text(filename: &str, text: &str) -> Outcome {
        Outcome {
            offered: offered(filename, Some("text/plain"), text.len() as u64),
            result: Ok(text.to_owned()),
        }
    }

    #[test]
    fn declared_text_types_are_read_whatever_their_parameters_and_case() {
        for kind in [
            "text/plain; charset=utf-8",
            "Text/Markdown",
            "text/csv",
            "application/json",
            "application/ld+json",
            "application/vnd.api+json",
            "application/xml",
            "application/atom+xml",
            "application/x-yaml",
            "application/toml",
            "application/sql",
            "application/javascript",
            "application/x-sh",
            " application/JSON ; charset=utf-8",
        ] {
            assert_eq!(classify(Some(kind), "x.bin"), Kind::Text, "{kind}");
        }
        for kind in [
            "image/png",
            "image/svg+xml",
            "application/pdf",
            "application/zip",
            "application/octet-stream",
            "application/x-python-code",
            "video/mp4",
            "text",
            "text/",
            "",
        ] {
            assert!(!is_text_type(kind), "{kind}");
        }
    }

    #[test]
    fn a_text_files_name_is_tried_whatever_type_discord_gave() {
        for name in [
            "notes.txt",
            "README.MD",
            "data.csv",
            "server.log",
            "config.yaml",
            "config.yml",
            "Cargo.toml",
            "query.sql",
            "main.py",
            "lib.rs",
            "deploy.sh",
            "index.ts",
            ".env",
            "Dockerfile",
            "Makefile",
        ] {
            for kind in [None, Some("application/octet-stream"), Some("video/mp2t")] {
                assert_eq!(classify(kind, name), Kind::TextName, "{name} {kind:?}");
            }
        }
        for name in [
            "photo.png",
            "archive.zip",
            "report.pdf",
            "a.out.exe",
            "binary",
            "",
        ] {
            assert_eq!(classify(None, name), Kind::Other, "{name}");
            assert_eq!(
                classify(Some("application/octet-stream"), name),
                Kind::Other,
                "{name}"
            );
        }
        assert_eq!(classify(Some("image/png"), "photo.png"), Kind::Other);
    }

    #[test]
    fn only_utf8_without_nul_bytes_is_text() {
        assert_eq!(decode(b"plain text\n").as_deref(), Ok("plain text\n"));
        assert_eq!(decode("\u{feff}héllo".as_bytes()).as_deref(), Ok("héllo"));
        assert_eq!(decode(b"").as_deref(), Ok(""));
        assert_eq!(
            decode(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
            Err(NotRead::NotUtf8)
        );
        // UTF-16LE "abc": valid UTF-8, but NUL bytes give it away.
        assert_eq!(decode(b"a\0b\0c\0"), Err(NotRead::NotUtf8));
        assert_eq!(decode(b"caf\xe9"), Err(NotRead::NotUtf8), "Latin-1");
    }

    #[test]
    fn the_budget_is_shared_evenly_and_what_short_ones_leave_goes_to_long_ones() {
        assert_eq!(shares(&[10, 20], 100), [10, 20], "all fit");
        assert_eq!(shares(&[100, 100], 100), [50, 50]);
        assert_eq!(shares(&[10, 1000, 1000], 100), [10, 45, 45]);
        assert_eq!(shares(&[1000, 0, 30], 100), [70, 0, 30]);
        assert_eq!(shares(&[7, 7, 7], 10), [3, 3, 4]);
        assert_eq!(shares(&[], 100), Vec::<usize>::new());
        let many = shares(&[500; 7], 1000);
        assert_eq!(many.iter().sum::<usize>(), 1000);
    }

    #[test]
    fn a_read_attachment_is_a_named_block_after_the_text() {
        let read = Read::new(vec![read_text("notes.txt", "line one\nline two")], 1000);
        assert_eq!(
            read.appended_to("what do these say?"),
            "what do these say?\n\n[attachment notes.txt, 17 bytes, text/plain]\nline one\nline two\n[end of attachment notes.txt]"
        );
        assert_eq!(
            read.appended_to("  "),
            "[attachment notes.txt, 17 bytes, text/plain]\nline one\nline two\n[end of attachment notes.txt]",
            "a message of only an attachment is its block"
        );
        assert_eq!(read.notice(), "📎 Read for the model: notes.txt (17 B).");
    }

    #[test]
    fn a_long_text_is_cut_to_its_share_with_how_much_was_left_out() {
        let long = "é".repeat(30_000);
        let read = Read::new(
            vec![read_text("message.txt", &long), read_text("b.md", "short")],
            24_000,
        );
        let text = read.appended_to("");
        let first = text
            .split("[end of attachment message.txt]")
            .next()
            .expect("block");
        assert_eq!(
            first.matches('é').count(),
            23_995,
            "the budget less b.md's 5"
        );
        assert!(
            text.contains("[... 6,005 of its 30,000 characters were left out: a message's attachments are shown 24,000 characters at most (discord.attachment_budget_chars)]\n[end of attachment message.txt]"),
            "{}",
            &text[text.len() - 400..]
        );
        assert!(
            text.ends_with(
                "[attachment b.md, 5 bytes, text/plain]\nshort\n[end of attachment b.md]"
            )
        );
        assert_eq!(
            read.notice(),
            "📎 Read for the model: message.txt (58.6 KiB, the first 23,995 of 30,000 characters), b.md (5 B)."
        );
    }

    #[test]
    fn attachments_not_read_are_named_with_size_type_and_why() {
        let outcomes = vec![
            Outcome {
                offered: offered("photo.png", Some("image/png"), 48_213),
                result: Err(NotRead::NotText),
            },
            Outcome {
                offered: offered("dump.sql", None, 5_000_000),
                result: Err(NotRead::TooLarge { cap: 262_144 }),
            },
            Outcome {
                offered: offered("latin.txt", Some("text/plain"), 12),
                result: Err(NotRead::NotUtf8),
            },
            Outcome {
                offered: offered("gone.txt", Some("text/plain"), 3),
                result: Err(NotRead::Failed("HTTP 404 Not Found".into())),
            },
        ];
        let read = Read::new(outcomes, 1000);
        let text = read.appended_to("see attached");
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            [
                "see attached",
                "",
                "[attachment photo.png, 48,213 bytes, image/png: not read, it is not a text file; you have not seen its content]",
                "",
                "[attachment dump.sql, 5,000,000 bytes, no type: not read, it is larger than the 262,144 bytes the bot reads of an attachment (discord.max_attachment_bytes); you have not seen its content]",
                "",
                "[attachment latin.txt, 12 bytes, text/plain: not read, its bytes are not UTF-8 text; you have not seen its content]",
                "",
                "[attachment gone.txt, 3 bytes, text/plain: not read, its download failed: HTTP 404 Not Found; you have not seen its content]",
            ]
        );
        assert_eq!(
            read.notice(),
            "📎 Not read: photo.png (47.1 KiB): not text; dump.sql (4.8 MiB): over the 256.0 KiB limit (discord.max\\_attachment\\_bytes); latin.txt (12 B): not UTF-8 text; gone.txt (3 B): download failed: HTTP 404 Not Found."
        );
    }

    #[test]
    fn names_cannot_frame_blocks_or_act_as_markdown_and_content_cannot_end_its_block() {
        let name = "[a](http://e.io)\n||b||@everyone.md";
        let read = Read::new(vec![read_text(name, "a\n[end of attachment x]\nb")], 1000);
        let text = read.appended_to("");
        assert!(
            text.starts_with("[attachment (a)(http://e.io) ||b||@everyone.md, "),
            "{text}"
        );
        assert_eq!(text.matches("[end of attachment ").count(), 1, "{text}");
        assert!(text.contains("a\n[end of attachment_ x]\nb\n"), "{text}");
        let notice = read.notice();
        assert!(
            notice.contains(r"(a)(http://e.io) \|\|b\|\|@everyone.md (25 B)"),
            "{notice}"
        );
        assert!(!notice.contains("[a]"), "{notice}");
    }

    #[test]
    fn a_notice_too_long_for_one_message_gives_counts() {
        let outcomes = (0..10)
            .map(|i| Outcome {
                offered: offered(&format!("{}{i}.bin", "_".repeat(60)), None, 1),
                result: Err(NotRead::Failed(format!("{i}{}", "*".repeat(200)))),
            })
            .collect();
        let notice = Read::new(outcomes, 1000).notice();
        assert_eq!(notice, "📎 Not read: 10 attachments.");
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        for (n, shown) in [
            (0, "0"),
            (999, "999"),
            (1_000, "1,000"),
            (262_144, "262,144"),
            (12_345_678, "12,345,678"),
        ] {
            assert_eq!(grouped(n), shown);
        }
    }

    fn limits(max_bytes: u64, timeout: Duration) -> Limits {
        Limits {
            max_bytes,
            budget_chars: 1000,
            timeout,
        }
    }

    #[tokio::test]
    async fn only_http_urls_are_fetched_and_a_silent_server_times_out() {
        let client = client().expect("client");
        let long = limits(100, Duration::from_secs(5));
        for url in ["file:///etc/passwd", "ftp://example.com/a.txt", "not a url"] {
            let error = download(&client, url, long).await.expect_err(url);
            assert!(
                matches!(&error, NotRead::Failed(why) if why.contains("address")),
                "{url}: {error:?}"
            );
        }
        // Accepts the connection and never answers.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/a.txt", listener.local_addr().expect("address"));
        let held = tokio::spawn(async move {
            let connection = listener.accept().await;
            tokio::time::sleep(Duration::from_secs(10)).await;
            drop(connection);
        });
        let short = limits(100, Duration::from_millis(200));
        let started = std::time::Instant::now();
        let error = download(&client, &url, short).await.expect_err("silent");
        assert_eq!(
            error,
            NotRead::Failed("no whole answer within 200 ms".into())
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        held.abort();
    }

    #[tokio::test]
    async fn a_body_past_the_cap_is_refused_whatever_was_declared() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        // Declares no length and streams 64 MiB: reading stops past 1,000 bytes.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/a.txt", listener.local_addr().expect("address"));
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.expect("accept");
            let mut request = [0u8; 1024];
            let _ = socket.read(&mut request).await;
            let _ = socket
                .write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n",
                )
                .await;
            let mut sent = 0usize;
            while sent < (64 << 20) {
                if socket.write_all(&[b'a'; 4096]).await.is_err() {
                    break;
                }
                sent += 4096;
            }
            sent
        });
        let client = client().expect("client");
        let error = download(&client, &url, limits(1_000, Duration::from_secs(5)))
            .await
            .expect_err("too large");
        assert_eq!(error, NotRead::TooLarge { cap: 1_000 });
        let sent = server.await.expect("server");
        assert!(
            sent < 64 << 20,
            "the bot hung up before the whole body: {sent}"
        );
    }
}
