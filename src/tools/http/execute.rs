//! Sending the request: names resolved through a guard that refuses private addresses (so
//! DNS rebinding and names pointing at 127.0.0.1 fail at connect time), cloud metadata
//! addresses, and the addresses an operator's deny rule names (directly, or as the addresses
//! of a denied name), also for a URL that is an address; redirects followed by hand with
//! every hop checked like the first URL, and only for a plain GET or HEAD (any other request
//! is sent once, to the URL that was checked, and its redirect is the result); the body read
//! up to a cap; and no credentials, headers or proxies taken from the bot's own environment.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use serde_json::{Map, Value};
use url::Url;

use super::HostRules;
use super::address::is_forbidden_ip;
use crate::core::tools::{Attachment, ToolError, ToolOutput, format_bytes, format_duration};
use crate::tools::render::{code_block, cut, hex_preview, looks_like_text};

/// Resolves names with the system resolver and refuses any name that resolves to a private
/// address while private networks are blocked (unless the operator allowed the host).
#[derive(Debug, Clone)]
pub(super) struct GuardedResolver {
    pub block_private_networks: bool,
    pub rules: HostRules,
}

/// Marks a refusal by the resolver, so it can be told apart from other connect errors.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct PrivateAddress(String);

impl GuardedResolver {
    /// Checks the addresses `host` leads to: metadata addresses always, the operator's deny
    /// rules (addresses, networks, and the addresses denied names resolve to now), and
    /// private addresses while they are blocked. `Err` is the refusal.
    pub(super) async fn check_addresses(
        &self,
        host: &str,
        addrs: &[std::net::IpAddr],
    ) -> Result<(), String> {
        for ip in addrs {
            if let Some(reason) = super::address::metadata_ip_reason(*ip) {
                return Err(format!(
                    "{host} leads to {ip}: {reason}; cloud metadata endpoints are never reachable"
                ));
            }
            if let Some(entry) = self.rules.denied_ip(*ip) {
                return Err(format!(
                    "{host} leads to {ip}, which the operator's deny rule {entry:?} covers"
                ));
            }
        }
        for name in self.rules.denied_names() {
            // A denied name that does not resolve has no address to compare.
            let Ok(denied) = tokio::net::lookup_host((name, 0)).await else {
                continue;
            };
            let denied: Vec<std::net::IpAddr> =
                denied.map(|a| super::address::canonical(a.ip())).collect();
            if let Some(ip) = addrs
                .iter()
                .find(|ip| denied.contains(&super::address::canonical(**ip)))
            {
                return Err(format!(
                    "{host} leads to {ip}, an address of {name}, which the operator's deny rule {name:?} covers"
                ));
            }
        }
        if self.block_private_networks
            && !self.rules.allows(host)
            && let Some(bad) = addrs.iter().find(|ip| is_forbidden_ip(**ip))
        {
            return Err(format!(
                "{host} resolves to {bad}, a private address; private networks are blocked (http.block_private_networks)"
            ));
        }
        Ok(())
    }

    /// The same check for a URL whose host is an address (the resolver never sees those).
    pub(super) async fn check_literal(&self, url: &Url) -> Result<(), ToolError> {
        let ip = match url.host() {
            Some(url::Host::Ipv4(ip)) => std::net::IpAddr::V4(ip),
            Some(url::Host::Ipv6(ip)) => std::net::IpAddr::V6(ip),
            _ => return Ok(()),
        };
        self.check_addresses(&ip.to_string(), &[ip])
            .await
            .map_err(ToolError::Refused)
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = self.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let ips: Vec<std::net::IpAddr> = addrs.iter().map(SocketAddr::ip).collect();
            if let Err(reason) = guard.check_addresses(&host, &ips).await {
                return Err(
                    Box::new(PrivateAddress(reason)) as Box<dyn std::error::Error + Send + Sync>
                );
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// Limits and switches of the executor.
#[derive(Debug, Clone, Copy)]
pub(super) struct HttpLimits {
    pub timeout: Duration,
    pub max_response_bytes: u64,
    pub max_redirects: u64,
    pub chat_budget: usize,
}

/// One request as the call describes it.
pub(super) struct Request {
    pub method: Method,
    pub url: Url,
    pub headers: HeaderMap,
    pub body: Option<Vec<u8>>,
}

impl Request {
    /// Builds a request from the call's arguments; the URL has passed the policy check.
    pub fn from_arguments(
        method: &str,
        url: Url,
        headers: Option<&Map<String, Value>>,
        body: Option<&Value>,
    ) -> Result<Self, ToolError> {
        let method =
            Method::from_bytes(method.trim().to_ascii_uppercase().as_bytes()).map_err(|_| {
                ToolError::InvalidArguments(format!("{method:?} is not an HTTP method"))
            })?;
        let mut map = HeaderMap::new();
        for (name, value) in headers.into_iter().flatten() {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                ToolError::InvalidArguments(format!("{name:?} is not a valid header name"))
            })?;
            let value = HeaderValue::from_str(&text).map_err(|_| {
                ToolError::InvalidArguments(format!("the value of header {name} is not valid"))
            })?;
            map.append(name, value);
        }
        let body = match body {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone().into_bytes()),
            Some(json) => {
                if !map.contains_key(reqwest::header::CONTENT_TYPE) {
                    map.insert(
                        reqwest::header::CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    );
                }
                Some(json.to_string().into_bytes())
            }
        };
        Ok(Self {
            method,
            url,
            headers: map,
            body,
        })
    }
}

/// Whether a redirect of `request` to `next` may be followed: only a GET or HEAD that names
/// no other method (in an override header, or in the next URL's query) is sent again. Any
/// other request was checked, and confirmed, for the one URL it names.
fn may_follow(request: &Request, next: &Url) -> bool {
    if !matches!(request.method, Method::GET | Method::HEAD) {
        return false;
    }
    let headers = request.headers.iter().map(|(name, value)| {
        (
            name.as_str().to_owned(),
            String::from_utf8_lossy(value.as_bytes()).into_owned(),
        )
    });
    super::override_methods(headers, next, None)
        .iter()
        .all(|(_, m)| matches!(m.as_str(), "GET" | "HEAD"))
}

/// Sends the request and follows redirects, checking each hop with `check_url` and `guard`.
pub(super) async fn send(
    client: &reqwest::Client,
    guard: &GuardedResolver,
    mut request: Request,
    limits: HttpLimits,
    check_url: impl Fn(&str) -> Result<Url, String>,
) -> Result<ToolOutput, ToolError> {
    let started = std::time::Instant::now();
    let first = request.url.clone();
    let mut hops = Vec::new();
    let deadline = tokio::time::Instant::now() + limits.timeout;
    loop {
        guard.check_literal(&request.url).await?;
        let mut builder = client
            .request(request.method.clone(), request.url.clone())
            .headers(request.headers.clone());
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        let response = tokio::time::timeout_at(deadline, builder.send())
            .await
            .map_err(|_| ToolError::Timeout(limits.timeout))?
            .map_err(|e| send_error(&request.url, e, limits.timeout))?;
        let status = response.status();
        if status.is_redirection()
            && let Some(location) = response.headers().get(reqwest::header::LOCATION)
        {
            if hops.len() as u64 >= limits.max_redirects {
                return Err(ToolError::Failed(format!(
                    "{first} redirected more than {} times (http.max_redirects)",
                    limits.max_redirects
                )));
            }
            let location = location.to_str().map_err(|_| {
                ToolError::Failed("a redirect Location header is not valid text".to_owned())
            })?;
            let next = request.url.join(location).map_err(|e| {
                ToolError::Failed(format!(
                    "the redirect to {location:?} is not a valid URL: {e}"
                ))
            })?;
            if !may_follow(&request, &next) {
                let body = tokio::time::timeout_at(
                    deadline,
                    read_capped(response, limits.max_response_bytes),
                )
                .await
                .map_err(|_| ToolError::Timeout(limits.timeout))??;
                hops.push(format!(
                    "{status} -> {next} not followed: a {} is only sent to the URL that was checked; call again with that URL if it should go there",
                    request.method
                ));
                return Ok(render(
                    &request,
                    status,
                    &body,
                    &hops,
                    started.elapsed(),
                    limits,
                ));
            }
            let next = check_url(next.as_str()).map_err(|reason| {
                ToolError::Refused(format!("{} redirected to {next}: {reason}", request.url))
            })?;
            // Credentials never follow a redirect to another origin.
            if next.origin() != request.url.origin() {
                request.headers.remove(reqwest::header::AUTHORIZATION);
                request.headers.remove(reqwest::header::COOKIE);
            }
            // As browsers do: after a 303 the request continues as a GET (only a GET or HEAD
            // gets here, see `may_follow`).
            if status == StatusCode::SEE_OTHER {
                request.method = Method::GET;
                request.body = None;
                request.headers.remove(reqwest::header::CONTENT_TYPE);
            }
            hops.push(format!("{status} -> {next}"));
            request.url = next;
            continue;
        }
        let body =
            tokio::time::timeout_at(deadline, read_capped(response, limits.max_response_bytes))
                .await
                .map_err(|_| ToolError::Timeout(limits.timeout))??;
        return Ok(render(
            &request,
            status,
            &body,
            &hops,
            started.elapsed(),
            limits,
        ));
    }
}

/// What is kept of a response.
struct Body {
    headers: HeaderMap,
    bytes: Vec<u8>,
    /// Whether the body went on past the cap.
    truncated: bool,
}

async fn read_capped(mut response: reqwest::Response, cap: u64) -> Result<Body, ToolError> {
    let headers = response.headers().clone();
    let mut bytes = Vec::new();
    let mut truncated = false;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| ToolError::Failed(format!("reading the response failed: {e}")))?
    {
        let room = cap.saturating_sub(bytes.len() as u64) as usize;
        if chunk.len() > room {
            bytes.extend_from_slice(&chunk[..room]);
            truncated = true;
            // Dropping the response closes the connection: the rest is never downloaded.
            break;
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Body {
        headers,
        bytes,
        truncated,
    })
}

fn send_error(url: &Url, e: reqwest::Error, timeout: Duration) -> ToolError {
    if e.is_timeout() {
        return ToolError::Timeout(timeout);
    }
    // A refusal by the guarded resolver sits somewhere in the source chain.
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(err) = source {
        if let Some(private) = err.downcast_ref::<PrivateAddress>() {
            return ToolError::Refused(private.0.clone());
        }
        source = err.source();
    }
    let host = url.host_str().unwrap_or("the server");
    if e.is_connect() {
        ToolError::Failed(format!(
            "could not connect to {host}: {}",
            crate::core::tools::error_chain(&e)
        ))
    } else {
        ToolError::Failed(format!(
            "the request to {url} failed: {}",
            crate::core::tools::error_chain(&e)
        ))
    }
}

fn render(
    request: &Request,
    status: StatusCode,
    body: &Body,
    hops: &[String],
    elapsed: Duration,
    limits: HttpLimits,
) -> ToolOutput {
    let content_type = body
        .headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let size = format_bytes(body.bytes.len() as u64);
    let mut summary = format!("{status}, {size}");
    if !content_type.is_empty() {
        summary.push_str(&format!(", {content_type}"));
    }
    if body.truncated {
        summary.push_str(&format!(
            "; body cut at {} (http.max_response_bytes)",
            format_bytes(limits.max_response_bytes)
        ));
    }
    let is_text = looks_like_text(&body.bytes);
    let (shown, language) = if !is_text {
        (
            format!(
                "binary body of {size}; it starts with: {}",
                hex_preview(&body.bytes, 32)
            ),
            "",
        )
    } else {
        let text = String::from_utf8_lossy(&body.bytes).into_owned();
        let pretty = (!body.truncated)
            .then(|| serde_json::from_str::<Value>(&text).ok())
            .flatten()
            .and_then(|json| serde_json::to_string_pretty(&json).ok());
        match pretty {
            Some(pretty) => (pretty, "json"),
            None => (text, ""),
        }
    };
    let mut head = format!("{} {}\nHTTP {status}", request.method, request.url);
    for hop in hops {
        head.push_str(&format!("\n(redirect: {hop})"));
    }
    for name in [
        reqwest::header::CONTENT_TYPE,
        reqwest::header::CONTENT_LENGTH,
        reqwest::header::LOCATION,
    ] {
        if let Some(value) = body.headers.get(&name).and_then(|v| v.to_str().ok()) {
            head.push_str(&format!("\n{name}: {value}"));
        }
    }
    let text = format!("{head}\n\n{shown}");
    let (chat_body, was_cut) = cut(&shown, limits.chat_budget);
    let mut chat = format!(
        "**{} {}** -> {status} ({size}, {})",
        request.method,
        request.url,
        format_duration(elapsed)
    );
    if !chat_body.is_empty() {
        chat.push('\n');
        chat.push_str(&code_block(language, &chat_body));
    }
    if was_cut {
        chat.push_str("\n(full body attached)");
    }
    let extension = match (language, is_text) {
        ("json", _) => "json",
        (_, true) => "txt",
        (_, false) => "bin",
    };
    ToolOutput {
        summary,
        text,
        chat,
        attachment: (was_cut || body.truncated || !is_text).then(|| Attachment {
            filename: format!("response.{extension}"),
            bytes: body.bytes.clone(),
        }),
    }
}

/// Builds the client: no proxies, no redirects (followed by hand), the guarded resolver.
pub(super) fn client(
    resolver: GuardedResolver,
    connect_timeout: Duration,
) -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(connect_timeout)
        .dns_resolver(Arc::new(resolver))
        .user_agent(concat!("riskgate/", env!("CARGO_PKG_VERSION")))
        .build()
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    #[tokio::test]
    async fn names_resolving_to_private_addresses_are_refused() {
        let guard = GuardedResolver {
            block_private_networks: true,
            rules: HostRules::default(),
        };
        let name = Name::from_str("localhost").expect("name");
        let error = match guard.resolve(name).await {
            Ok(_) => panic!("localhost resolves to loopback and must be refused"),
            Err(e) => e,
        };
        assert!(error.to_string().contains("private address"), "{error}");

        let allowed = GuardedResolver {
            block_private_networks: true,
            rules: HostRules::new(&["localhost".to_owned()], &[]),
        };
        let name = Name::from_str("localhost").expect("name");
        assert!(allowed.resolve(name).await.is_ok());
        let open = GuardedResolver {
            block_private_networks: false,
            rules: HostRules::default(),
        };
        let name = Name::from_str("localhost").expect("name");
        assert!(open.resolve(name).await.is_ok());
    }
}
