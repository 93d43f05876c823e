//! `http_request`: one HTTP(S) request.

mod address;

pub use address::{is_forbidden_ip, private_host_reason};

use serde::Deserialize;
use serde_json::{Map, Value, json};
use url::{Host, Url};

use crate::config::{HttpSettings, ToolRules};
use crate::core::risk::Assessment;
use crate::core::tools::{AssessContext, RiskAssessor, Tool};

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

/// The HTTP tool: the private-network switch and the operator's host rules.
#[derive(Debug, Clone)]
pub struct HttpTool {
    block_private_networks: bool,
    rules: HostRules,
}

impl HttpTool {
    pub fn new(settings: &HttpSettings, rules: &ToolRules) -> Self {
        Self {
            block_private_networks: settings.block_private_networks,
            rules: HostRules::new(&rules.allow, &rules.deny),
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
        if self.block_private_networks && !self.rules.allows(&host_text) {
            if let Some(reason) = private_host_reason(&host) {
                return Err(format!(
                    "{reason}; private networks are blocked (http.block_private_networks)"
                ));
            }
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
