//! One connection to one server: the transport (a started process, or streamable HTTP),
//! the MCP handshake, and the listing of its tools.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{
    ClientInitializeError, NotificationContext, RunningService, ServiceError, serve_client,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, Peer, RoleClient};
use secrecy::ExposeSecret;
use tokio::sync::{Notify, watch};

use super::process::{self, ServerProcess};
use super::redact::Redactor;
use super::settings::McpServerSettings;

/// A server's word that its tools changed, until the hub has listed them again.
///
/// The hub counts the lists it owes across its servers (`owed`), so a run about to start
/// can wait for a list a tool call just changed: the server sends its notification before
/// the call's answer, but the notification's handler runs on a task of its own.
pub struct ListChanges {
    owed: Arc<watch::Sender<usize>>,
    /// The server said so and the list has not been taken again since.
    stale: AtomicBool,
    heard: Notify,
}

impl ListChanges {
    pub fn new(owed: Arc<watch::Sender<usize>>) -> Self {
        Self {
            owed,
            stale: AtomicBool::new(false),
            heard: Notify::new(),
        }
    }

    fn hear(&self) {
        if !self.stale.swap(true, Ordering::SeqCst) {
            self.owed.send_modify(|n| *n += 1);
        }
        self.heard.notify_one();
    }

    /// Resolves when the server has said its tools changed.
    pub async fn heard(&self) {
        self.heard.notified().await;
    }

    /// Takes the change on: the list is being taken again. The returned guard pays the debt
    /// when dropped (after the new list is published, or when the connection ends); a
    /// change heard meanwhile is owed anew.
    pub fn take(&self) -> Relisting<'_> {
        Relisting {
            changes: self,
            owed: self.stale.swap(false, Ordering::SeqCst),
        }
    }
}

/// A list being taken again (see [`ListChanges::take`]).
pub struct Relisting<'a> {
    changes: &'a ListChanges,
    owed: bool,
}

impl Drop for Relisting<'_> {
    fn drop(&mut self) {
        if self.owed {
            self.changes.owed.send_modify(|n| *n = n.saturating_sub(1));
        }
    }
}

/// The client side of a connection: it hears that the server's tools changed.
pub struct HubClient {
    server: String,
    changes: Arc<ListChanges>,
}

impl ClientHandler for HubClient {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(target: "riskgate::mcp", server = %self.server, "the server says its tools changed");
        self.changes.hear();
    }

    fn get_info(&self) -> ClientConfig {
        // No sampling, roots or elicitation: a server cannot ask the bot's model or its
        // people anything. The last protocol version with the initialize handshake, which
        // servers of every age understand (they answer with the version they speak).
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("riskgate", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

/// A live connection.
pub struct Connection {
    pub service: RunningService<RoleClient, HubClient>,
    /// The server's process (stdio servers).
    pub process: Option<Arc<ServerProcess>>,
    /// The server's word that its tool list changed.
    pub changes: Arc<ListChanges>,
}

impl Connection {
    pub fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }
}

/// Connects to the server and completes the handshake; the changes the server announces
/// are counted in `owed` (see [`ListChanges`]). The error is a sentence for the operator,
/// secrets replaced.
pub async fn connect(
    settings: &McpServerSettings,
    redactor: &Redactor,
    http: &reqwest_mcp::Client,
    owed: &Arc<watch::Sender<usize>>,
) -> Result<Connection, String> {
    let changes = Arc::new(ListChanges::new(owed.clone()));
    let client = HubClient {
        server: settings.name.clone(),
        changes: changes.clone(),
    };
    match &settings.url {
        None => {
            let started = process::start(settings, redactor)?;
            let process = started.process;
            let served = serve_client(client, (started.stdout, started.stdin)).await;
            match served {
                Ok(service) => Ok(Connection {
                    service,
                    process: Some(process),
                    changes,
                }),
                Err(error) => {
                    // A server that exits at once (a bad argument, a missing module) is
                    // best explained by its exit status and its stderr.
                    let ended = tokio::time::timeout(Duration::from_millis(500), process.exited())
                        .await
                        .is_ok();
                    let said = if ended {
                        format!("the server {}", process.ended().await)
                    } else {
                        process.kill();
                        let tail = process.stderr_tail();
                        let mut said = format!("the handshake failed: {}", init_error(&error));
                        if !tail.is_empty() {
                            said.push_str("; its last words on stderr: ");
                            said.push_str(&tail);
                        }
                        said
                    };
                    Err(redactor.apply(&said))
                }
            }
        }
        Some(url) => {
            let token = settings.bearer_token()?;
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                .reinit_on_expired_session(true);
            // The stream of server messages is asked for again a few times after it
            // breaks; a server that stays away is then noticed and reconnected by the hub.
            let mut retry = ExponentialBackoff::default();
            retry.max_times = Some(3);
            retry.base_duration = Duration::from_millis(500);
            retry.max_delay = Some(Duration::from_secs(5));
            config.retry_config = Arc::new(retry);
            if let Some(token) = token {
                config = config.auth_header(token.expose_secret());
            }
            let transport = StreamableHttpClientTransport::with_client(http.clone(), config);
            match serve_client(client, transport).await {
                Ok(service) => Ok(Connection {
                    service,
                    process: None,
                    changes,
                }),
                Err(error) => {
                    let said = if error.is_authorization_required() {
                        if settings.bearer_token.is_some() || settings.bearer_token_file.is_some() {
                            "the server refused the bearer token (HTTP 401/403): check bearer_token or bearer_token_file".to_owned()
                        } else {
                            "the server requires authorization (HTTP 401/403): set bearer_token or bearer_token_file".to_owned()
                        }
                    } else {
                        format!("cannot connect: {}", init_error(&error))
                    };
                    Err(redactor.apply(&said))
                }
            }
        }
    }
}

/// The HTTP client every streamable HTTP server is reached with: TLS through rustls on
/// ring with the webpki roots, no proxy from the environment, no redirects (a redirect to
/// another host would carry the bearer token there).
pub fn http_client() -> Result<reqwest_mcp::Client, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    reqwest_mcp::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest_mcp::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(Duration::from_secs(10))
        .pool_max_idle_per_host(0)
        .build()
        .map_err(|e| format!("HTTP client setup: {e}"))
}

/// An initialisation error as a phrase, with its causes down to the root (a refused
/// connection, a name that does not resolve, a TLS failure).
fn init_error(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::TransportError { error, context } => {
            format!("{} (while trying to {context})", transport_error(error))
        }
        other => chain(other),
    }
}

/// A call's or listing's error as a phrase, with its causes.
pub fn service_error(error: &ServiceError) -> String {
    match error {
        ServiceError::TransportSend(error) => transport_error(error),
        other => chain(other),
    }
}

/// A transport's error with its causes; the HTTP client's own error (which the SDK wraps
/// without naming it as the source) down to its root.
fn transport_error(error: &rmcp::transport::DynamicTransportError) -> String {
    type HttpError =
        rmcp::transport::streamable_http_client::StreamableHttpError<reqwest_mcp::Error>;
    match error.error.downcast_ref::<HttpError>() {
        Some(HttpError::Client(client)) => chain(client),
        _ => chain(error.error.as_ref()),
    }
}

fn chain(error: &dyn std::error::Error) -> String {
    let mut said = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !said.contains(&text) {
            said.push_str(": ");
            said.push_str(&text);
        }
        source = cause.source();
    }
    said
}
