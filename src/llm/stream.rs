//! Streamed completions: OpenAI's server-sent events (`"stream": true`), as OpenAI, vLLM,
//! llama.cpp's server, Ollama and LM Studio send them. Each event is `data: {chunk}`: the
//! reply's text arrives in `choices[0].delta.content` pieces, a tool call in fragments
//! (`delta.tool_calls[i]`: its `index`, then its `id` and name once, its `arguments` in
//! pieces), the `finish_reason` in the last chunk of the choice, the `usage` in a chunk of its
//! own when asked for (`stream_options.include_usage`), and `data: [DONE]` ends it.
//!
//! [`Assembly`] puts the pieces together into the same [`ChatReply`] the whole answer would
//! have given (`wire::parse_reply`): the loop, and so the gate, only ever sees whole calls.
//! The reader is a few dozen lines over the response's chunks ([`SseReader`]), rather than
//! a crate: the format is small and fixed, and only `data` fields matter here.

use std::collections::BTreeMap;

use serde_json::Value;

use super::wire;
use crate::core::message::{ChatReply, ReplyToolCall, Usage};
use crate::core::ports::{ModelError, ReplyListener};

/// Splits a server-sent event stream into its events' data, as the byte chunks come
/// (lines may be cut anywhere between two chunks). Lines end in LF, CRLF or CR; `data`
/// lines of one event are joined with a line break; comments (`: keep-alive`, which
/// OpenRouter sends) and other fields are skipped.
#[derive(Debug, Default)]
pub(super) struct SseReader {
    line: Vec<u8>,
    /// The data of the event being read, and whether it has any `data` line yet.
    data: String,
    has_data: bool,
    /// The last byte was a CR: a LF right after it ends no second line.
    after_cr: bool,
}

impl SseReader {
    /// Reads `bytes`; returns the data of every event they complete.
    pub(super) fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut events = Vec::new();
        for &byte in bytes {
            let after_cr = std::mem::replace(&mut self.after_cr, byte == b'\r');
            match byte {
                b'\n' if after_cr => {}
                b'\n' | b'\r' => {
                    if let Some(data) = self.end_line() {
                        events.push(data);
                    }
                }
                _ => self.line.push(byte),
            }
        }
        events
    }

    /// The stream ended: the event it left without its closing blank line, if any.
    pub(super) fn finish(&mut self) -> Option<String> {
        if !self.line.is_empty() {
            self.end_line();
        }
        self.dispatch()
    }

    /// One line read: a blank line ends the event.
    fn end_line(&mut self) -> Option<String> {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            return self.dispatch();
        }
        let line = String::from_utf8_lossy(&line);
        let (field, value) = line.split_once(':').unwrap_or((&line, ""));
        if field == "data" {
            let value = value.strip_prefix(' ').unwrap_or(value);
            if self.has_data {
                self.data.push('\n');
            }
            self.data.push_str(value);
            self.has_data = true;
        }
        None
    }

    fn dispatch(&mut self) -> Option<String> {
        std::mem::take(&mut self.has_data).then(|| std::mem::take(&mut self.data))
    }
}

/// An answer's events read into a reply as they come, its text told to a listener.
pub(super) struct Reading<'a> {
    events: SseReader,
    assembly: Assembly,
    listener: &'a dyn ReplyListener,
}

impl<'a> Reading<'a> {
    pub(super) fn new(listener: &'a dyn ReplyListener) -> Self {
        Self {
            events: SseReader::default(),
            assembly: Assembly::default(),
            listener,
        }
    }

    /// Reads the next bytes of the answer; `true` once the stream said it is over.
    pub(super) fn feed(&mut self, bytes: &[u8]) -> Result<bool, ModelError> {
        for data in self.events.feed(bytes) {
            self.take(&data)?;
        }
        Ok(self.assembly.is_done())
    }

    /// The answer ended: its reply.
    pub(super) fn finish(mut self) -> Result<ChatReply, ModelError> {
        if let Some(data) = self.events.finish() {
            self.take(&data)?;
        }
        self.assembly.finish()
    }

    fn take(&mut self, data: &str) -> Result<(), ModelError> {
        if let Some(piece) = self.assembly.take(data)? {
            self.listener.text(&piece);
        }
        Ok(())
    }
}

/// Whether an answer's body, which did not say it is an event stream, is one anyway (a
/// server that sends events as `text/plain`).
pub(super) fn looks_like_events(body: &str) -> bool {
    body.lines()
        .map(str::trim_start)
        .find(|line| !line.is_empty())
        .is_some_and(|line| line.starts_with("data:"))
}

/// A tool call being put together from its fragments.
#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    /// The arguments: their text pieces joined, or a value a server sent whole (an object).
    arguments: Option<Value>,
}

impl PartialCall {
    fn add(&mut self, fragment: &Value) {
        if let Some(id) = fragment.get("id").and_then(Value::as_str)
            && self.id.is_none()
        {
            self.id = Some(id.to_owned());
        }
        let function = fragment.get("function").unwrap_or(fragment);
        if let Some(name) = function.get("name").and_then(Value::as_str)
            && name != self.name
        {
            // Most servers send the name once, some again in every fragment: a repeat is
            // not a second piece.
            self.name.push_str(name);
        }
        let arguments = function
            .get("arguments")
            .or_else(|| function.get("parameters"));
        match (arguments, &mut self.arguments) {
            (None | Some(Value::Null), _) => {}
            (Some(Value::String(piece)), Some(Value::String(text))) => text.push_str(piece),
            (Some(value), slot) => *slot = Some(value.clone()),
        }
    }

    fn into_call(self) -> ReplyToolCall {
        ReplyToolCall {
            id: self.id,
            name: self.name,
            arguments: self.arguments.unwrap_or(Value::Null),
        }
    }
}

/// A streamed reply put together from its events.
#[derive(Debug, Default)]
pub(super) struct Assembly {
    content: String,
    /// Tool calls by their `index` (the legacy `function_call` is call 0).
    calls: BTreeMap<u64, PartialCall>,
    /// The index the last fragment without one went to.
    last_index: Option<u64>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    /// `data: [DONE]` came.
    done: bool,
}

impl Assembly {
    /// Whether the stream said it is over (`data: [DONE]`).
    pub(super) fn is_done(&self) -> bool {
        self.done
    }

    /// Reads one event's data; returns the text it adds to the reply, if any.
    pub(super) fn take(&mut self, data: &str) -> Result<Option<String>, ModelError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(None);
        }
        if data.is_empty() {
            return Ok(None);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            ModelError::BadReply(format!(
                "a streamed chunk is not JSON ({e}): {}",
                crate::core::tools::shorten(data, 200)
            ))
        })?;
        if let Some(error) = wire::error_of(&chunk, data) {
            return Err(error);
        }
        if let Some(usage) = chunk.get("usage").and_then(wire::usage_of) {
            self.usage = Some(usage);
        }
        let mut text = String::new();
        let choices = chunk.get("choices").and_then(Value::as_array);
        // Only the first choice: riskgate asks for one.
        for choice in choices.into_iter().flatten().filter(|choice| {
            choice
                .get("index")
                .and_then(Value::as_u64)
                .is_none_or(|index| index == 0)
        }) {
            if let Some(delta) = choice.get("delta").or_else(|| choice.get("message")) {
                if let Some(piece) = wire::content_of(delta) {
                    text.push_str(&piece);
                }
                self.add_calls(delta);
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(reason.to_owned());
            }
        }
        self.content.push_str(&text);
        Ok((!text.is_empty()).then_some(text))
    }

    fn add_calls(&mut self, delta: &Value) {
        if let Some(fragments) = delta.get("tool_calls").and_then(Value::as_array) {
            for fragment in fragments {
                let index = self.index_of(fragment);
                self.calls.entry(index).or_default().add(fragment);
            }
        } else if let Some(function) = delta.get("function_call").filter(|f| f.is_object()) {
            self.calls.entry(0).or_default().add(function);
        }
    }

    /// The call a fragment belongs to: its `index`; without one (some servers send each
    /// call whole, without it), a new call when it brings an id or a name of its own, else
    /// the call the last such fragment went to.
    fn index_of(&mut self, fragment: &Value) -> u64 {
        if let Some(index) = fragment.get("index").and_then(Value::as_u64) {
            return index;
        }
        let starts_a_call = fragment.get("id").and_then(Value::as_str).is_some()
            || fragment
                .pointer("/function/name")
                .and_then(Value::as_str)
                .is_some();
        let index = match self.last_index {
            Some(last) if !starts_a_call => last,
            _ => self.calls.keys().next_back().map_or(0, |last| last + 1),
        };
        self.last_index = Some(index);
        index
    }

    /// The reply, once the stream ended. A stream that stopped before saying it was over
    /// (neither `[DONE]` nor a finish reason) broke off.
    pub(super) fn finish(self) -> Result<ChatReply, ModelError> {
        if !self.done && self.finish_reason.is_none() {
            return Err(ModelError::Interrupted(
                "the stream ended before the reply did".to_owned(),
            ));
        }
        Ok(ChatReply {
            content: (!self.content.is_empty()).then_some(self.content),
            tool_calls: self
                .calls
                .into_values()
                .map(PartialCall::into_call)
                .collect(),
            finish_reason: self.finish_reason,
            usage: self.usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    /// Hears the text pieces.
    #[derive(Default)]
    struct Pieces(std::sync::Mutex<Vec<String>>);

    impl ReplyListener for Pieces {
        fn text(&self, piece: &str) {
            self.0.lock().expect("pieces").push(piece.to_owned());
        }
    }

    /// Reads a whole stream given as byte chunks.
    fn assembled(chunks: &[&[u8]]) -> Result<(ChatReply, Vec<String>), ModelError> {
        let pieces = Pieces::default();
        let mut reading = Reading::new(&pieces);
        for chunk in chunks {
            reading.feed(chunk)?;
        }
        let reply = reading.finish()?;
        Ok((reply, pieces.0.into_inner().expect("pieces")))
    }

    #[test]
    fn events_are_read_across_chunks_and_line_endings() {
        let mut reader = SseReader::default();
        assert!(reader.feed(b": keep-alive\n\nda").is_empty());
        assert_eq!(reader.feed(b"ta: one\r"), Vec::<String>::new());
        assert_eq!(reader.feed(b"\n\r\n"), ["one"]);
        assert_eq!(
            reader.feed(b"event: x\ndata:two\ndata: lines\rid: 7\r\rdata: three"),
            ["two\nlines"]
        );
        assert_eq!(reader.finish(), Some("three".to_owned()));
        assert_eq!(reader.finish(), None);
        assert!(looks_like_events("\n data: {}\n\n"));
        assert!(!looks_like_events("{\"choices\": []}"));
    }

    /// OpenAI's shape: a role chunk with empty content, the call's fragments, the finish
    /// reason, the usage in a chunk without choices, then `[DONE]`.
    #[test]
    fn an_openai_stream_gives_whole_calls_usage_and_the_finish_reason() {
        let stream = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"execute_sql\",\"arguments\":\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"sql\\\": \"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"SELECT 1\\\"}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4}}\n\n",
            "data: [DONE]\n\n",
        );
        let (reply, pieces) = assembled(&[stream.as_bytes()]).expect("a reply");
        assert!(pieces.is_empty());
        assert_eq!(reply.content, None);
        assert_eq!(
            reply.tool_calls,
            [ReplyToolCall {
                id: Some("call_1".into()),
                name: "execute_sql".into(),
                arguments: json!("{\"sql\": \"SELECT 1\"}"),
            }]
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            reply.usage,
            Some(Usage {
                prompt_tokens: 9,
                completion_tokens: 4
            })
        );
    }

    /// Calls sent whole without an index (as Ollama sends them), the legacy
    /// `function_call`, an object for arguments, and text in parts.
    #[test]
    fn calls_without_an_index_and_odd_shapes_are_read_as_the_whole_answer_reads_them() {
        let stream = concat!(
            "data: {\"choices\":[{\"delta\":{\"content\":[{\"type\":\"text\",\"text\":\"Let me \"}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"look.\"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"a\",\"arguments\":{\"x\":1}}},{\"function\":{\"name\":\"b\",\"arguments\":\"{}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        );
        let (reply, pieces) = assembled(&[stream.as_bytes()]).expect("a reply");
        assert_eq!(pieces, ["Let me ", "look."]);
        assert_eq!(reply.content.as_deref(), Some("Let me look."));
        let names: Vec<&str> = reply.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(reply.tool_calls[0].arguments, json!({"x": 1}));
        let legacy = concat!(
            "data: {\"choices\":[{\"delta\":{\"function_call\":{\"name\":\"execute_sql\",\"arguments\":\"{\\\"sql\\\"\"}}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"function_call\":{\"arguments\":\":\\\"x\\\"}\"}}}]}\n\n",
            "data: [DONE]\n\n",
        );
        let (reply, _) = assembled(&[legacy.as_bytes()]).expect("a reply");
        assert_eq!(reply.tool_calls[0].name, "execute_sql");
        assert_eq!(reply.tool_calls[0].arguments, json!("{\"sql\":\"x\"}"));
    }

    #[test]
    fn a_stream_that_breaks_off_or_says_an_error_fails_as_the_whole_answer_would() {
        let cut = "data: {\"choices\":[{\"delta\":{\"content\":\"half\"}}]}\n\n";
        assert!(matches!(
            assembled(&[cut.as_bytes()]),
            Err(ModelError::Interrupted(_))
        ));
        let error = "data: {\"error\":{\"message\":\"This model's maximum context length is 4096 tokens.\"}}\n\n";
        assert!(matches!(
            assembled(&[error.as_bytes()]),
            Err(ModelError::TooLong(_))
        ));
        assert!(matches!(
            assembled(&[b"data: {not json\n\n"]),
            Err(ModelError::BadReply(_))
        ));
    }

    /// A completion, and the chunks a server streams it in, cut at `cuts`.
    fn streamed(reply: &Value, pieces: usize) -> String {
        let message = &reply["choices"][0]["message"];
        let mut events = vec![json!({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})];
        if let Some(content) = message["content"].as_str() {
            let chars: Vec<char> = content.chars().collect();
            for part in chars.chunks(chars.len().div_ceil(pieces).max(1)) {
                let part: String = part.iter().collect();
                events.push(json!({"choices": [{"index": 0, "delta": {"content": part}}]}));
            }
        }
        for (index, call) in message["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            events.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{
                "index": index, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}]}}]}));
            let arguments: Vec<char> = call["function"]["arguments"]
                .as_str()
                .unwrap_or_default()
                .chars()
                .collect();
            for part in arguments.chunks(arguments.len().div_ceil(pieces).max(1)) {
                let part: String = part.iter().collect();
                events.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{
                    "index": index, "function": {"arguments": part}}]}}]}));
            }
        }
        events.push(json!({"choices": [{"index": 0, "delta": {},
            "finish_reason": reply["choices"][0]["finish_reason"]}]}));
        if !reply["usage"].is_null() {
            events.push(json!({"choices": [], "usage": reply["usage"]}));
        }
        let mut text: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
        text.push_str("data: [DONE]\n\n");
        text
    }

    fn completion() -> impl Strategy<Value = Value> {
        let call = ("[a-z_]{1,12}", "\\PC{0,40}", "call_[a-z0-9]{1,8}").prop_map(
            |(name, argument, id)| {
                json!({"id": id, "type": "function", "function": {
                "name": name, "arguments": json!({"v": argument}).to_string()}})
            },
        );
        (
            proptest::option::of("\\PC{1,120}"),
            proptest::collection::vec(call, 0..3),
            proptest::option::of((0u64..100_000, 0u64..5_000)),
            prop_oneof![Just("stop"), Just("tool_calls"), Just("length")],
        )
            .prop_map(|(content, calls, usage, finish)| {
                let mut message = json!({"role": "assistant", "content": content});
                if !calls.is_empty() {
                    message["tool_calls"] = json!(calls);
                }
                let mut reply =
                    json!({"choices": [{"index": 0, "message": message, "finish_reason": finish}]});
                if let Some((prompt, completion)) = usage {
                    reply["usage"] =
                        json!({"prompt_tokens": prompt, "completion_tokens": completion});
                }
                reply
            })
    }

    proptest! {
        /// The reply a stream gives is the reply the whole answer gives, however the server
        /// cuts it into chunks and the network cuts the chunks into reads; its text pieces
        /// are the reply's text.
        #[test]
        fn a_streamed_reply_is_the_whole_reply(
            reply in completion(),
            pieces in 1usize..12,
            reads in proptest::collection::vec(1usize..64, 1..40),
        ) {
            let whole = wire::parse_reply(&reply.to_string()).expect("a reply");
            let stream = streamed(&reply, pieces);
            let bytes = stream.as_bytes();
            let mut chunks = Vec::new();
            let mut at = 0;
            for read in reads.iter().cycle() {
                if at >= bytes.len() {
                    break;
                }
                let end = (at + read).min(bytes.len());
                chunks.push(&bytes[at..end]);
                at = end;
            }
            let (got, text) = assembled(&chunks).expect("a streamed reply");
            prop_assert_eq!(&got, &whole);
            prop_assert_eq!(text.concat(), whole.content.unwrap_or_default());
        }
    }
}
