//! The in-memory store: the same contract as the sqlx store, for tests and benchmarks.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use crate::core::agent::{ChatMessage, trim_to_budget};
use crate::core::event::CallOutcome;
use crate::core::ports::{
    ApprovalRecord, ApprovalStatus, AuditRecord, ChannelSettings, Decided, EarlierRun, Store,
    StoreError, StoreErrorKind,
};
use crate::core::rules::ChannelRule;
use crate::core::tools::BoxFuture;

/// Everything in memory, behind one lock.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Run {
    instance: String,
    heartbeat_at: SystemTime,
    finished: bool,
}

#[derive(Debug, Default)]
struct Inner {
    history: HashMap<String, Vec<(SystemTime, ChatMessage)>>,
    settings: HashMap<String, ChannelSettings>,
    runs: HashMap<String, Run>,
    approvals: Vec<ApprovalRecord>,
    audit: Vec<AuditRecord>,
    /// Rules with who revoked them, if anyone did.
    rules: Vec<(ChannelRule, Option<String>)>,
    /// Who continues the run past each claimed approval.
    continued: HashMap<String, String>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> Result<T, StoreError> {
        let mut inner = self.inner.lock().map_err(|_| {
            StoreError::new(
                StoreErrorKind::Failed,
                "the in-memory store was poisoned by a panic",
            )
        })?;
        Ok(f(&mut inner))
    }

    fn ready<T: Send + 'static>(
        result: Result<T, StoreError>,
    ) -> BoxFuture<'static, Result<T, StoreError>> {
        Box::pin(std::future::ready(result))
    }
}

impl Store for MemoryStore {
    fn load_history<'a>(
        &'a self,
        channel: &'a str,
        budget: usize,
    ) -> BoxFuture<'a, Result<Vec<ChatMessage>, StoreError>> {
        Self::ready(self.with(|inner| {
            let messages: Vec<ChatMessage> = inner
                .history
                .get(channel)
                .map(|h| h.iter().map(|(_, m)| m.clone()).collect())
                .unwrap_or_default();
            trim_to_budget(&messages, budget)
        }))
    }

    fn append<'a>(
        &'a self,
        channel: &'a str,
        messages: &'a [ChatMessage],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let now = SystemTime::now();
        Self::ready(self.with(|inner| {
            inner
                .history
                .entry(channel.to_owned())
                .or_default()
                .extend(messages.iter().map(|m| (now, m.clone())));
        }))
    }

    fn clear<'a>(&'a self, channel: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Self::ready(self.with(|inner| {
            inner.history.remove(channel);
        }))
    }

    fn prune_history<'a>(&'a self, before: SystemTime) -> BoxFuture<'a, Result<u64, StoreError>> {
        Self::ready(self.with(|inner| {
            let mut removed = 0u64;
            for messages in inner.history.values_mut() {
                let len = messages.len();
                messages.retain(|(at, _)| *at >= before);
                removed += (len - messages.len()) as u64;
            }
            removed
        }))
    }

    fn channel_settings<'a>(
        &'a self,
        channel: &'a str,
    ) -> BoxFuture<'a, Result<Option<ChannelSettings>, StoreError>> {
        Self::ready(self.with(|inner| inner.settings.get(channel).cloned()))
    }

    fn set_channel_settings<'a>(
        &'a self,
        channel: &'a str,
        settings: &'a ChannelSettings,
        _changed_by: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Self::ready(self.with(|inner| {
            inner.settings.insert(channel.to_owned(), settings.clone());
        }))
    }

    fn start_run<'a>(
        &'a self,
        run_id: &'a str,
        _channel: &'a str,
        instance: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Self::ready(self.with(|inner| {
            inner.runs.insert(
                run_id.to_owned(),
                Run {
                    instance: instance.to_owned(),
                    heartbeat_at: SystemTime::now(),
                    finished: false,
                },
            );
        }))
    }

    fn heartbeat_run<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Self::ready(self.with(|inner| {
            if let Some(run) = inner.runs.get_mut(run_id) {
                run.heartbeat_at = SystemTime::now();
            }
        }))
    }

    fn finish_run<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Self::ready(self.with(|inner| {
            if let Some(run) = inner.runs.get_mut(run_id) {
                run.finished = true;
            }
        }))
    }

    fn create_approval<'a>(
        &'a self,
        approval: &'a ApprovalRecord,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Self::ready(
            self.with(|inner| {
                if inner.approvals.iter().any(|a| a.id == approval.id) {
                    Err(StoreError::new(
                        StoreErrorKind::Refused,
                        format!("approval {} exists already", approval.id),
                    ))
                } else {
                    inner.approvals.push(approval.clone());
                    Ok(())
                }
            })
            .and_then(|r| r),
        )
    }

    fn decide_approval_noted<'a>(
        &'a self,
        id: &'a str,
        status: ApprovalStatus,
        by: Option<&'a str>,
        note: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Decided, StoreError>> {
        Self::ready(self.with(|inner| {
            let Some(approval) = inner.approvals.iter_mut().find(|a| a.id == id) else {
                return Decided::Missing;
            };
            if approval.status != ApprovalStatus::Pending {
                return Decided::Lost(approval.clone());
            }
            approval.status = status;
            approval.decided_by = by.map(str::to_owned);
            approval.decided_at = Some(SystemTime::now());
            approval.note = note.map(str::to_owned);
            Decided::Won(approval.clone())
        }))
    }

    fn approval<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<ApprovalRecord>, StoreError>> {
        Self::ready(self.with(|inner| inner.approvals.iter().find(|a| a.id == id).cloned()))
    }

    fn claim_continuation<'a>(
        &'a self,
        id: &'a str,
        claimant: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Self::ready(self.with(|inner| {
            if !inner.approvals.iter().any(|a| a.id == id) {
                return false;
            }
            let holder = inner
                .continued
                .entry(id.to_owned())
                .or_insert_with(|| claimant.to_owned());
            holder == claimant
        }))
    }

    fn set_approval_message<'a>(
        &'a self,
        id: &'a str,
        message_ref: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Self::ready(self.with(|inner| {
            if let Some(approval) = inner.approvals.iter_mut().find(|a| a.id == id) {
                approval.message_ref = Some(message_ref.to_owned());
            }
        }))
    }

    fn settled_approvals<'a>(
        &'a self,
        ids: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        Self::ready(self.with(|inner| {
            inner
                .approvals
                .iter()
                .filter(|a| a.status != ApprovalStatus::Pending && ids.contains(&a.id))
                .cloned()
                .collect()
        }))
    }

    fn live_run_instance<'a>(
        &'a self,
        run_id: &'a str,
        stale_before: SystemTime,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        Self::ready(self.with(|inner| {
            inner
                .runs
                .get(run_id)
                .filter(|run| !run.finished && run.heartbeat_at >= stale_before)
                .map(|run| run.instance.clone())
        }))
    }

    fn pending_approvals<'a>(
        &'a self,
        channel: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        Self::ready(self.with(|inner| {
            inner
                .approvals
                .iter()
                .filter(|a| a.status == ApprovalStatus::Pending)
                .filter(|a| channel.is_none_or(|c| a.channel == c))
                .cloned()
                .collect()
        }))
    }

    fn expire_overdue<'a>(
        &'a self,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        Self::ready(self.with(|inner| {
            let mut expired = Vec::new();
            for approval in inner.approvals.iter_mut() {
                if approval.status == ApprovalStatus::Pending && approval.expires_at <= now {
                    approval.status = ApprovalStatus::Expired;
                    approval.decided_at = Some(now);
                    expired.push(approval.clone());
                }
            }
            expired
        }))
    }

    fn abandon_orphaned<'a>(
        &'a self,
        stale_before: SystemTime,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        Self::ready(self.with(|inner| {
            let mut abandoned = Vec::new();
            let Inner {
                runs, approvals, ..
            } = inner;
            for approval in approvals.iter_mut() {
                let orphaned = match runs.get(&approval.run_id) {
                    None => true,
                    Some(run) => run.finished || run.heartbeat_at < stale_before,
                };
                // One that can resume its run stays pending until answered or expired.
                let resumable =
                    approval.resume.is_some() && approval.expires_at > SystemTime::now();
                if approval.status == ApprovalStatus::Pending && orphaned && !resumable {
                    approval.status = ApprovalStatus::Abandoned;
                    approval.decided_at = Some(SystemTime::now());
                    abandoned.push(approval.clone());
                }
            }
            abandoned
        }))
    }

    fn record_audit<'a>(
        &'a self,
        record: &'a AuditRecord,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Self::ready(self.with(|inner| inner.audit.push(record.clone())))
    }

    fn recent_audit<'a>(
        &'a self,
        channel: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<AuditRecord>, StoreError>> {
        Self::ready(self.with(|inner| {
            inner
                .audit
                .iter()
                .rev()
                .filter(|r| r.channel == channel)
                .take(limit)
                .cloned()
                .collect()
        }))
    }

    fn earlier_run<'a>(
        &'a self,
        channel: &'a str,
        tool: &'a str,
        arguments_hash: &'a str,
    ) -> BoxFuture<'a, Result<Option<EarlierRun>, StoreError>> {
        Self::ready(self.with(|inner| {
            let confirmed = |id: &str| {
                inner.approvals.iter().find(|a| {
                    a.id == id
                        && a.channel == channel
                        && a.tool == tool
                        && a.arguments_hash == arguments_hash
                        && a.status == ApprovalStatus::Confirmed
                })
            };
            inner.audit.iter().rev().find_map(|record| {
                let ran = matches!(record.outcome, CallOutcome::Ok | CallOutcome::Error);
                let approval = confirmed(record.approval_id.as_deref().filter(|_| ran)?)?;
                Some(EarlierRun {
                    at: SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(record.at),
                    confirmed_by: approval.decided_by.clone(),
                    succeeded: record.outcome == CallOutcome::Ok,
                    result: record.result.clone(),
                })
            })
        }))
    }

    fn create_rule<'a>(&'a self, rule: &'a ChannelRule) -> BoxFuture<'a, Result<(), StoreError>> {
        Self::ready(
            self.with(|inner| {
                if inner.rules.iter().any(|(r, _)| r.id == rule.id) {
                    Err(StoreError::new(
                        StoreErrorKind::Refused,
                        format!("rule {} exists already", rule.id),
                    ))
                } else {
                    inner.rules.push((rule.clone(), None));
                    Ok(())
                }
            })
            .and_then(|r| r),
        )
    }

    fn channel_rules<'a>(
        &'a self,
        channel: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Vec<ChannelRule>, StoreError>> {
        Self::ready(self.with(|inner| {
            inner
                .rules
                .iter()
                .filter(|(r, revoked)| {
                    r.channel == channel && revoked.is_none() && now < r.expires_at
                })
                .map(|(r, _)| r.clone())
                .collect()
        }))
    }

    fn revoke_rule<'a>(
        &'a self,
        channel: &'a str,
        id: &'a str,
        by: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let now = SystemTime::now();
        Self::ready(self.with(|inner| {
            match inner.rules.iter_mut().find(|(r, revoked)| {
                r.id == id && r.channel == channel && revoked.is_none() && now < r.expires_at
            }) {
                Some((_, revoked)) => {
                    *revoked = Some(by.to_owned());
                    true
                }
                None => false,
            }
        }))
    }
}
