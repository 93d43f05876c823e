//! A fake OpenAI-compatible server on loopback: it replays scripted replies in order and
//! records every request, so tests can assert on what the model was sent.
//!
//! Started with [`Checks::like_real_servers`], it also refuses what real servers refused
//! when riskgate was run against them (llama-cpp-python 0.3.36's server and llama.cpp's
//! `llama-server`): an assistant message with tool calls whose `content` is `null` or
//! missing gets a 500, tools sent without `tool_choice` are left out of the "prompt" (a
//! scripted call comes back as plain text, as a model that never saw the tools answers),
//! and a call without its result (or a result without its call) gets a 400, as OpenAI
//! answers it. [`bare_call`] scripts what small models write instead of `tool_calls`.

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

/// How a server says a request is over its window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowShape {
    /// llama.cpp's `llama-server`: the prompt alone is counted.
    LlamaCpp,
    /// OpenAI (and vLLM): the prompt and the reply's `max_tokens` together.
    OpenAi,
}

/// What the fake refuses before it answers.
#[derive(Clone, Debug, Default)]
pub struct Checks {
    /// 500 for an assistant message with tool calls whose `content` is null or missing.
    pub content_beside_calls: bool,
    /// Tools without `tool_choice` are ignored: a scripted call is answered as text.
    pub tools_need_tool_choice: bool,
    /// 400 for a call without its result or a result without its call.
    pub pairing: bool,
    /// 400 for any request whose messages contain this text (a server that cannot take
    /// something in the history).
    pub refuse_containing: Option<String>,
    /// 400 with llama.cpp's "exceeds the available context size" for a request whose
    /// messages are longer than this many characters (a model with a small window).
    pub context_chars: Option<usize>,
    /// 400 for a request over this many tokens, in the shape of this server's answer. The
    /// fake's own count: a token for every three characters of the request's messages and
    /// tools as JSON (what tool output runs near), plus `max_tokens` where the shape
    /// counts the reply.
    pub window_tokens: Option<(usize, WindowShape)>,
    /// A request asking for a summary ("Summarise the conversation") is answered by the
    /// fake itself, without using the script: with every line of it holding `FACT:`, as a
    /// model that keeps what people stated.
    pub summarises: bool,
}

impl Checks {
    /// What the real servers refused.
    pub fn like_real_servers() -> Self {
        Self {
            content_beside_calls: true,
            tools_need_tool_choice: true,
            pairing: true,
            refuse_containing: None,
            context_chars: None,
            window_tokens: None,
            summarises: false,
        }
    }
}

/// What a model that never saw the tools answers instead of a scripted call.
pub const NO_TOOLS_ANSWER: &str = "I cannot run anything here.";

struct Script {
    queue: Mutex<VecDeque<Scripted>>,
    checks: Checks,
    /// Why requests were refused, in order.
    rejected: Mutex<Vec<String>>,
    /// When each request arrived, in order.
    arrivals: Mutex<Vec<std::time::Instant>>,
}

impl Script {
    /// The refusal a real server gave this request, if any.
    fn refusal(&self, body: &Value) -> Option<(u16, String)> {
        let messages = body["messages"].as_array()?;
        if self.checks.content_beside_calls {
            for message in messages {
                let calls = message["tool_calls"]
                    .as_array()
                    .is_some_and(|c| !c.is_empty());
                if message["role"] == "assistant" && calls && !message["content"].is_string() {
                    return Some((
                        500,
                        "Internal Server Error: content must be a string".into(),
                    ));
                }
            }
        }
        if self.checks.pairing
            && let Err(problem) = pairing(messages)
        {
            return Some((400, problem));
        }
        if let Some(limit) = self.checks.context_chars {
            let chars = body["messages"].to_string().chars().count();
            if chars > limit {
                return Some((
                    400,
                    format!(
                        "the request exceeds the available context size, try increasing it ({chars} > {limit})"
                    ),
                ));
            }
        }
        if let Some((window, shape)) = self.checks.window_tokens {
            let chars = body["messages"].to_string().chars().count()
                + body
                    .get("tools")
                    .map_or(0, |t| t.to_string().chars().count());
            let prompt = chars.div_ceil(3);
            let reply = body["max_tokens"]
                .as_u64()
                .or_else(|| body["max_completion_tokens"].as_u64())
                .unwrap_or(0) as usize;
            let message = match shape {
                WindowShape::LlamaCpp if prompt > window => Some(format!(
                    "the request exceeds the available context size, try increasing it (n_prompt_tokens {prompt}, n_ctx {window})"
                )),
                WindowShape::OpenAi if prompt + reply > window => Some(format!(
                    "This model's maximum context length is {window} tokens. However, you requested {} tokens ({prompt} in the messages, {reply} in the completion). Please reduce the length of the messages or completion.",
                    prompt + reply
                )),
                _ => None,
            };
            if let Some(message) = message {
                return Some((400, message));
            }
        }
        if let Some(marker) = &self.checks.refuse_containing
            && body["messages"].to_string().contains(marker.as_str())
        {
            return Some((
                400,
                format!("this server cannot take a message with {marker}"),
            ));
        }
        None
    }
}

/// A completion that keeps every `FACT:` line of a summary request.
fn summary_of(body: &Value) -> Value {
    let mut facts: Vec<String> = Vec::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        for line in message["content"].as_str().unwrap_or_default().lines() {
            if let Some(at) = line.find("FACT:") {
                let fact = line[at..].trim().to_owned();
                if !facts.contains(&fact) {
                    facts.push(fact);
                }
            }
        }
    }
    let content = format!("People talked and read tables.\n{}", facts.join("\n"));
    json!({"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]})
}

/// Every call answered by one result before anything else follows, and no stray result.
fn pairing(messages: &[Value]) -> Result<(), String> {
    let mut open: Vec<String> = Vec::new();
    for message in messages {
        if message["role"] == "tool" {
            let id = message["tool_call_id"].as_str().unwrap_or_default();
            let at = open
                .iter()
                .position(|o| o == id)
                .ok_or_else(|| format!("tool message {id:?} answers no call"))?;
            open.remove(at);
            continue;
        }
        if !open.is_empty() {
            return Err(format!("calls {open:?} have no tool message"));
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            open.push(call["id"].as_str().unwrap_or_default().to_owned());
        }
    }
    if open.is_empty() {
        Ok(())
    } else {
        Err(format!("calls {open:?} have no tool message"))
    }
}

impl Respond for Script {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        self.arrivals
            .lock()
            .expect("arrivals")
            .push(std::time::Instant::now());
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        if let Some((status, message)) = self.refusal(&body) {
            self.rejected
                .lock()
                .expect("rejected")
                .push(message.clone());
            return ResponseTemplate::new(status)
                .set_body_json(json!({"error": {"message": message}}));
        }
        if self.checks.summarises
            && body["messages"]
                .to_string()
                .contains("Summarise the conversation")
        {
            return ResponseTemplate::new(200).set_body_json(summary_of(&body));
        }
        let tools_ignored = self.checks.tools_need_tool_choice
            && body.get("tools").is_some()
            && body.get("tool_choice").is_none();
        let mut next = self.queue.lock().expect("script lock").pop_front();
        if tools_ignored
            && let Some(Scripted::Reply(reply)) = &next
            && reply["choices"][0]["message"]["tool_calls"].is_array()
        {
            next = Some(text(NO_TOOLS_ANSWER));
        }
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
        Self::start_with(script, Checks::default()).await
    }

    /// A fake that refuses what `checks` says before it answers.
    pub async fn start_with(script: Vec<Scripted>, checks: Checks) -> Self {
        let server = MockServer::start().await;
        let script = Arc::new(Script {
            queue: Mutex::new(script.into()),
            checks,
            rejected: Mutex::default(),
            arrivals: Mutex::default(),
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

    /// Every chat request's body received so far, in order (the bot's questions at start,
    /// its models and its window, are left out).
    pub async fn requests(&self) -> Vec<Value> {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .filter(|r| r.url.path().ends_with("/chat/completions"))
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

    /// Why requests were refused by the checks, in order.
    pub fn rejections(&self) -> Vec<String> {
        self.script.rejected.lock().expect("rejected").clone()
    }

    /// When each request arrived, in order.
    pub fn arrivals(&self) -> Vec<std::time::Instant> {
        self.script.arrivals.lock().expect("arrivals").clone()
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

/// A call written as bare JSON in the text, as small models behind llama.cpp wrote them.
pub fn bare_call(name: &str, arguments: Value) -> Scripted {
    text(&json!({"name": name, "arguments": arguments}).to_string())
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

/// `step` with the `usage` real servers send beside each completion (OpenAI, llama.cpp,
/// vLLM, Ollama's OpenAI endpoint): the tokens of the request and of the reply.
pub fn with_usage(step: Scripted, prompt_tokens: u64, completion_tokens: u64) -> Scripted {
    let usage = json!({
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    });
    match step {
        Scripted::Reply(mut body) => {
            body["usage"] = usage;
            Scripted::Reply(body)
        }
        Scripted::Slow(delay, mut body) => {
            body["usage"] = usage;
            Scripted::Slow(delay, body)
        }
        status @ Scripted::Status { .. } => status,
    }
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
