//! `http_request`: one HTTP(S) request.

mod address;
mod execute;

pub use address::{is_forbidden_ip, private_host_reason};

use serde::Deserialize;
use serde_json::{Map, Value, json};
use url::{Host, Url};

use std::time::Duration;

use crate::config::{HttpSettings, OutputSettings, ToolRules};
use crate::core::risk::Assessment;
use crate::core::tools::{
    Approval, AssessContext, BoxFuture, RiskAssessor, Tool, ToolError, ToolOutput,
};

pub const NAME: &str = "http_request";

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
        let client = execute::client(resolver, Duration::from_secs(settings.connect_timeout_secs))
            .map_err(|e| format!("the HTTP client could not be built: {e}"));
        Self {
            block_private_networks: settings.block_private_networks,
            rules,
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
/// even when they are on a private network; `deny` lists hosts nobody may reach. An entry
/// matches the host and its subdomains.
#[derive(Debug, Clone, Default)]
pub struct HostRules {
    allow: Vec<String>,
    deny: Vec<String>,
}

impl HostRules {
    pub fn new(allow: &[String], deny: &[String]) -> Self {
        let clean = |entries: &[String]| {
            entries
                .iter()
                .map(|e| e.trim().trim_end_matches('.').to_ascii_lowercase())
                .filter(|e| !e.is_empty())
                .collect()
        };
        Self {
            allow: clean(allow),
            deny: clean(deny),
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

    pub fn denies(&self, host: &str) -> Option<&str> {
        Self::find(&self.deny, host)
    }
}

/// The risk of an HTTP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MethodRisk {
    Read,
    Write,
    Destructive,
    Unknown,
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

impl Tool for HttpTool {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
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
            execute::send(client, request, self.limits, |u| self.check_url(u)).await
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
}
