//! `http_request`: one HTTP(S) request. The assessor judges the method the server will act
//! on (the request's own, and any method a method-override header, query parameter or form
//! field names), the scheme, and the host: cloud metadata endpoints always refused, private
//! networks while `http.block_private_networks` is on, and the operator's host rules (names,
//! addresses and CIDR networks). The executor checks again what only it can see: the
//! addresses a name resolves to, every redirect hop, and no redirect for anything but a plain
//! GET or HEAD.

mod address;
mod execute;
mod show;

pub use address::{
    METADATA_ADDRESSES, METADATA_NAMES, Network, is_forbidden_ip, metadata_host_reason,
    private_host_reason,
};

use serde::Deserialize;
use serde_json::{Map, Value, json};
use url::{Host, Url};

use std::time::Duration;

use crate::config::{HttpSettings, OutputSettings, Settings, ToolRules};
use crate::core::risk::Assessment;
use crate::core::tools::{
    Approval, AssessContext, BoxFuture, CallBrief, RiskAssessor, Tool, ToolError, ToolOutput,
    ToolSet,
};

pub const NAME: &str = "http_request";

/// Adds the HTTP tool as `[http]` and `[tools.http_request]` set it up.
pub fn register(tools: &mut ToolSet, settings: &Settings) {
    let rules = &settings.tools.http_request;
    tools.register_with(
        std::sync::Arc::new(HttpTool::new(&settings.http, rules, &settings.output)),
        rules.enabled,
    );
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpArgs {
    #[serde(default = "default_method")]
    method: String,
    url: String,
    #[serde(default)]
    headers: Option<Map<String, Value>>,
    #[serde(default)]
    body: Option<Value>,
}

fn default_method() -> String {
    "GET".to_owned()
}

/// The HTTP tool: the private-network switch, the operator's host rules, and the client.
#[derive(Debug, Clone)]
pub struct HttpTool {
    block_private_networks: bool,
    rules: HostRules,
    /// The connect-time checks, also run on URLs that are addresses.
    guard: execute::GuardedResolver,
    limits: execute::HttpLimits,
    /// Built once; `Err` says why it could not be (then every call fails with that reason).
    client: Result<reqwest::Client, String>,
}

impl HttpTool {
    pub fn new(settings: &HttpSettings, rules: &ToolRules, output: &OutputSettings) -> Self {
        let rules = HostRules::new(&rules.allow, &rules.deny);
        let resolver = execute::GuardedResolver {
            block_private_networks: settings.block_private_networks,
            rules: rules.clone(),
        };
        let client = execute::client(
            resolver.clone(),
            Duration::from_secs(settings.connect_timeout_secs),
        )
        .map_err(|e| format!("the HTTP client could not be built: {e}"));
        Self {
            block_private_networks: settings.block_private_networks,
            rules,
            guard: resolver,
            limits: execute::HttpLimits {
                timeout: Duration::from_secs(settings.timeout_secs),
                max_response_bytes: settings.max_response_bytes,
                max_redirects: settings.max_redirects,
                chat_budget: usize::try_from(output.chat_budget_chars).unwrap_or(usize::MAX),
            },
            client,
        }
    }
}

/// Operator host rules from `[tools.http_request]`: `allow` lists hosts that may be reached
/// even when they are on a private network; `deny` lists hosts nobody may reach. A name
/// entry matches the host and its subdomains; an address or CIDR entry (`10.1.2.3`,
/// `10.0.0.0/8`, `fd00::/8`) matches the addresses in it. The executor also refuses a host
/// that resolves to an address a deny rule names, or to an address of a denied name, so the
/// same machine cannot be reached by its address or another name.
#[derive(Debug, Clone, Default)]
pub struct HostRules {
    allow: Vec<String>,
    deny: Vec<String>,
    deny_networks: Vec<(Network, String)>,
}

impl HostRules {
    pub fn new(allow: &[String], deny: &[String]) -> Self {
        let clean = |entries: &[String]| -> Vec<String> {
            entries
                .iter()
                .map(|e| e.trim().trim_end_matches('.').to_ascii_lowercase())
                .filter(|e| !e.is_empty())
                .collect()
        };
        let deny = clean(deny);
        let deny_networks = deny
            .iter()
            .filter_map(|e| Network::parse(e).map(|n| (n, e.clone())))
            .collect();
        Self {
            allow: clean(allow),
            deny,
            deny_networks,
        }
    }

    fn find<'a>(entries: &'a [String], host: &str) -> Option<&'a str> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        entries
            .iter()
            .find(|entry| {
                host == **entry
                    || host
                        .strip_suffix(entry.as_str())
                        .is_some_and(|rest| rest.ends_with('.'))
            })
            .map(String::as_str)
    }

    pub fn allows(&self, host: &str) -> bool {
        Self::find(&self.allow, host).is_some()
    }

    /// The deny rule covering `host` (a name, or an address in any spelling).
    pub fn denies(&self, host: &str) -> Option<&str> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<std::net::IpAddr>()
            && let Some(entry) = self.denied_ip(ip)
        {
            return Some(entry);
        }
        Self::find(&self.deny, host)
    }

    /// The address or network deny rule covering `ip`.
    pub fn denied_ip(&self, ip: std::net::IpAddr) -> Option<&str> {
        self.deny_networks
            .iter()
            .find(|(net, _)| net.contains(ip))
            .map(|(_, entry)| entry.as_str())
    }

    /// The deny entries that are host names (resolved by the executor to compare addresses).
    pub fn denied_names(&self) -> impl Iterator<Item = &str> {
        self.deny
            .iter()
            .filter(|e| Network::parse(e).is_none())
            .map(String::as_str)
    }
}

/// Normalised names (lowercase, letters and digits only) of the headers, query parameters and
/// form fields through which web frameworks take the method to act on instead of the
/// request's own: `X-HTTP-Method-Override`, `X-HTTP-Method`, `X-Method-Override` (Google,
/// Microsoft, many REST stacks), `_method` (Rails, Laravel, Symfony, Express
/// method-override), `method`, `http_method`.
const OVERRIDE_NAMES: [&str; 7] = [
    "xhttpmethodoverride",
    "xhttpmethod",
    "xmethodoverride",
    "httpmethodoverride",
    "methodoverride",
    "method",
    "httpmethod",
];

fn is_override_name(name: &str) -> bool {
    let normal: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    OVERRIDE_NAMES.contains(&normal.as_str())
}

/// The methods a request names besides its own, each with where it was named. A header
/// counts with any value; a query parameter or form field only when its value is a
/// method-like word (`?method=flickr.photos.search` names an API call, not a method).
pub(crate) fn override_methods(
    headers: impl IntoIterator<Item = (String, String)>,
    url: &Url,
    body: Option<&Value>,
) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (name, value) in headers {
        let value = value.trim().to_ascii_uppercase();
        if is_override_name(&name) && !value.is_empty() {
            found.push((format!("the header {name}"), value));
        }
    }
    let word = |v: &str| {
        let v = v.trim();
        !v.is_empty() && v.len() <= 32 && v.chars().all(|c| c.is_ascii_alphabetic())
    };
    for (name, value) in url.query_pairs() {
        if is_override_name(&name) && word(&value) {
            found.push((
                format!("the query parameter {name}"),
                value.trim().to_ascii_uppercase(),
            ));
        }
    }
    let fields: Vec<(String, String)> = match body {
        Some(Value::Object(map)) => map
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
            .collect(),
        Some(Value::String(text)) => url::form_urlencoded::parse(text.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect(),
        _ => Vec::new(),
    };
    for (name, value) in fields {
        if is_override_name(&name) && word(&value) {
            found.push((
                format!("the body field {name}"),
                value.trim().to_ascii_uppercase(),
            ));
        }
    }
    found
}

/// The risk of an HTTP method, from the least to the most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum MethodRisk {
    Read,
    Write,
    Unknown,
    Destructive,
}

fn method_risk(method: &str) -> MethodRisk {
    match method {
        "GET" | "HEAD" | "OPTIONS" => MethodRisk::Read,
        "POST" => MethodRisk::Write,
        "PUT" | "PATCH" | "DELETE" => MethodRisk::Destructive,
        _ => MethodRisk::Unknown,
    }
}

impl HttpTool {
    /// Checks scheme and host: `Err` is a policy refusal.
    pub fn check_url(&self, raw: &str) -> Result<Url, String> {
        let url = Url::parse(raw.trim()).map_err(|e| format!("{raw:?} is not a valid URL: {e}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "only http:// and https:// URLs may be requested, not {}:",
                url.scheme()
            ));
        }
        let Some(host) = url.host() else {
            return Err(format!("{raw:?} has no host"));
        };
        let host_text = match &host {
            Host::Domain(d) => (*d).to_owned(),
            Host::Ipv4(ip) => ip.to_string(),
            Host::Ipv6(ip) => ip.to_string(),
        };
        if let Some(entry) = self.rules.denies(&host_text) {
            return Err(format!(
                "the host {host_text} is covered by the operator's deny rule {entry:?}"
            ));
        }
        // Whatever the switch and the allow list say: these hand out the machine's keys.
        if let Some(reason) = metadata_host_reason(&host) {
            return Err(format!(
                "{reason}; cloud metadata endpoints are never reachable (they hand out the machine's credentials)"
            ));
        }
        if self.block_private_networks
            && !self.rules.allows(&host_text)
            && let Some(reason) = private_host_reason(&host)
        {
            return Err(format!(
                "{reason}; private networks are blocked (http.block_private_networks)"
            ));
        }
        Ok(url)
    }
}

impl RiskAssessor for HttpTool {
    fn assess(&self, arguments: &Map<String, Value>, _ctx: &AssessContext) -> Assessment {
        let args: HttpArgs = match super::parse_arguments(NAME, arguments) {
            Ok(args) => args,
            Err(assessment) => return assessment,
        };
        let url = match self.check_url(&args.url) {
            Ok(url) => url,
            Err(reason) => return Assessment::Forbidden(reason),
        };
        let method = args.method.trim().to_ascii_uppercase();
        let has_body = args.body.as_ref().is_some_and(|b| !b.is_null());
        let headers = args.headers.as_ref().map_or(0, Map::len);
        let target = format!("{method} {url}");
        // The server acts on the most severe method the request names.
        let named = override_methods(
            header_pairs(args.headers.as_ref()),
            &url,
            args.body.as_ref(),
        );
        if let Some((via, named_method)) = named
            .iter()
            .filter(|(_, m)| *m != method)
            .max_by_key(|(_, m)| method_risk(m))
            && method_risk(named_method) > MethodRisk::Read
            && method_risk(named_method) >= method_risk(&method)
        {
            let told =
                format!("{target} tells the server, through {via}, to act as {named_method}");
            return match method_risk(named_method) {
                MethodRisk::Destructive => Assessment::Destructive(format!(
                    "{told}, which replaces, changes or deletes data"
                )),
                MethodRisk::Write => {
                    Assessment::Unknown(format!("{told}, which may create or change data"))
                }
                _ => Assessment::Unknown(format!(
                    "{told}, which is not a method riskgate knows to be safe"
                )),
            };
        }
        match method_risk(&method) {
            MethodRisk::Read if has_body => Assessment::Unknown(format!(
                "{target} carries a body, which a plain read does not need"
            )),
            MethodRisk::Read => Assessment::Safe(format!(
                "{target} only reads{}",
                if headers > 0 {
                    " (with custom headers)"
                } else {
                    ""
                }
            )),
            MethodRisk::Write => Assessment::Unknown(format!("{target} may create or change data")),
            MethodRisk::Destructive => {
                Assessment::Destructive(format!("{target} replaces, changes or deletes data"))
            }
            MethodRisk::Unknown => Assessment::Unknown(format!(
                "{:?} is not a method riskgate knows to be safe",
                args.method
            )),
        }
    }
}

/// The call's headers as name and text pairs.
fn header_pairs(headers: Option<&Map<String, Value>>) -> Vec<(String, String)> {
    headers
        .into_iter()
        .flatten()
        .map(|(name, value)| {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (name.clone(), text)
        })
        .collect()
}

impl Tool for HttpTool {
    fn name(&self) -> &str {
        NAME
    }

    fn whole_call(&self, arguments: &Map<String, Value>) -> String {
        show::whole_call(arguments)
    }

    fn brief_call(&self, arguments: &Map<String, Value>) -> CallBrief {
        show::brief_call(arguments)
    }

    /// Similar requests: the same method to the same scheme, host and port, under the same
    /// path prefix (the path up to its last `/`), whatever the query and body.
    fn similarity(&self, arguments: &Map<String, Value>) -> Option<crate::core::rules::Similarity> {
        let args: HttpArgs = super::parse_arguments(NAME, arguments).ok()?;
        let url = url::Url::parse(&args.url).ok()?;
        let method = args.method.trim().to_ascii_uppercase();
        let origin = url.origin().ascii_serialization();
        let path = url.path();
        let prefix = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        Some(crate::core::rules::Similarity::new(
            // Three ASCII dots: an ellipsis would be shown escaped, as a look-alike.
            format!("`{method}` {origin}{prefix}..."),
            &[
                ("method", method.clone()),
                ("origin", origin.clone()),
                ("path_prefix", prefix.to_owned()),
            ],
        ))
    }

    fn description(&self) -> &str {
        "Send one HTTP(S) request and return the status, headers and body. GET, HEAD and OPTIONS run at once; other methods wait for a person."
    }

    fn execute<'a>(
        &'a self,
        arguments: &'a Map<String, Value>,
        _approval: &'a Approval,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: HttpArgs = super::call_arguments(NAME, arguments)?;
            // The policy check again: the gate may have been configured differently, and
            // every redirect hop goes through the same check.
            let url = self.check_url(&args.url).map_err(ToolError::Refused)?;
            let client = self
                .client
                .as_ref()
                .map_err(|e| ToolError::Failed(e.clone()))?;
            let request = execute::Request::from_arguments(
                &args.method,
                url,
                args.headers.as_ref(),
                args.body.as_ref(),
            )?;
            execute::send(client, &self.guard, request, self.limits, |u| {
                self.check_url(u)
            })
            .await
        })
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "method": {
                    "type": "string",
                    "description": "GET (default), HEAD, OPTIONS, POST, PUT, PATCH or DELETE."
                },
                "url": {
                    "type": "string",
                    "description": "An http:// or https:// URL."
                },
                "headers": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "Request headers."
                },
                "body": {
                    "description": "The request body: a string, or JSON."
                }
            },
            "required": ["url"],
            "additionalProperties": false
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(block: bool, allow: &[&str], deny: &[&str]) -> HttpTool {
        let rules = ToolRules {
            enabled: true,
            allow: allow.iter().map(|s| s.to_string()).collect(),
            deny: deny.iter().map(|s| s.to_string()).collect(),
        };
        HttpTool::new(
            &HttpSettings {
                block_private_networks: block,
                ..HttpSettings::default()
            },
            &rules,
            &OutputSettings::default(),
        )
    }

    fn assess(tool: &HttpTool, method: &str, url: &str) -> Assessment {
        let Value::Object(args) = json!({"method": method, "url": url}) else {
            unreachable!()
        };
        tool.assess(&args, &AssessContext::default())
    }

    #[test]
    fn every_written_form_of_a_private_address_is_refused() {
        let t = tool(true, &[], &[]);
        for url in [
            "http://127.0.0.1/",
            "http://127.1/",
            "http://0x7f000001/",
            "http://0x7f.0.0.1/",
            "http://017700000001/",
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "http://[0:0:0:0:0:ffff:a9fe:a9fe]/",
            "http://[fd12::1]:8080/",
            "http://[fe80::1]/",
            "http://localhost:8080/",
            "http://LOCALHOST/",
            "http://localhost./",
            "http://api.localhost/",
            "http://user:pw@10.0.0.1/",
            "http://example.com@127.0.0.1/",
            "http://172.31.255.255/",
            "http://100.64.1.1/",
            "http://0/",
            "HTTP://169.254.169.254/latest/meta-data/",
        ] {
            assert!(
                matches!(assess(&t, "GET", url), Assessment::Forbidden(_)),
                "{url} should be refused"
            );
        }
    }

    #[test]
    fn other_schemes_and_garbage_are_refused() {
        let t = tool(true, &[], &[]);
        for url in [
            "file:///etc/passwd",
            "ftp://example.com/",
            "gopher://example.com/",
            "javascript:alert(1)",
            "data:text/plain,hi",
            "not a url",
            "",
            "http://",
            "//example.com/x",
        ] {
            assert!(
                matches!(assess(&t, "GET", url), Assessment::Forbidden(_)),
                "{url:?} should be refused"
            );
        }
    }

    #[test]
    fn methods_are_rated_by_what_they_do() {
        let t = tool(true, &[], &[]);
        let url = "https://example.com/api";
        for m in ["GET", "get", " Head ", "OPTIONS"] {
            assert!(matches!(assess(&t, m, url), Assessment::Safe(_)), "{m}");
        }
        assert!(matches!(assess(&t, "POST", url), Assessment::Unknown(_)));
        for m in ["PUT", "patch", "DELETE"] {
            assert!(
                matches!(assess(&t, m, url), Assessment::Destructive(_)),
                "{m}"
            );
        }
        for m in ["TRACE", "CONNECT", "PROPFIND", "GE T", ""] {
            assert!(
                matches!(assess(&t, m, url), Assessment::Unknown(_)),
                "{m:?}"
            );
        }
    }

    #[test]
    fn a_read_with_a_body_is_not_whitelisted() {
        let t = tool(true, &[], &[]);
        let Value::Object(args) =
            json!({"method": "GET", "url": "https://example.com/", "body": "x"})
        else {
            unreachable!()
        };
        assert!(matches!(
            t.assess(&args, &AssessContext::default()),
            Assessment::Unknown(_)
        ));
    }

    #[test]
    fn the_private_switch_and_host_rules_apply() {
        let open = tool(false, &[], &[]);
        assert!(matches!(
            assess(&open, "GET", "http://127.0.0.1:8080/"),
            Assessment::Safe(_)
        ));
        let allowed = tool(true, &["intranet.corp"], &["evil.example"]);
        assert!(matches!(
            assess(&allowed, "GET", "http://intranet.corp/"),
            Assessment::Safe(_)
        ));
        assert!(matches!(
            assess(&allowed, "GET", "https://api.evil.example/x"),
            Assessment::Forbidden(_)
        ));
        assert!(matches!(
            assess(&allowed, "GET", "https://notevil.example/x"),
            Assessment::Safe(_)
        ));
    }

    #[test]
    fn a_missing_url_is_not_safe() {
        let t = tool(true, &[], &[]);
        let Value::Object(args) = json!({"method": "GET"}) else {
            unreachable!()
        };
        assert!(matches!(
            t.assess(&args, &AssessContext::default()),
            Assessment::Unknown(_)
        ));
    }

    fn assess_args(tool: &HttpTool, args: Value) -> Assessment {
        let Value::Object(args) = args else {
            unreachable!()
        };
        tool.assess(&args, &AssessContext::default())
    }

    #[test]
    fn a_method_named_by_an_override_is_judged_as_that_method() {
        let t = tool(true, &[], &[]);
        let url = "https://example.com/api/items/1";
        for header in [
            "X-HTTP-Method-Override",
            "x-http-method-override",
            "X-HTTP-Method",
            "X-Method-Override",
            "X-Http-Method_Override",
        ] {
            for value in ["DELETE", " delete ", "Put", "PATCH"] {
                let got = assess_args(
                    &t,
                    json!({"method": "GET", "url": url, "headers": {header: value}}),
                );
                assert!(
                    matches!(got, Assessment::Destructive(_)),
                    "{header}: {value} -> {got:?}"
                );
            }
        }
        for url in [
            "https://example.com/api/items/1?_method=DELETE",
            "https://example.com/api/items/1?_method=delete",
            "https://example.com/api/items/1?x=1&method=PUT",
            "https://example.com/api/items/1?http_method=patch",
        ] {
            let got = assess_args(&t, json!({"method": "GET", "url": url}));
            assert!(
                matches!(got, Assessment::Destructive(_)),
                "{url} -> {got:?}"
            );
        }
        for body in [json!({"_method": "DELETE"}), json!("a=1&_method=delete")] {
            let got = assess_args(&t, json!({"method": "POST", "url": url, "body": body}));
            assert!(
                matches!(got, Assessment::Destructive(_)),
                "{body} -> {got:?}"
            );
        }
        // A method riskgate does not know, or POST, is not a read either.
        for value in ["PURGE", "POST", "GET, DELETE"] {
            let got = assess_args(
                &t,
                json!({"method": "GET", "url": url, "headers": {"X-HTTP-Method-Override": value}}),
            );
            assert!(matches!(got, Assessment::Unknown(_)), "{value} -> {got:?}");
        }
        // Harmless look-alikes stay reads.
        for args in [
            json!({"method": "GET", "url": "https://api.flickr.com/services/rest?method=flickr.photos.search"}),
            json!({"method": "GET", "url": url, "headers": {"X-HTTP-Method-Override": "GET"}}),
            json!({"method": "GET", "url": url, "headers": {"X-Methods": "DELETE"}}),
        ] {
            let got = assess_args(&t, args.clone());
            assert!(matches!(got, Assessment::Safe(_)), "{args} -> {got:?}");
        }
    }

    #[test]
    fn metadata_endpoints_are_refused_whatever_the_switch_and_the_allow_list_say() {
        let open = tool(false, &["metadata.google.internal", "169.254.169.254"], &[]);
        for url in [
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://METADATA.google.internal./",
            "http://metadata/computeMetadata/v1/",
            "http://metadata.goog/",
            "http://instance-data/latest/meta-data/",
            "http://instance-data.ec2.internal/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00:ec2::254]/latest/meta-data/",
            "http://[::ffff:a9fe:a9fe]/",
            "http://0xa9fea9fe/",
            "http://100.100.100.200/latest/meta-data/",
            "http://168.63.129.16/machine",
        ] {
            let got = assess(&open, "GET", url);
            assert!(
                matches!(&got, Assessment::Forbidden(r) if r.contains("metadata")),
                "{url} -> {got:?}"
            );
        }
    }

    #[test]
    fn deny_rules_by_address_cover_every_spelling_of_it() {
        let t = tool(false, &[], &["10.1.2.3", "192.168.0.0/16", "fd00::/8"]);
        for url in [
            "http://10.1.2.3/",
            "http://0x0a010203/",
            "http://[::ffff:10.1.2.3]/",
            "http://192.168.77.1:8080/",
            "http://[fd12::1]/",
        ] {
            let got = assess(&t, "GET", url);
            assert!(matches!(got, Assessment::Forbidden(_)), "{url} -> {got:?}");
        }
        assert!(matches!(
            assess(&t, "GET", "http://10.1.2.4/"),
            Assessment::Safe(_)
        ));
    }
}
