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
//!
//! A request that asks for a stream (`"stream": true`) gets each scripted completion as the
//! servers stream it ([`Checks::stream`]: OpenAI's or vLLM's shape): server-sent events
//! whose `choices[0].delta` carries the text in pieces and each tool call in fragments (its
//! index, id and name, then its arguments in pieces), the finish reason, the `usage` in a
//! chunk of its own when `stream_options.include_usage` asks for it, and `data: [DONE]`. A
//! [`paced`] step sends its events that far apart, as a model writing slowly; the others
//! send them at once. [`Streams`] also has the servers that refuse to stream.
//!
//! The fake is two servers: a wiremock server, which records every request and scripts its
//! answer (tests may mount more mocks on [`FakeLlm::server`]), behind a small front that
//! passes every request to it and sends a paced answer on event by event, which wiremock
//! cannot. Both run on threads of their own, so a test may block on a child process.

use std::collections::VecDeque;
use std::net::SocketAddr;
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
    /// A reply streamed with this pause between two events, as a model writes it; asked
    /// for whole, it comes after all the pauses.
    Paced(Duration, Value),
    /// A reply streamed as [`Scripted::Paced`] whose stream stops after this many events
    /// and sends nothing more while the connection lasts, as a stuck server; asked for
    /// whole, it never comes.
    Stalled(Duration, usize, Value),
}

/// How the fake answers a request that asks for a stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Streams {
    /// Events as OpenAI sends them: a role chunk, then text pieces and call fragments each
    /// in a chunk of its own, the finish reason in a chunk of its own.
    #[default]
    OpenAi,
    /// Events as vLLM sends them: the same, but a call's last arguments piece comes in the
    /// chunk that carries the finish reason.
    Vllm,
    /// 400, "stream is not supported", as a server without streaming says it.
    Refused,
    /// The whole completion as JSON, as a server that ignores `stream` answers.
    Ignored,
}

/// Header the wiremock side marks a paced answer with: the pause between events, in ms.
const PACE_HEADER: &str = "x-fake-pace-ms";
/// Header the wiremock side marks a stalled answer with: the events sent before it stops.
const STALL_HEADER: &str = "x-fake-stall-after";

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
    /// How a request that asks for a stream is answered.
    pub stream: Streams,
    /// 400 for a request with `stream_options`, as servers that refuse fields they do not
    /// know answer it ("Unrecognized request argument supplied: stream_options").
    pub refuse_stream_options: bool,
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
            stream: Streams::OpenAi,
            refuse_stream_options: false,
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

/// A completion as the events a server streams it in (see [`Streams`]); a body that is not a
/// completion (an error) goes as one event.
fn events_of(completion: &Value, shape: Streams, usage: bool) -> Vec<Value> {
    let Some(message) = completion
        .pointer("/choices/0/message")
        .filter(|m| m.is_object())
    else {
        return vec![completion.clone()];
    };
    let chunk = |delta: Value| json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]});
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}))];
    let content = match &message["content"] {
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        other => other.as_str().unwrap_or_default().to_owned(),
    };
    for piece in pieces(&content, 12) {
        events.push(chunk(json!({"content": piece})));
    }
    let mut calls: Vec<Value> = message["tool_calls"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if let Some(legacy) = message.get("function_call").filter(|f| f.is_object()) {
        calls.push(json!({"function": legacy}));
    }
    let mut last_piece = None;
    for (index, call) in calls.iter().enumerate() {
        let function = &call["function"];
        let mut head = json!({"index": index, "type": "function",
            "function": {"name": function["name"], "arguments": ""}});
        if let Some(id) = call.get("id") {
            head["id"] = id.clone();
        }
        events.push(chunk(json!({"tool_calls": [head]})));
        match &function["arguments"] {
            Value::String(arguments) => {
                for piece in pieces(arguments, 7) {
                    let fragment =
                        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]});
                    last_piece = Some(events.len());
                    events.push(chunk(fragment));
                }
            }
            // An object is sent whole, as a server that sends calls whole does.
            Value::Null => {}
            whole => events.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": whole}}]}),
            )),
        }
    }
    let finish = completion
        .pointer("/choices/0/finish_reason")
        .cloned()
        .unwrap_or(Value::Null);
    match (shape, last_piece) {
        (Streams::Vllm, Some(at)) if at + 1 == events.len() => {
            events[at]["choices"][0]["finish_reason"] = finish;
        }
        _ => {
            let mut last = chunk(json!({}));
            last["choices"][0]["finish_reason"] = finish;
            events.push(last);
        }
    }
    if usage && let Some(counts) = completion.get("usage") {
        events.push(json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "choices": [], "usage": counts}));
    }
    events
}

/// `text` in pieces of about `size` characters, cut after spaces where it can be, as tokens
/// come.
fn pieces(text: &str, size: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if current.chars().count() >= size || (c == ' ' && current.chars().count() >= size / 2) {
            pieces.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// The events as an SSE body, `data: [DONE]` last.
fn sse_body(events: &[Value]) -> String {
    let mut body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    body
}

impl Script {
    /// The answer to a request that asks for a stream, as [`Checks::stream`] says; `None`
    /// to answer it as any request.
    fn streamed(
        &self,
        body: &Value,
        take: impl FnOnce() -> Option<Scripted>,
    ) -> Option<ResponseTemplate> {
        if body["stream"] != json!(true) {
            return None;
        }
        let refuse = |message: &str| {
            ResponseTemplate::new(400).set_body_json(
                json!({"error": {"message": message, "type": "invalid_request_error"}}),
            )
        };
        if self.checks.refuse_stream_options && body.get("stream_options").is_some() {
            return Some(refuse(
                "Unrecognized request argument supplied: stream_options",
            ));
        }
        match self.checks.stream {
            Streams::Refused => return Some(refuse("stream is not supported")),
            Streams::Ignored => return None,
            Streams::OpenAi | Streams::Vllm => {}
        }
        let usage = body.pointer("/stream_options/include_usage") == Some(&json!(true));
        let sse = |completion: &Value| {
            ResponseTemplate::new(200).set_body_raw(
                sse_body(&events_of(completion, self.checks.stream, usage)),
                "text/event-stream",
            )
        };
        Some(match take() {
            Some(Scripted::Reply(completion)) => sse(&completion),
            Some(Scripted::Slow(delay, completion)) => sse(&completion).set_delay(delay),
            Some(Scripted::Paced(every, completion)) => {
                sse(&completion).insert_header(PACE_HEADER, every.as_millis().to_string().as_str())
            }
            Some(Scripted::Stalled(every, after, completion)) => sse(&completion)
                .insert_header(PACE_HEADER, every.as_millis().to_string().as_str())
                .insert_header(STALL_HEADER, after.to_string().as_str()),
            other => answer(other),
        })
    }
}

/// The answer to a scripted step, whole.
fn answer(next: Option<Scripted>) -> ResponseTemplate {
    match next {
        Some(Scripted::Reply(body)) => ResponseTemplate::new(200).set_body_json(body),
        Some(Scripted::Slow(delay, body)) => ResponseTemplate::new(200)
            .set_body_json(body)
            .set_delay(delay),
        Some(Scripted::Paced(every, body)) => {
            let events = events_of(&body, Streams::OpenAi, false).len() as u32 + 1;
            ResponseTemplate::new(200)
                .set_body_json(body)
                .set_delay(every * events)
        }
        // Never, as far as a test waits.
        Some(Scripted::Stalled(_, _, body)) => ResponseTemplate::new(200)
            .set_body_json(body)
            .set_delay(Duration::from_secs(3600)),
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
            let summary = Scripted::Reply(summary_of(&body));
            return self
                .streamed(&body, || Some(summary.clone()))
                .unwrap_or_else(|| answer(Some(summary)));
        }
        let tools_ignored = self.checks.tools_need_tool_choice
            && body.get("tools").is_some()
            && body.get("tool_choice").is_none();
        if tools_ignored {
            let mut queue = self.queue.lock().expect("script lock");
            if let Some(Scripted::Reply(reply)) = queue.front()
                && reply["choices"][0]["message"]["tool_calls"].is_array()
            {
                queue[0] = text(NO_TOOLS_ANSWER);
            }
        }
        if let Some(streamed) = self.streamed(&body, || {
            self.queue.lock().expect("script lock").pop_front()
        }) {
            return streamed;
        }
        answer(self.queue.lock().expect("script lock").pop_front())
    }
}

/// Passes one request to the wiremock server at `behind` and its answer back; a paced
/// answer (see [`PACE_HEADER`]) is sent on event by event, that far apart.
async fn pass(
    client: reqwest::Client,
    behind: String,
    request: axum::extract::Request,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut forward = client.request(parts.method.clone(), format!("{behind}{path}"));
    for (name, value) in &parts.headers {
        if !matches!(name.as_str(), "host" | "content-length") {
            forward = forward.header(name, value);
        }
    }
    let Ok(answer) = forward.body(body.to_vec()).send().await else {
        return axum::http::StatusCode::BAD_GATEWAY.into_response();
    };
    let status = answer.status();
    let mut headers = answer.headers().clone();
    let pace = headers
        .remove(PACE_HEADER)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
        .map(Duration::from_millis);
    let stall_after = headers
        .remove(STALL_HEADER)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    for hop in ["content-length", "transfer-encoding", "connection"] {
        headers.remove(hop);
    }
    let bytes = answer.bytes().await.unwrap_or_default();
    let body = match pace {
        None => axum::body::Body::from(bytes),
        Some(every) => {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let mut events: VecDeque<String> =
                text.split_inclusive("\n\n").map(str::to_owned).collect();
            if let Some(after) = stall_after {
                events.truncate(after);
            }
            let stall = stall_after.is_some();
            let paced = futures_util::stream::unfold(events, move |mut events| async move {
                let Some(event) = events.pop_front() else {
                    if stall {
                        // The connection stays open, and nothing more comes.
                        std::future::pending::<()>().await;
                    }
                    return None;
                };
                tokio::time::sleep(every).await;
                Some((Ok::<_, std::convert::Infallible>(event), events))
            });
            axum::body::Body::from_stream(paced)
        }
    };
    let mut response = (status, body).into_response();
    response.headers_mut().extend(headers);
    response
}

/// Starts the front that passes every request to `behind`, on a thread of its own; its
/// address.
fn start_front(behind: String) -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime for the fake LLM's front");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a port for the fake LLM");
            tx.send(listener.local_addr().expect("its address"))
                .expect("the test waits for it");
            let client = reqwest::Client::builder()
                .no_proxy()
                .build()
                .expect("a client");
            let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
                pass(client.clone(), behind.clone(), request)
            });
            axum::serve(listener, app)
                .await
                .expect("the fake LLM's front");
        });
    });
    rx.recv().expect("the fake LLM's front started")
}

/// The running fake.
pub struct FakeLlm {
    /// The wiremock server behind the front: it records every request.
    pub server: MockServer,
    script: Arc<Script>,
    /// The front every request comes to.
    front: SocketAddr,
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
        let front = start_front(server.uri());
        Self {
            server,
            script,
            front,
        }
    }

    /// The base URL to configure as `llm.base_url`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.front)
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
        Scripted::Paced(every, mut body) => {
            body["usage"] = usage;
            Scripted::Paced(every, body)
        }
        Scripted::Stalled(every, after, mut body) => {
            body["usage"] = usage;
            Scripted::Stalled(every, after, body)
        }
        status @ Scripted::Status { .. } => status,
    }
}

/// `step` streamed slowly: its events `every` apart, as a model writing that fast.
pub fn paced(step: Scripted, every: Duration) -> Scripted {
    match step {
        Scripted::Reply(body)
        | Scripted::Slow(_, body)
        | Scripted::Paced(_, body)
        | Scripted::Stalled(_, _, body) => Scripted::Paced(every, body),
        status @ Scripted::Status { .. } => status,
    }
}

/// `step` streamed `every` apart, stopping for good after its first `after` events (the
/// role chunk is the first), as a server that gets stuck in the middle of an answer.
pub fn stalled(step: Scripted, every: Duration, after: usize) -> Scripted {
    match step {
        Scripted::Reply(body)
        | Scripted::Slow(_, body)
        | Scripted::Paced(_, body)
        | Scripted::Stalled(_, _, body) => Scripted::Stalled(every, after, body),
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
