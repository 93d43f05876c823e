//! A fake OpenAI-compatible server on loopback: it replays scripted replies in order and
//! records every request, so tests can assert on what the model was sent.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// One scripted answer.
#[derive(Clone)]
pub enum Scripted {
    /// A 200 with this completion body.
    Reply(Value),
    /// Any status with a body and optional Retry-After.
    Status {
        status: u16,
        body: String,
        retry_after: Option<String>,
    },
    /// A reply after a delay.
    Slow(Duration, Value),
}

struct Script {
    queue: Mutex<VecDeque<Scripted>>,
}

impl Respond for Script {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let next = self.queue.lock().expect("script lock").pop_front();
        match next {
            Some(Scripted::Reply(body)) => ResponseTemplate::new(200).set_body_json(body),
            Some(Scripted::Slow(delay, body)) => ResponseTemplate::new(200)
                .set_body_json(body)
                .set_delay(delay),
            Some(Scripted::Status {
                status,
                body,
                retry_after,
            }) => {
                let mut template = ResponseTemplate::new(status).set_body_string(body);
                if let Some(value) = retry_after {
                    template = template.insert_header("retry-after", value.as_str());
                }
                template
            }
            None => ResponseTemplate::new(500)
                .set_body_json(json!({"error": {"message": "the fake LLM's script is exhausted"}})),
        }
    }
}

/// The running fake.
pub struct FakeLlm {
    pub server: MockServer,
    script: Arc<Script>,
}

impl FakeLlm {
    pub async fn start(script: Vec<Scripted>) -> Self {
        let server = MockServer::start().await;
        let script = Arc::new(Script {
            queue: Mutex::new(script.into()),
        });
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(SharedScript(script.clone()))
            .mount(&server)
            .await;
        Self { server, script }
    }

    /// The base URL to configure as `llm.base_url`.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.server.uri())
    }

    /// Every request body received so far, in order.
    pub async fn requests(&self) -> Vec<Value> {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .map(|r| serde_json::from_slice(&r.body).expect("requests are JSON"))
            .collect()
    }

    /// Scripted answers not used yet.
    /// Adds steps at the end of the script (for a script that depends on the bot's pid).
    pub fn push(&self, steps: Vec<Scripted>) {
        self.script.queue.lock().expect("script lock").extend(steps);
    }

    pub fn remaining(&self) -> usize {
        self.script.queue.lock().expect("script lock").len()
    }
}

struct SharedScript(Arc<Script>);

impl Respond for SharedScript {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        self.0.respond(request)
    }
}

/// A completion that calls tools (native protocol). `calls`: (id, name, arguments object).
pub fn tool_calls(calls: &[(&str, &str, Value)]) -> Scripted {
    Scripted::Reply(json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": calls.iter().map(|(id, name, args)| json!({
                    "id": id,
                    "type": "function",
                    "function": {"name": name, "arguments": args.to_string()}
                })).collect::<Vec<_>>()
            },
            "finish_reason": "tool_calls"
        }]
    }))
}

/// A completion with text only.
pub fn text(content: &str) -> Scripted {
    Scripted::Reply(json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
        }]
    }))
}

/// An error status with an OpenAI-shaped body.
pub fn status(status: u16, message: &str, retry_after: Option<&str>) -> Scripted {
    Scripted::Status {
        status,
        body: json!({"error": {"message": message}}).to_string(),
        retry_after: retry_after.map(str::to_owned),
    }
}

/// Checks the OpenAI pairing rule on one request: every tool message answers a call made by
/// an earlier assistant message, and every call gets exactly one answer.
pub fn assert_calls_and_results_pair(request: &Value) {
    let messages = request["messages"].as_array().expect("messages");
    let mut open: Vec<String> = Vec::new();
    for message in messages {
        match message["role"].as_str() {
            Some("assistant") => {
                assert!(
                    open.is_empty(),
                    "calls {open:?} got no result before the next assistant message"
                );
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    open.push(call["id"].as_str().expect("call id").to_owned());
                }
            }
            Some("tool") => {
                let id = message["tool_call_id"].as_str().expect("tool_call_id");
                let at = open.iter().position(|o| o == id).unwrap_or_else(|| {
                    panic!("tool result {id} answers no open call (open: {open:?})")
                });
                open.remove(at);
            }
            _ => assert!(
                open.is_empty(),
                "calls {open:?} got no result before the next message"
            ),
        }
    }
    assert!(open.is_empty(), "calls {open:?} got no result");
}
