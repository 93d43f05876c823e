//! How a call of `file_operations` is shown: the operation and its paths, and the content a
//! write would put there.

use serde_json::{Map, Value};

use crate::core::tools::CallBrief;
use crate::core::tools::view::text_argument;
use crate::tools::render::cut;

/// Characters of the content the short view shows.
const BRIEF_CONTENT_CHARS: usize = 400;

/// `write a.txt`, `move a -> b`, `delete d (recursive)`.
fn operation_line(arguments: &Map<String, Value>) -> String {
    let operation = text_argument(arguments, "operation").unwrap_or("?");
    let path = text_argument(arguments, "path").unwrap_or("?");
    let mut line = format!("{operation} {path}");
    if let Some(destination) = text_argument(arguments, "destination") {
        line.push_str(&format!(" -> {destination}"));
    }
    if arguments.get("recursive") == Some(&Value::Bool(true)) {
        line.push_str(" (recursive)");
    }
    line
}

/// The operation, and all of the content it writes.
pub fn whole_call(arguments: &Map<String, Value>) -> String {
    let mut text = operation_line(arguments);
    if let Some(content) = text_argument(arguments, "content") {
        text.push_str(&format!(
            "\ncontent ({} characters):\n{content}",
            content.chars().count()
        ));
    }
    text
}

/// The operation, and the start of the content it writes.
pub fn brief_call(arguments: &Map<String, Value>) -> CallBrief {
    let brief = CallBrief::code("", operation_line(arguments));
    match text_argument(arguments, "content") {
        Some(content) => {
            let (preview, cut) = cut(content, BRIEF_CONTENT_CHARS);
            brief
                .then_line(format!(
                    "content ({} characters{}):",
                    content.chars().count(),
                    if cut { ", start shown" } else { "" },
                ))
                .then_code("", preview)
        }
        None => brief,
    }
}
