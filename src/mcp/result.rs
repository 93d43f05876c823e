//! A tool call's result as the bot keeps it: the text the server sent, everything else
//! described (kind, MIME type, size) instead of carried, structured content beside it, and
//! the whole capped at `mcp.result_max_bytes`, saying what was cut.
//!
//! The result is still the server's data: the tool layer frames it as untrusted before any
//! of it reaches the model.

use std::fmt;

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

/// A call's result, clean and bounded.
#[derive(Debug, Clone, PartialEq)]
pub struct McpOutput {
    /// The content in the server's order.
    pub parts: Vec<Part>,
    /// `structuredContent`, when the server sent it and it fit in the cap.
    pub structured: Option<Value>,
    /// What the cap cut, if anything.
    pub cut: Option<Cut>,
}

/// One block of a result's content.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// A text block, as the server wrote it (perhaps cut short: see [`McpOutput::cut`]).
    Text(String),
    /// An image, audio clip or resource: described, never carried.
    Other(NonText),
}

/// What a non-text block is, without its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonText {
    pub kind: NonTextKind,
    pub mime_type: Option<String>,
    /// Decoded bytes (or the text's bytes of an embedded text resource); for a link, the
    /// size the server gave, if any.
    pub bytes: Option<u64>,
    /// A resource's or link's URI.
    pub uri: Option<String>,
    /// A link's name.
    pub name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonTextKind {
    Image,
    Audio,
    /// A resource embedded in the result.
    Resource,
    /// A link to a resource, not its content.
    ResourceLink,
    /// A kind of content newer than this client.
    Unknown,
}

impl NonTextKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Audio => "audio",
            Self::Resource => "resource",
            Self::ResourceLink => "resource link",
            Self::Unknown => "content of a kind this client does not know",
        }
    }
}

/// How much of a result the cap kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// Bytes of the whole result: text, descriptions and structured content as JSON.
    pub total_bytes: u64,
    /// Bytes kept.
    pub kept_bytes: u64,
    /// Whether the structured content was left out (it is kept whole or not at all).
    pub structured_left_out: bool,
}

impl fmt::Display for Cut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the result was {} bytes; {} bytes kept",
            self.total_bytes, self.kept_bytes
        )?;
        if self.structured_left_out {
            write!(f, ", its structured content left out")?;
        }
        Ok(())
    }
}

/// A described field is the server's text: kept to one short line.
const MAX_FIELD_CHARS: usize = 200;

fn field(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_FIELD_CHARS)
        .collect();
    if text.chars().count() > MAX_FIELD_CHARS {
        out.push('…');
    }
    out
}

impl fmt::Display for NonText {
    /// `[image, image/png, 1234 bytes]`, `[resource file:///a.txt, text/plain, 12 bytes]`,
    /// `[resource link file:///b "b", text/plain]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}", self.kind.as_str())?;
        if let Some(uri) = &self.uri {
            write!(f, " {}", field(uri))?;
        }
        if let Some(name) = &self.name {
            write!(f, " {:?}", field(name))?;
        }
        if let Some(mime) = &self.mime_type {
            write!(f, ", {}", field(mime))?;
        }
        if let Some(bytes) = self.bytes {
            write!(f, ", {bytes} bytes")?;
        }
        write!(f, "]")
    }
}

impl McpOutput {
    /// The content as one text: text blocks and descriptions, one per line; the structured
    /// content as JSON when there is no text block.
    pub fn text(&self) -> String {
        let has_text = self.parts.iter().any(|p| matches!(p, Part::Text(_)));
        let mut lines: Vec<String> = self
            .parts
            .iter()
            .map(|part| match part {
                Part::Text(text) => text.clone(),
                Part::Other(other) => other.to_string(),
            })
            .collect();
        if !has_text && let Some(structured) = &self.structured {
            lines.push(structured.to_string());
        }
        lines.join("\n")
    }

    /// Builds the output from a server's result, keeping at most `max_bytes`.
    pub fn from_result(result: CallToolResult, max_bytes: u64) -> Self {
        let mut budget = Budget::new(max_bytes);
        let mut parts = Vec::with_capacity(result.content.len());
        for block in result.content {
            let part = match block {
                ContentBlock::Text(text) => Part::Text(text.text),
                ContentBlock::Image(image) => Part::Other(NonText {
                    kind: NonTextKind::Image,
                    mime_type: Some(image.mime_type),
                    bytes: Some(base64_decoded_len(&image.data)),
                    uri: None,
                    name: None,
                }),
                ContentBlock::Audio(audio) => Part::Other(NonText {
                    kind: NonTextKind::Audio,
                    mime_type: Some(audio.mime_type),
                    bytes: Some(base64_decoded_len(&audio.data)),
                    uri: None,
                    name: None,
                }),
                ContentBlock::Resource(embedded) => {
                    let (uri, mime_type, bytes) = match embedded.resource {
                        ResourceContents::TextResourceContents {
                            uri,
                            mime_type,
                            text,
                            ..
                        } => (uri, mime_type, Some(text.len() as u64)),
                        ResourceContents::BlobResourceContents {
                            uri,
                            mime_type,
                            blob,
                            ..
                        } => (uri, mime_type, Some(base64_decoded_len(&blob))),
                        _ => (String::new(), None, None),
                    };
                    Part::Other(NonText {
                        kind: NonTextKind::Resource,
                        mime_type,
                        bytes,
                        uri: (!uri.is_empty()).then_some(uri),
                        name: None,
                    })
                }
                ContentBlock::ResourceLink(link) => Part::Other(NonText {
                    kind: NonTextKind::ResourceLink,
                    mime_type: link.mime_type,
                    bytes: link.size,
                    uri: Some(link.uri),
                    name: Some(link.name),
                }),
                _ => Part::Other(NonText {
                    kind: NonTextKind::Unknown,
                    mime_type: None,
                    bytes: None,
                    uri: None,
                    name: None,
                }),
            };
            if let Some(part) = budget.take(part) {
                parts.push(part);
            }
        }
        let structured = result
            .structured_content
            .and_then(|value| budget.take_structured(value));
        Self {
            parts,
            structured,
            cut: budget.cut(),
        }
    }
}

/// What is left of the cap as parts are taken in order.
struct Budget {
    left: u64,
    total: u64,
    kept: u64,
    structured_left_out: bool,
}

impl Budget {
    fn new(max: u64) -> Self {
        Self {
            left: max,
            total: 0,
            kept: 0,
            structured_left_out: false,
        }
    }

    /// The part, whole or cut to what is left (text is cut at a character boundary, a
    /// description is kept whole or not at all); `None` once nothing is left.
    fn take(&mut self, part: Part) -> Option<Part> {
        let size = match &part {
            Part::Text(text) => text.len() as u64,
            Part::Other(other) => other.to_string().len() as u64,
        };
        self.total += size;
        if size <= self.left {
            self.left -= size;
            self.kept += size;
            return Some(part);
        }
        match part {
            Part::Text(mut text) if self.left > 0 => {
                let mut end = usize::try_from(self.left).unwrap_or(usize::MAX);
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.truncate(end);
                self.kept += end as u64;
                self.left = 0;
                (!text.is_empty()).then_some(Part::Text(text))
            }
            _ => {
                self.left = 0;
                None
            }
        }
    }

    fn take_structured(&mut self, value: Value) -> Option<Value> {
        let size = value.to_string().len() as u64;
        self.total += size;
        if size <= self.left {
            self.left -= size;
            self.kept += size;
            Some(value)
        } else {
            self.structured_left_out = true;
            None
        }
    }

    fn cut(&self) -> Option<Cut> {
        (self.kept < self.total).then_some(Cut {
            total_bytes: self.total,
            kept_bytes: self.kept,
            structured_left_out: self.structured_left_out,
        })
    }
}

/// The bytes base64 text decodes to (whitespace ignored), without decoding it.
fn base64_decoded_len(data: &str) -> u64 {
    let significant = data.bytes().filter(|b| !b.is_ascii_whitespace()).count() as u64;
    let padding = data
        .bytes()
        .rev()
        .filter(|b| !b.is_ascii_whitespace())
        .take_while(|&b| b == b'=')
        .count() as u64;
    (significant * 3 / 4).saturating_sub(padding.min(2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ContentBlock, Resource};

    fn result(content: Vec<ContentBlock>) -> CallToolResult {
        CallToolResult::success(content)
    }

    #[test]
    fn text_is_joined_and_other_content_described() {
        let link = {
            let mut r = Resource::new("file:///b.txt", "b");
            r.mime_type = Some("text/plain".to_owned());
            r
        };
        let output = McpOutput::from_result(
            result(vec![
                ContentBlock::text("one"),
                ContentBlock::image("aGVsbG8=", "image/png"),
                ContentBlock::embedded_text("file:///a.txt", "twelve bytes"),
                ContentBlock::resource_link(link),
                ContentBlock::text("two"),
            ]),
            1_000,
        );
        assert_eq!(
            output.text(),
            "one\n[image, image/png, 5 bytes]\n[resource file:///a.txt, text/plain, 12 bytes]\n[resource link file:///b.txt \"b\", text/plain]\ntwo"
        );
        assert_eq!(output.cut, None);
    }

    #[test]
    fn the_cap_cuts_text_at_a_character_and_says_so() {
        let output = McpOutput::from_result(
            result(vec![
                ContentBlock::text("ééééé"),
                ContentBlock::text("more"),
            ]),
            5,
        );
        assert_eq!(output.parts, [Part::Text("éé".to_owned())]);
        assert_eq!(
            output.cut,
            Some(Cut {
                total_bytes: 14,
                kept_bytes: 4,
                structured_left_out: false
            })
        );
    }

    #[test]
    fn structured_content_stands_in_for_missing_text_and_is_kept_whole_or_not_at_all() {
        let mut only = result(vec![]);
        only.structured_content = Some(serde_json::json!({"temperature": 21}));
        let output = McpOutput::from_result(only.clone(), 1_000);
        assert_eq!(output.text(), r#"{"temperature":21}"#);
        let output = McpOutput::from_result(only, 5);
        assert_eq!(output.structured, None);
        assert!(output.cut.is_some_and(|c| c.structured_left_out));
    }

    #[test]
    fn base64_lengths() {
        assert_eq!(base64_decoded_len(""), 0);
        assert_eq!(base64_decoded_len("aGVsbG8="), 5);
        assert_eq!(base64_decoded_len("aGVsbA=="), 4);
        assert_eq!(base64_decoded_len("aGVs\nbG8h"), 6);
    }

    #[test]
    fn described_fields_are_one_bounded_line() {
        let other = NonText {
            kind: NonTextKind::Image,
            mime_type: Some(format!("image/png\n{}", "x".repeat(500))),
            bytes: None,
            uri: None,
            name: None,
        };
        let shown = other.to_string();
        assert!(
            !shown.contains('\n') && shown.chars().count() < 220,
            "{shown}"
        );
    }
}
