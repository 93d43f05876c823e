//! What an MCP tool costs riskgate: the gate's decision on a call (no I/O: the tool's
//! policy, trust and annotations), and a whole call to a stdio server and back, through the
//! hub and through the tool the agent runs, against the server's own time for the same
//! work.
//!
//! The server is the test fixture (`riskgate-mcp-fixture stdio`, rmcp's server side): its
//! `echo` handler returns its argument and does nothing else (its own time is a few
//! microseconds), so a call's time is what the protocol and riskgate add: JSON-RPC over the
//! pipes both ways, the hub's bookkeeping, and for the tool the result's framing and views.
//!
//! Run: `cargo bench --bench mcp -- [--calls N]` (default 2000 calls per variant).

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use riskgate::core::risk::{ChannelMode, GatePolicy};
use riskgate::core::tools::{
    Approval, AssessContext, RiskGate, Tool, ToolCall, ToolRegistry, ToolSet,
};
use riskgate::mcp::{McpHub, McpServerSettings, McpSettings, McpTool, ToolHints, ToolPolicy};
use riskgate::tools::mcp::McpToolAdapter;
use serde_json::{Map, Value, json};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn report(name: &str, mut times: Vec<Duration>) {
    times.sort_unstable();
    println!(
        "{name:<44} median {:>9.1} µs   p99 {:>9.1} µs",
        percentile(&times, 0.5).as_secs_f64() * 1e6,
        percentile(&times, 0.99).as_secs_f64() * 1e6
    );
}

fn tool(trust: bool, policy: Option<ToolPolicy>) -> McpTool {
    McpTool {
        server: "kb".to_owned(),
        name: "create_entities".to_owned(),
        offered_name: "mcp__kb__create_entities".to_owned(),
        title: None,
        description: "Creates entities.".to_owned(),
        input_schema: Arc::new(Map::new()),
        hints: ToolHints {
            read_only: Some(false),
            destructive: Some(false),
            ..ToolHints::default()
        },
        trust_annotations: trust,
        policy,
    }
}

fn decisions(rounds: usize) {
    let mut set = ToolSet::new();
    for (i, (trust, policy)) in [(false, None), (true, None), (false, Some(ToolPolicy::Auto))]
        .into_iter()
        .enumerate()
    {
        let mut t = tool(trust, policy);
        t.offered_name = format!("mcp__kb{i}__create_entities");
        set.register(Arc::new(McpToolAdapter::new(Weak::new(), t, 1_800)));
    }
    let gate = RiskGate::new(ToolRegistry::from(set), GatePolicy::default());
    let arguments = json!({"entities": [{"name": "Ada", "entityType": "person", "observations": ["x"]}], "risk_level": "low"});
    let calls: Vec<ToolCall> = (0..3)
        .map(|i| ToolCall {
            tool: format!("mcp__kb{i}__create_entities"),
            arguments: arguments.as_object().cloned().unwrap_or_default(),
        })
        .collect();
    let ctx = AssessContext::default();
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        for call in &calls {
            let started = Instant::now();
            std::hint::black_box(gate.check(call, ChannelMode::Smart, &ctx));
            times.push(started.elapsed());
        }
    }
    report("gate decision (untrusted, trusted, auto)", times);
}

fn main() {
    let mut calls = 2000_usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--calls" {
            calls = args.next().and_then(|n| n.parse().ok()).expect("--calls N");
        }
    }
    decisions(calls * 10);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let settings = McpSettings {
            servers: vec![McpServerSettings {
                name: "fx".to_owned(),
                command: vec![
                    env!("CARGO_BIN_EXE_riskgate-mcp-fixture").to_owned(),
                    "stdio".to_owned(),
                ],
                ..McpServerSettings::default()
            }],
            ..McpSettings::default()
        };
        let hub = Arc::new(McpHub::start(&settings).await);
        let tools = hub.tools();
        let echo = tools
            .find("fx", "echo")
            .expect("the fixture's echo")
            .clone();
        let adapter = McpToolAdapter::new(Arc::downgrade(&hub), echo, 1_800);
        let arguments: Map<String, Value> = json!({"text": "hello"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        // Warm up both paths.
        for _ in 0..50 {
            hub.call_tool("fx", "echo", arguments.clone())
                .await
                .expect("call");
        }
        let (mut through_hub, mut through_tool) = (Vec::new(), Vec::new());
        for _ in 0..calls {
            let started = Instant::now();
            hub.call_tool("fx", "echo", arguments.clone())
                .await
                .expect("call");
            through_hub.push(started.elapsed());
            let started = Instant::now();
            adapter
                .execute(&arguments, &Approval::Auto)
                .await
                .expect("call");
            through_tool.push(started.elapsed());
        }
        report("stdio call through the hub", through_hub);
        report(
            "stdio call through the tool (what a run pays)",
            through_tool,
        );
        hub.shutdown().await;
    });
}
