//! How many tokens the model takes in one request (its context window), as the server says
//! it where it says it.
//!
//! No OpenAI-compatible endpoint states the window, but the servers people run locally do,
//! each its own way:
//! - vLLM lists `max_model_len` beside each model in `GET /v1/models`;
//! - llama.cpp's `llama-server` answers `GET /props` with the context of one slot
//!   (`default_generation_settings.n_ctx`: the `-c` it was started with, divided among its
//!   parallel slots);
//! - Ollama answers `POST /api/show` with the model's `parameters` (`num_ctx` when the
//!   Modelfile sets it) and `model_info` (`<arch>.context_length`, what it was trained
//!   for). Without `num_ctx` Ollama runs a model with its own default context, not the
//!   trained one, and cuts longer prompts silently: that default is taken as
//!   [`OLLAMA_DEFAULT_CONTEXT`].
//!
//! The probes run at once, each bounded; what none answers leaves the window to the setting
//! or the default (`llm.context_window_tokens`).

use std::time::Duration;

use serde_json::Value;
use url::Url;

/// The context Ollama gives a model whose Modelfile sets no `num_ctx` (its default on
/// smaller GPUs; older versions gave 2048, newer ones more where memory allows).
pub const OLLAMA_DEFAULT_CONTEXT: u32 = 4096;

/// The window taken when neither `llm.context_window_tokens` nor the server says one: what
/// the small local models people start servers with commonly get.
pub const DEFAULT_CONTEXT_WINDOW: u32 = 8192;

/// The window requests are fitted to, and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextWindow {
    pub tokens: u32,
    /// `llm.context_window_tokens`, what the server stated, or the default.
    pub source: &'static str,
}

impl ContextWindow {
    /// The setting when given (`> 0`), else what the server `stated`, else the default.
    pub fn resolve(setting: u32, stated: Option<StatedWindow>) -> Self {
        if setting > 0 {
            return Self {
                tokens: setting,
                source: "llm.context_window_tokens",
            };
        }
        match stated {
            Some(stated) => Self {
                tokens: stated.tokens,
                source: stated.source,
            },
            None => Self {
                tokens: DEFAULT_CONTEXT_WINDOW,
                source: "the default: the server states none; set llm.context_window_tokens",
            },
        }
    }

    /// `context window 8192 tokens (llama.cpp's /props (n_ctx))`.
    pub fn describe(&self) -> String {
        format!("context window {} tokens ({})", self.tokens, self.source)
    }
}

/// A window the server stated, and where it said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatedWindow {
    pub tokens: u32,
    /// E.g. `llama.cpp's /props (n_ctx)`.
    pub source: &'static str,
}

/// The server's root: `base_url` without its trailing `/v1` (where `/props` and
/// `/api/show` live).
pub(super) fn server_root(base_url: &Url) -> Url {
    let mut root = base_url.clone();
    let path = root.path().trim_end_matches('/');
    let path = path.strip_suffix("/v1").unwrap_or(path).to_owned();
    root.set_path(&format!("{path}/"));
    root.set_query(None);
    root
}

/// vLLM: `max_model_len` of `model` in a `/v1/models` answer (or of the only model listed).
pub(super) fn from_models(text: &str, model: &str) -> Option<StatedWindow> {
    let value: Value = serde_json::from_str(text).ok()?;
    let data = value.get("data")?.as_array()?;
    let entry = data
        .iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(model))
        .or(if data.len() == 1 { data.first() } else { None })?;
    let tokens = positive(entry.get("max_model_len")?)?;
    Some(StatedWindow {
        tokens,
        source: "the server's /v1/models (max_model_len)",
    })
}

/// llama.cpp: the slot's `n_ctx` in a `/props` answer.
pub(super) fn from_props(text: &str) -> Option<StatedWindow> {
    let value: Value = serde_json::from_str(text).ok()?;
    let n_ctx = value
        .pointer("/default_generation_settings/n_ctx")
        .or_else(|| value.get("n_ctx"))?;
    Some(StatedWindow {
        tokens: positive(n_ctx)?,
        source: "llama.cpp's /props (n_ctx)",
    })
}

/// Ollama: `num_ctx` from the model's parameters, else its default context within what the
/// model was trained for.
pub(super) fn from_ollama_show(text: &str) -> Option<StatedWindow> {
    let value: Value = serde_json::from_str(text).ok()?;
    let num_ctx = value
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|parameters| {
            parameters.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("num_ctx"))
                    .then(|| words.next()?.parse::<u32>().ok())
                    .flatten()
            })
        })
        .filter(|n| *n > 0);
    if let Some(tokens) = num_ctx {
        return Some(StatedWindow {
            tokens,
            source: "Ollama's /api/show (num_ctx)",
        });
    }
    let trained = value
        .get("model_info")?
        .as_object()?
        .iter()
        .find(|(key, _)| key.ends_with(".context_length"))
        .and_then(|(_, n)| positive(n));
    Some(StatedWindow {
        tokens: trained.map_or(OLLAMA_DEFAULT_CONTEXT, |t| t.min(OLLAMA_DEFAULT_CONTEXT)),
        source: "Ollama's default context (the model sets no num_ctx)",
    })
}

fn positive(value: &Value) -> Option<u32> {
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
}

impl From<ContextWindow> for crate::core::commands::ModelWindow {
    fn from(window: ContextWindow) -> Self {
        Self {
            tokens: window.tokens,
            source: window.source.to_owned(),
        }
    }
}

impl super::OpenAiClient {
    /// The window requests are fitted to: `setting` (`llm.context_window_tokens`) when it is
    /// given, else what the server states (asked as [`Self::stated_window`], each probe
    /// within `wait`), else the default.
    pub async fn context_window(&self, setting: u32, wait: Duration) -> ContextWindow {
        let stated = if setting > 0 {
            None
        } else {
            self.stated_window(wait).await
        };
        ContextWindow::resolve(setting, stated)
    }

    /// Asks the server for the model's window: vLLM's model list, llama.cpp's `/props` and
    /// Ollama's `/api/show`, at once, each within `wait`. `None` when none says.
    pub async fn stated_window(&self, wait: Duration) -> Option<StatedWindow> {
        let root = server_root(&self.config.base_url);
        let model = self.config.model.as_str();
        let get = |url: Option<Url>| async move {
            let mut request = self.http.get(url?).timeout(wait);
            if let Some(key) = &self.config.api_key {
                request = request.bearer_auth(secrecy::ExposeSecret::expose_secret(key));
            }
            self.ok_text(request).await
        };
        let show = async {
            let mut request = self
                .http
                .post(root.join("api/show").ok()?)
                .timeout(wait)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(serde_json::json!({ "model": model }).to_string());
            if let Some(key) = &self.config.api_key {
                request = request.bearer_auth(secrecy::ExposeSecret::expose_secret(key));
            }
            self.ok_text(request).await
        };
        let (models, props, show) = tokio::join!(
            get(self.endpoint.join("../models").ok()),
            get(root.join("props").ok()),
            show
        );
        models
            .and_then(|text| from_models(&text, model))
            .or_else(|| props.and_then(|text| from_props(&text)))
            .or_else(|| show.and_then(|text| from_ollama_show(&text)))
    }

    /// The body of a successful answer; `None` for any failure (a probe's failure only
    /// means this server does not say it that way).
    async fn ok_text(&self, request: reqwest::RequestBuilder) -> Option<String> {
        let response = request.send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        response.text().await.ok()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn client(base_url: &str) -> crate::llm::OpenAiClient {
        crate::llm::OpenAiClient::new(crate::llm::LlmConfig {
            base_url: Url::parse(base_url).expect("url"),
            api_key: None,
            model: "m".to_owned(),
            temperature: None,
            max_tokens: None,
            server: crate::llm::ServerKind::Generic,
            request_timeout: Duration::from_secs(5),
            stream_idle_timeout: Duration::from_secs(5),
            max_retries: 0,
            retry_base_delay: Duration::from_millis(1),
            max_retry_wait: Duration::from_secs(1),
            context_window_tokens: 0,
            stream: false,
        })
        .expect("client")
    }

    /// Each server kind answers only its own probe, as the real ones do (the others get
    /// 404); the window is read from the one that answers.
    #[tokio::test]
    async fn each_kind_of_server_is_asked_where_it_says_it() {
        use wiremock::matchers::{body_json, method, path};
        use wiremock::{Mock, MockServer, ResponseTemplate};
        let wait = Duration::from_secs(2);

        let llama = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/props"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"default_generation_settings": {"n_ctx": 3072}})),
            )
            .mount(&llama)
            .await;
        let got = client(&format!("{}/v1", llama.uri()))
            .stated_window(wait)
            .await;
        assert_eq!(
            got.map(|w| (w.tokens, w.source)),
            Some((3072, "llama.cpp's /props (n_ctx)"))
        );

        let ollama = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/api/show"))
            .and(body_json(json!({"model": "m"})))
            .respond_with(ResponseTemplate::new(200).set_body_json(
                json!({"parameters": "num_ctx 6000", "model_info": {"llama.context_length": 8192}}),
            ))
            .mount(&ollama)
            .await;
        let got = client(&format!("{}/v1", ollama.uri()))
            .stated_window(wait)
            .await;
        assert_eq!(got.map(|w| w.tokens), Some(6000));

        let vllm = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/v1/models"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"data": [{"id": "m", "max_model_len": 12288}]})),
            )
            .mount(&vllm)
            .await;
        let got = client(&format!("{}/v1", vllm.uri()))
            .stated_window(wait)
            .await;
        assert_eq!(got.map(|w| w.tokens), Some(12288));

        // A server that states nothing (OpenAI's API, or nothing listening on the paths).
        let silent = MockServer::start().await;
        assert_eq!(
            client(&format!("{}/v1", silent.uri()))
                .stated_window(wait)
                .await,
            None
        );
    }

    #[test]
    fn the_setting_wins_then_the_server_then_the_default() {
        let stated = Some(StatedWindow {
            tokens: 4096,
            source: "llama.cpp's /props (n_ctx)",
        });
        assert_eq!(ContextWindow::resolve(16000, stated).tokens, 16000);
        assert_eq!(ContextWindow::resolve(0, stated).tokens, 4096);
        let default = ContextWindow::resolve(0, None);
        assert_eq!(default.tokens, DEFAULT_CONTEXT_WINDOW);
        assert!(default.describe().contains("llm.context_window_tokens"));
    }

    #[test]
    fn the_root_drops_a_trailing_v1() {
        let root = |u: &str| server_root(&Url::parse(u).expect("url")).to_string();
        assert_eq!(root("http://h:8080/v1"), "http://h:8080/");
        assert_eq!(root("http://h:8080/v1/"), "http://h:8080/");
        assert_eq!(root("http://h/proxy/v1"), "http://h/proxy/");
        assert_eq!(root("http://h/api"), "http://h/api/");
    }

    #[test]
    fn vllm_states_max_model_len_for_the_model_asked_about() {
        let text = json!({"data": [
            {"id": "other", "max_model_len": 32768},
            {"id": "qwen", "max_model_len": 8192}
        ]})
        .to_string();
        assert_eq!(from_models(&text, "qwen").map(|w| w.tokens), Some(8192));
        // A list without the model names no window unless it lists only one model.
        assert_eq!(from_models(&text, "missing"), None);
        let one = json!({"data": [{"id": "served", "max_model_len": 4096}]}).to_string();
        assert_eq!(from_models(&one, "alias").map(|w| w.tokens), Some(4096));
        // OpenAI's list has no such field.
        let openai = json!({"data": [{"id": "gpt-4o", "object": "model"}]}).to_string();
        assert_eq!(from_models(&openai, "gpt-4o"), None);
    }

    #[test]
    fn llama_cpp_states_the_slots_context() {
        let text =
            json!({"default_generation_settings": {"n_ctx": 2048}, "total_slots": 4}).to_string();
        assert_eq!(from_props(&text).map(|w| w.tokens), Some(2048));
        assert_eq!(from_props(&json!({"n_ctx": 0}).to_string()), None);
        assert_eq!(from_props("not json"), None);
    }

    #[test]
    fn ollama_states_num_ctx_or_its_default_within_the_trained_length() {
        let set = json!({"parameters": "stop \"<|eot|>\"\nnum_ctx 16384\n", "model_info": {"llama.context_length": 131072}}).to_string();
        assert_eq!(from_ollama_show(&set).map(|w| w.tokens), Some(16384));
        let unset =
            json!({"parameters": "temperature 0.7", "model_info": {"qwen2.context_length": 32768}})
                .to_string();
        assert_eq!(
            from_ollama_show(&unset).map(|w| w.tokens),
            Some(OLLAMA_DEFAULT_CONTEXT)
        );
        let small = json!({"model_info": {"gemma.context_length": 2048}}).to_string();
        assert_eq!(from_ollama_show(&small).map(|w| w.tokens), Some(2048));
        assert_eq!(
            from_ollama_show(&json!({"error": "not found"}).to_string()),
            None
        );
    }
}
