//! `http_request` executing against wiremock servers on loopback.

use std::sync::Arc;
use std::time::{Duration, Instant};

use riskgate::config::Settings;
use riskgate::core::tools::{Approval, Tool, ToolError, ToolOutput};
use serde_json::{Value, json};
use wiremock::matchers::{body_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn http_tool(configure: impl FnOnce(&mut Settings)) -> (tempfile::TempDir, Arc<dyn Tool>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.tools.workspace = dir.path().to_path_buf();
    configure(&mut settings);
    let gate = riskgate::tools::builtin_gate(&settings);
    let tool = gate
        .registry()
        .get("http_request")
        .expect("registered")
        .clone();
    (dir, tool)
}

/// Loopback servers are private: these tests either turn the block off or allow `localhost`.
fn open(s: &mut Settings) {
    s.http.block_private_networks = false;
}

async fn call(tool: &Arc<dyn Tool>, args: Value) -> Result<ToolOutput, ToolError> {
    let Value::Object(args) = args else {
        panic!("object")
    };
    tool.execute(&args, &Approval::Auto).await
}

#[tokio::test]
async fn json_bodies_are_pretty_printed() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/items"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"items": [1, 2], "ok": true})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let (_dir, tool) = http_tool(open);
    let out = call(&tool, json!({"url": format!("{}/items", server.uri())}))
        .await
        .expect("get");
    assert!(out.summary.starts_with("200 OK"), "{}", out.summary);
    assert!(out.summary.contains("application/json"), "{}", out.summary);
    assert!(out.text.contains("\"items\": [\n"), "{}", out.text);
    assert!(out.chat.contains("```json"), "{}", out.chat);
}

#[tokio::test]
async fn posts_send_json_and_headers() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api"))
        .and(header("content-type", "application/json"))
        .and(header("x-team", "data"))
        .and(body_json(json!({"name": "x"})))
        .respond_with(ResponseTemplate::new(201).set_body_string("created"))
        .expect(1)
        .mount(&server)
        .await;
    let (_dir, tool) = http_tool(open);
    let out = call(
        &tool,
        json!({"method": "post", "url": format!("{}/api", server.uri()),
               "headers": {"X-Team": "data"}, "body": {"name": "x"}}),
    )
    .await
    .expect("post");
    assert!(out.summary.starts_with("201 Created"), "{}", out.summary);
    let err = call(
        &tool,
        json!({"url": server.uri(), "headers": {"bad header": "x"}}),
    )
    .await
    .expect_err("bad header");
    assert!(matches!(err, ToolError::InvalidArguments(_)), "{err}");
}

#[tokio::test]
async fn a_redirect_from_an_allowed_host_to_loopback_is_refused() {
    let server = MockServer::start().await;
    let port = server.address().port();
    Mock::given(path("/start"))
        .respond_with(ResponseTemplate::new(302).insert_header(
            "location",
            format!("http://127.0.0.1:{port}/secret").as_str(),
        ))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(path("/secret"))
        .respond_with(ResponseTemplate::new(200).set_body_string("metadata"))
        .expect(0)
        .mount(&server)
        .await;
    // Private networks blocked; only the name `localhost` is allowed by the operator.
    let (_dir, tool) = http_tool(|s| s.tools.http_request.allow = vec!["localhost".into()]);
    let err = call(
        &tool,
        json!({"url": format!("http://localhost:{port}/start")}),
    )
    .await
    .expect_err("refused");
    assert!(matches!(err, ToolError::Refused(_)), "{err}");
    assert!(err.to_string().contains("127.0.0.1"), "{err}");
}

#[tokio::test]
async fn redirects_are_followed_within_limits_without_carrying_credentials_across_origins() {
    let a = MockServer::start().await;
    let b = MockServer::start().await;
    Mock::given(path("/one"))
        .respond_with(ResponseTemplate::new(301).insert_header("location", "/two"))
        .mount(&a)
        .await;
    Mock::given(path("/two"))
        .respond_with(
            ResponseTemplate::new(307)
                .insert_header("location", format!("{}/three", b.uri()).as_str()),
        )
        .mount(&a)
        .await;
    Mock::given(path("/three"))
        .respond_with(ResponseTemplate::new(200).set_body_string("landed"))
        .expect(1)
        .mount(&b)
        .await;
    Mock::given(path("/loop"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", "/loop"))
        .mount(&a)
        .await;
    let (_dir, tool) = http_tool(open);
    let out = call(
        &tool,
        json!({"url": format!("{}/one", a.uri()), "headers": {"Authorization": "Bearer t0ken"}}),
    )
    .await
    .expect("followed");
    assert!(out.text.contains("landed"), "{}", out.text);
    assert!(
        out.text.contains("(redirect: 301 Moved Permanently"),
        "{}",
        out.text
    );
    let received = b.received_requests().await.expect("recorded");
    assert!(
        received
            .iter()
            .all(|r| !r.headers.contains_key("authorization")),
        "the token must not reach another origin"
    );
    let err = call(&tool, json!({"url": format!("{}/loop", a.uri())}))
        .await
        .expect_err("loop");
    assert!(
        err.to_string().contains("redirected more than 5 times"),
        "{err}"
    );
}

#[tokio::test]
async fn a_50_mb_body_is_capped() {
    let server = MockServer::start().await;
    Mock::given(path("/big"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(vec![b'a'; 50 * 1024 * 1024]))
        .mount(&server)
        .await;
    let (_dir, tool) = http_tool(|s| {
        open(s);
        s.http.max_response_bytes = 1024 * 1024;
    });
    let out = call(&tool, json!({"url": format!("{}/big", server.uri())}))
        .await
        .expect("capped");
    assert!(
        out.summary.contains("body cut at 1.0 MiB"),
        "{}",
        out.summary
    );
    let attachment = out.attachment.expect("attached");
    assert_eq!(attachment.bytes.len(), 1024 * 1024);
    assert!(out.chat.chars().count() < 2000);
}

#[tokio::test]
async fn a_slow_server_times_out() {
    let server = MockServer::start().await;
    Mock::given(path("/slow"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(10)))
        .mount(&server)
        .await;
    let (_dir, tool) = http_tool(|s| {
        open(s);
        s.http.timeout_secs = 1;
    });
    let started = Instant::now();
    let err = call(&tool, json!({"url": format!("{}/slow", server.uri())}))
        .await
        .expect_err("timeout");
    assert!(matches!(err, ToolError::Timeout(_)), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn policy_is_checked_again_at_execution() {
    let (_dir, tool) = http_tool(|_| {});
    for url in [
        "http://127.0.0.1:9/",
        "http://localhost:9/",
        "file:///etc/passwd",
        "http://[::ffff:7f00:1]/",
    ] {
        let err = call(&tool, json!({"url": url})).await.expect_err("refused");
        assert!(matches!(err, ToolError::Refused(_)), "{url}: {err}");
    }
}

#[tokio::test]
async fn connection_failures_say_what_happened() {
    // A port nothing listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let (_dir, tool) = http_tool(open);
    let err = call(&tool, json!({"url": format!("http://127.0.0.1:{port}/")}))
        .await
        .expect_err("refused");
    assert!(
        err.to_string().contains("could not connect to 127.0.0.1"),
        "{err}"
    );
}

async fn confirmed(tool: &Arc<dyn Tool>, args: Value) -> Result<ToolOutput, ToolError> {
    let Value::Object(args) = args else {
        panic!("object")
    };
    tool.execute(
        &args,
        &Approval::Confirmed {
            by: "tester".into(),
        },
    )
    .await
}

/// The decision the real gate gives `args` in smart mode.
fn decide(configure: impl FnOnce(&mut Settings), args: Value) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.tools.workspace = dir.path().to_path_buf();
    configure(&mut settings);
    let gate = riskgate::tools::builtin_gate(&settings);
    let call = riskgate::core::tools::ToolCall {
        tool: "http_request".into(),
        arguments: args.as_object().cloned().expect("object"),
    };
    gate.check(
        &call,
        riskgate::core::risk::ChannelMode::Smart,
        &riskgate::core::tools::AssessContext::default(),
    )
    .decision
    .decision
    .as_str()
    .to_owned()
}

#[tokio::test]
async fn a_confirmed_delete_is_never_re_sent_by_a_redirect() {
    let first = MockServer::start().await;
    let second = MockServer::start().await;
    for status in [307, 308, 301, 302, 303] {
        first.reset().await;
        Mock::given(path("/items/1"))
            .respond_with(
                ResponseTemplate::new(status)
                    .insert_header("location", format!("{}/items/1", second.uri()).as_str()),
            )
            .expect(4)
            .mount(&first)
            .await;
        let (_dir, tool) = http_tool(open);
        for method in ["DELETE", "PUT", "POST", "PATCH"] {
            let out = confirmed(
                &tool,
                json!({"method": method, "url": format!("{}/items/1", first.uri()),
                       "body": {"id": 1}}),
            )
            .await
            .expect("the redirect is the result");
            assert!(
                out.summary.starts_with(&status.to_string()),
                "{method} {status}: {}",
                out.summary
            );
            assert!(
                out.text
                    .contains(&format!("location: {}/items/1", second.uri())),
                "the model sees where it was sent: {}",
                out.text
            );
            assert!(out.text.contains("not followed"), "{}", out.text);
        }
        first.verify().await;
    }
    let reached = second.received_requests().await.expect("recorded");
    assert!(
        reached.is_empty(),
        "the second server got {} requests",
        reached.len()
    );
}

#[tokio::test]
async fn a_get_that_overrides_its_method_is_not_auto_and_not_redirected() {
    for args in [
        json!({"url": "https://example.com/items/1", "headers": {"X-HTTP-Method-Override": "DELETE"}}),
        json!({"url": "https://example.com/items/1", "headers": {"x-method-override": " delete "}}),
        json!({"url": "https://example.com/items/1", "headers": {"X-HTTP-Method": "PUT"}}),
        json!({"url": "https://example.com/items/1?_method=DELETE"}),
        json!({"url": "https://example.com/items/1", "headers": {"X-HTTP-Method-Override": "DELETE"}, "risk_level": "low"}),
    ] {
        assert_eq!(decide(|_| {}, args.clone()), "confirm", "{args}");
    }
    // Confirmed, its redirect is not followed either: the override would go along.
    let first = MockServer::start().await;
    let second = MockServer::start().await;
    Mock::given(path("/items/1"))
        .respond_with(
            ResponseTemplate::new(307)
                .insert_header("location", format!("{}/items/1", second.uri()).as_str()),
        )
        .expect(1)
        .mount(&first)
        .await;
    let (_dir, tool) = http_tool(open);
    let out = confirmed(
        &tool,
        json!({"url": format!("{}/items/1", first.uri()),
               "headers": {"X-HTTP-Method-Override": "DELETE"}}),
    )
    .await
    .expect("the redirect is the result");
    assert!(out.summary.starts_with("307"), "{}", out.summary);
    // A plain GET redirected to a URL that names DELETE stops there too.
    Mock::given(path("/plain"))
        .respond_with(ResponseTemplate::new(302).insert_header(
            "location",
            format!("{}/items/1?_method=DELETE", second.uri()).as_str(),
        ))
        .mount(&first)
        .await;
    let out = call(&tool, json!({"url": format!("{}/plain", first.uri())}))
        .await
        .expect("the redirect is the result");
    assert!(out.summary.starts_with("302"), "{}", out.summary);
    assert!(
        second
            .received_requests()
            .await
            .expect("recorded")
            .is_empty(),
        "the second server was reached"
    );
}

#[tokio::test]
async fn a_deny_rule_by_name_also_blocks_the_same_host_by_address_and_the_reverse() {
    let server = MockServer::start().await;
    Mock::given(path("/x"))
        .respond_with(ResponseTemplate::new(200).set_body_string("reached"))
        .mount(&server)
        .await;
    let port = server.address().port();
    let by_name = |s: &mut Settings| {
        open(s);
        s.tools.http_request.deny = vec!["localhost".into()];
    };
    let by_address = |s: &mut Settings| {
        open(s);
        s.tools.http_request.deny = vec!["127.0.0.0/8".into()];
    };
    let (_a, name_denied) = http_tool(by_name);
    let (_b, address_denied) = http_tool(by_address);
    let cases = [
        (&name_denied, format!("http://127.0.0.1:{port}/x")),
        (&name_denied, format!("http://[::ffff:127.0.0.1]:{port}/x")),
        (&name_denied, format!("http://localhost:{port}/x")),
        (&address_denied, format!("http://localhost:{port}/x")),
        (&address_denied, format!("http://127.0.0.1:{port}/x")),
        (&address_denied, format!("http://2130706433:{port}/x")),
    ];
    for (tool, url) in &cases {
        let err = confirmed(tool, json!({"url": url}))
            .await
            .expect_err("refused");
        assert!(matches!(err, ToolError::Refused(_)), "{url}: {err}");
        assert!(err.to_string().contains("deny rule"), "{url}: {err}");
    }
    assert_eq!(
        decide(
            by_address,
            json!({"url": format!("http://127.0.0.1:{port}/x")})
        ),
        "deny"
    );
    assert!(
        server
            .received_requests()
            .await
            .expect("recorded")
            .is_empty(),
        "no request reached the denied host"
    );
    // The same server under no rule is reached: the refusals above were the rules.
    let (_c, open_tool) = http_tool(open);
    let out = call(
        &open_tool,
        json!({"url": format!("http://127.0.0.1:{port}/x")}),
    )
    .await
    .expect("reached");
    assert!(out.text.contains("reached"), "{}", out.text);
}

#[tokio::test]
async fn metadata_endpoints_are_denied_by_name_even_with_private_networks_open() {
    for url in [
        "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token",
        "http://metadata/computeMetadata/v1/",
        "http://metadata.google.internal./",
        "http://instance-data/latest/meta-data/iam/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/latest/meta-data/",
        "http://100.100.100.200/latest/meta-data/",
    ] {
        assert_eq!(decide(open, json!({"url": url})), "deny", "{url}");
        let (_dir, tool) = http_tool(|s| {
            open(s);
            s.tools.http_request.allow = vec!["metadata.google.internal".into()];
        });
        let err = confirmed(&tool, json!({"url": url}))
            .await
            .expect_err("refused");
        assert!(matches!(err, ToolError::Refused(_)), "{url}: {err}");
        assert!(err.to_string().contains("metadata"), "{url}: {err}");
    }
}

#[tokio::test]
async fn only_what_the_call_chose_is_sent() {
    let server = MockServer::start().await;
    Mock::given(path("/h"))
        .respond_with(ResponseTemplate::new(200))
        .expect(1)
        .mount(&server)
        .await;
    let (_dir, tool) = http_tool(open);
    call(
        &tool,
        json!({"url": format!("{}/h", server.uri()), "headers": {"X-Api-Key": "k3y-the-model-chose"}}),
    )
    .await
    .expect("sent");
    let received = server.received_requests().await.expect("recorded");
    let names: Vec<String> = received[0]
        .headers
        .keys()
        .map(|k| k.as_str().to_owned())
        .collect();
    for name in &names {
        assert!(
            ["host", "user-agent", "accept", "x-api-key"].contains(&name.as_str()),
            "a header the call did not choose was sent: {name} (all: {names:?})"
        );
    }
    assert_eq!(
        received[0].headers.get("x-api-key").map(|v| v.as_bytes()),
        Some(&b"k3y-the-model-chose"[..])
    );
}
