//! Keeps a server's secrets out of text the bot logs or reports: what the server wrote on
//! stderr, the errors of its transport, its own error messages. A secret is replaced
//! wherever it appears verbatim; an encoded form of it (base64, URL escapes) is not found.

use secrecy::{ExposeSecret, SecretString};
use url::Url;

use super::settings::{McpServerSettings, shown_url};
use crate::config::REDACTED;

/// Secrets shorter than this are not searched for: replacing every "1" or "on" would mangle
/// messages without hiding anything a reader could not guess.
const MIN_SECRET_CHARS: usize = 4;

/// One server's secrets, and what to show in their place.
#[derive(Clone, Default)]
pub struct Redactor {
    /// (secret, replacement), longest secret first so a secret inside another is not
    /// half replaced.
    pairs: Vec<(SecretString, String)>,
}

impl Redactor {
    /// The server's bearer token, environment values, and its URL's user, password and
    /// query (the whole URL is shown without them).
    pub fn for_server(settings: &McpServerSettings) -> Self {
        let mut pairs: Vec<(SecretString, String)> = settings
            .secrets()
            .into_iter()
            .map(|secret| (secret, REDACTED.to_owned()))
            .collect();
        if let Some(url) = &settings.url {
            pairs.push((SecretString::from(url.clone()), shown_url(url)));
            if let Ok(parsed) = Url::parse(url) {
                for part in [
                    parsed.password(),
                    parsed.query(),
                    Some(parsed.username()).filter(|u| !u.is_empty()),
                ]
                .into_iter()
                .flatten()
                {
                    pairs.push((SecretString::from(part.to_owned()), REDACTED.to_owned()));
                }
            }
        }
        pairs.retain(|(secret, _)| secret.expose_secret().chars().count() >= MIN_SECRET_CHARS);
        pairs.sort_by_key(|(secret, _)| std::cmp::Reverse(secret.expose_secret().len()));
        Self { pairs }
    }

    /// `text` with every secret replaced.
    pub fn apply(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (secret, replacement) in &self.pairs {
            let secret = secret.expose_secret();
            if out.contains(secret) {
                out = out.replace(secret, replacement);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn tokens_env_values_and_url_credentials_are_replaced() {
        let server = McpServerSettings {
            name: "s".to_owned(),
            url: Some("https://bob:hunter22@h.example/mcp?key=abcdef".to_owned()),
            bearer_token: Some(SecretString::from("tok-123456")),
            ..McpServerSettings::default()
        };
        let redactor = Redactor::for_server(&server);
        let said = redactor.apply(
            "GET https://bob:hunter22@h.example/mcp?key=abcdef failed; token tok-123456; pw hunter22; key=abcdef",
        );
        assert_eq!(
            said,
            "GET https://h.example/mcp failed; token <redacted>; pw <redacted>; <redacted>"
        );
        let stdio = McpServerSettings {
            name: "s".to_owned(),
            command: vec!["x".to_owned()],
            env: BTreeMap::from([
                ("TOKEN".to_owned(), SecretString::from("ghp_secretvalue")),
                ("DEBUG".to_owned(), SecretString::from("1")),
            ]),
            ..McpServerSettings::default()
        };
        assert_eq!(
            Redactor::for_server(&stdio).apply("auth ghp_secretvalue at step 1"),
            "auth <redacted> at step 1"
        );
    }
}
