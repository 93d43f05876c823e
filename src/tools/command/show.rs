//! How a call of `execute_command` is shown: the command line, as written.

use serde_json::{Map, Value};

use crate::core::tools::CallBrief;
use crate::core::tools::view::{one_line_json, text_argument};

/// The line whole.
pub fn whole_call(arguments: &Map<String, Value>) -> String {
    text_argument(arguments, "command")
        .unwrap_or_default()
        .to_owned()
}

/// The line as shell code.
pub fn brief_call(arguments: &Map<String, Value>) -> CallBrief {
    CallBrief::code(
        "sh",
        text_argument(arguments, "command").unwrap_or_default(),
    )
}

/// The line alone.
pub fn call_line(arguments: &Map<String, Value>) -> String {
    text_argument(arguments, "command").map_or_else(|| one_line_json(arguments), str::to_owned)
}
