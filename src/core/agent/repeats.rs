//! A call a person decided, repeated within the run, is neither asked about nor run again.
//!
//! Small models repeat a call step after step: a confirmed `grep` came back for a click seven
//! times, and an `UPDATE` that had run came back for confirmation looking exactly as the
//! first time, so a person who clicked again would have run the write twice. The run keeps
//! what came of each call that waited for a person or that the gate denied (by tool and
//! canonical arguments, `risk_level` left out), and a repeat is answered with that, and a
//! note saying the call was already made and how to run it twice if that is really meant:
//! ask the person in words.
//!
//! A call that ran without a click runs again when repeated: it costs nobody a click, and
//! what it reads may have changed since. A cancelled call has its own answer
//! (`call::cancel_key`'s set, which a run resumed after a restart keeps too).

use serde_json::json;

use super::CallResult;
use crate::core::event::CallOutcome;
use crate::core::ports::AuditRecord;
use crate::core::risk::Decision;

/// What came of the calls of one run that a person decided or the gate denied.
#[derive(Debug, Default)]
pub(super) struct Repeats {
    settled: Vec<Settled>,
    /// Calls that went through the gate so far, for the note's "call N".
    calls: usize,
}

#[derive(Debug)]
struct Settled {
    /// `call::cancel_key`: the tool and its canonical arguments.
    key: String,
    /// The call's number in the run, from 1.
    number: usize,
    /// The result the model was given.
    text: String,
}

impl Repeats {
    /// The result the model gets for a repeat of `key`, if it is one; `None`: the call goes
    /// on as any other.
    pub(super) fn answer(&self, key: &str) -> Option<CallResult> {
        let earlier = self.settled.iter().rev().find(|s| s.key == key)?;
        let text = json!({
            "status": "already_done",
            "reason": format!(
                "This exact call was already made in this task (call {}), and was not asked about or run again; what came of it is in earlier_result. Use that. If you really mean to run it a second time, ask the person in words first and say why.",
                earlier.number
            ),
            "earlier_result": earlier.text,
        })
        .to_string();
        Some(CallResult {
            text,
            ran: false,
            outcome: CallOutcome::NotRun,
            output_bytes: 0,
            summary: None,
            ends_run: None,
        })
    }

    /// Records what came of a call that went through the gate (not of a repeat).
    pub(super) fn record(&mut self, key: String, audit: &AuditRecord, result: &CallResult) {
        self.calls += 1;
        if audit.decision == Decision::Auto || result.outcome == CallOutcome::Cancelled {
            return;
        }
        self.settled.push(Settled {
            key,
            number: self.calls,
            text: result.text.clone(),
        });
    }
}
