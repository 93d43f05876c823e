//! How a call of `http_request` is shown: the request line, its headers (secret-looking
//! values masked in what a person reads, never in what is sent) and its body.

use serde_json::{Map, Value};

use crate::core::tools::CallBrief;
use crate::core::tools::view::text_argument;
use crate::tools::render::cut;

/// Characters of a body the short view shows.
const BRIEF_BODY_CHARS: usize = 400;

/// Header names whose values are masked in what a person is shown (never in what runs).
fn secret_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    matches!(
        name.as_str(),
        "authorization" | "proxy-authorization" | "cookie"
    ) || ["token", "secret", "key", "password", "auth", "session"]
        .iter()
        .any(|part| name.contains(part))
}

/// `METHOD url`.
fn request_line(arguments: &Map<String, Value>) -> String {
    let method = text_argument(arguments, "method")
        .unwrap_or("GET")
        .to_ascii_uppercase();
    let url = text_argument(arguments, "url").unwrap_or_default();
    format!("{method} {url}")
}

/// The body as text: a string as it is, anything else as indented JSON.
fn body(arguments: &Map<String, Value>) -> Option<String> {
    arguments
        .get("body")
        .filter(|b| !b.is_null())
        .map(|body| match body {
            Value::String(s) => s.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        })
}

/// The request whole: its line, each header (secret-looking values masked), the body.
pub fn whole_call(arguments: &Map<String, Value>) -> String {
    let mut text = request_line(arguments);
    if let Some(headers) = arguments.get("headers").and_then(Value::as_object) {
        for (name, value) in headers {
            let value = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            let shown = if secret_header(name) {
                format!(
                    "•••• ({} characters, hidden here; sent as given)",
                    value.chars().count()
                )
            } else {
                value
            };
            text.push_str(&format!("\n{name}: {shown}"));
        }
    }
    if let Some(body) = body(arguments) {
        text.push_str(&format!("\n\n{body}"));
    }
    text
}

/// The request line, and the start of the body.
pub fn brief_call(arguments: &Map<String, Value>) -> CallBrief {
    let brief = CallBrief::code("", request_line(arguments));
    match body(arguments) {
        Some(body) => brief
            .then_line("body:")
            .then_code("", cut(&body, BRIEF_BODY_CHARS).0),
        None => brief,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_headers_are_masked_and_counted() {
        let arguments = serde_json::json!({
            "method": "post", "url": "https://x.test/a",
            "headers": {"Authorization": "Bearer abc", "X-Api-Key": "k1", "Accept": "text/plain"},
            "body": {"a": 1}
        });
        let whole = whole_call(arguments.as_object().expect("object"));
        assert!(whole.starts_with("POST https://x.test/a\n"), "{whole}");
        assert!(whole.contains("Authorization: •••• (10 characters, hidden here; sent as given)"));
        assert!(whole.contains("X-Api-Key: •••• (2 characters"));
        assert!(whole.contains("Accept: text/plain"));
        assert!(!whole.contains("abc") && !whole.contains("k1"), "{whole}");
        assert!(whole.ends_with("\n\n{\n  \"a\": 1\n}"), "{whole}");
    }
}
