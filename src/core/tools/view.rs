//! How a tool's calls are shown to people, in the three places they are shown: the whole
//! call a person confirms ([`Tool::whole_call`](super::Tool::whole_call)), the short view of
//! a call that ran without a click or was refused ([`CallBrief`]), and one line in a
//! terminal's log ([`Tool::call_line`](super::Tool::call_line)). A tool without views of its
//! own gets the defaults here: its arguments as JSON, whole.
//!
//! These are the texts as the tool writes them. Front ends show them legible (every
//! invisible, direction-changing or look-alike character escaped: `tools::render::ShownCall`)
//! whoever wrote the view, so a view never needs to escape anything itself.

use serde_json::{Map, Value};

/// One part of a [`CallBrief`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BriefPart {
    /// Text shown as code, as written: a code block in a chat. `language` names its syntax
    /// (`sql`, `sh`, `json`), or is empty.
    Code { language: String, text: String },
    /// A line of prose about the call (`on database main`, `body:`); `code` in backticks.
    Line(String),
}

/// The short view of a call: what a chat shows of a call that ran without a click or that
/// the gate refused, in parts a front end lays out its own way, one after another.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallBrief {
    pub parts: Vec<BriefPart>,
}

impl CallBrief {
    /// A brief that starts with code.
    pub fn code(language: impl Into<String>, text: impl Into<String>) -> Self {
        Self::default().then_code(language, text)
    }

    /// A brief that starts with a line of prose.
    pub fn line(text: impl Into<String>) -> Self {
        Self::default().then_line(text)
    }

    /// This brief, then code.
    pub fn then_code(mut self, language: impl Into<String>, text: impl Into<String>) -> Self {
        self.parts.push(BriefPart::Code {
            language: language.into(),
            text: text.into(),
        });
        self
    }

    /// This brief, then a line of prose.
    pub fn then_line(mut self, text: impl Into<String>) -> Self {
        self.parts.push(BriefPart::Line(text.into()));
        self
    }
}

/// The arguments as indented JSON, whole: the default [`Tool::whole_call`](super::Tool::whole_call).
pub fn whole_json(arguments: &Map<String, Value>) -> String {
    serde_json::to_string_pretty(&Value::Object(arguments.clone())).unwrap_or_default()
}

/// The arguments as indented JSON in a `json` code part, whole: the default brief.
pub fn json_brief(arguments: &Map<String, Value>) -> CallBrief {
    CallBrief::code("json", whole_json(arguments))
}

/// The arguments as JSON on one line: the default [`Tool::call_line`](super::Tool::call_line).
pub fn one_line_json(arguments: &Map<String, Value>) -> String {
    Value::Object(arguments.clone()).to_string()
}

/// A text argument, if the call has one by that name.
pub fn text_argument<'a>(arguments: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    arguments.get(key).and_then(Value::as_str)
}
