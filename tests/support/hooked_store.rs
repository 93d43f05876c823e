//! A store that delays or fails chosen operations before passing them to a real one, so a
//! test can make the state database slow or broken at exact points (under paused tokio time
//! a delay costs nothing). It also times every operation (the load bench reads that).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use riskgate::core::agent::ChatMessage;
use riskgate::core::ports::{
    ApprovalRecord, ApprovalStatus, AuditRecord, ChannelSettings, Decided, Store, StoreError,
};
use riskgate::core::rules::ChannelRule;
use riskgate::core::tools::BoxFuture;

/// What happens to an operation before it reaches the inner store.
#[derive(Debug, Clone)]
pub enum Hook {
    /// Waits, then runs the operation.
    Delay(Duration),
    /// Runs the operation, then waits before answering (an answer that arrives late).
    DelayAnswer(Duration),
    Fail(String),
}

pub struct HookedStore {
    pub inner: Arc<dyn Store>,
    hooks: Mutex<HashMap<&'static str, Hook>>,
    /// Operations in the order they completed, by name.
    pub completed: Mutex<Vec<&'static str>>,
    /// How long each operation took, by name.
    pub took: Mutex<HashMap<&'static str, Vec<Duration>>>,
}

impl HookedStore {
    pub fn new(inner: Arc<dyn Store>) -> Arc<Self> {
        Arc::new(Self {
            inner,
            hooks: Mutex::default(),
            completed: Mutex::default(),
            took: Mutex::default(),
        })
    }

    /// Every later call of `operation` (a `Store` method's name) meets `hook`.
    pub fn hook(&self, operation: &'static str, hook: Hook) {
        self.hooks.lock().expect("hooks").insert(operation, hook);
    }

    pub fn completed(&self) -> Vec<&'static str> {
        self.completed.lock().expect("completed").clone()
    }

    /// Applies the hook, then (unless it fails) starts `operation` on the inner store: a
    /// failed operation never reaches it.
    fn around<'a, T: Send + 'a>(
        &'a self,
        name: &'static str,
        operation: impl FnOnce() -> BoxFuture<'a, Result<T, StoreError>> + Send + 'a,
    ) -> BoxFuture<'a, Result<T, StoreError>> {
        let hook = self.hooks.lock().expect("hooks").get(name).cloned();
        Box::pin(async move {
            let started = tokio::time::Instant::now();
            match hook {
                Some(Hook::Delay(delay)) => tokio::time::sleep(delay).await,
                Some(Hook::Fail(message)) => return Err(StoreError(message)),
                Some(Hook::DelayAnswer(_)) | None => {}
            }
            let result = operation().await;
            if let Some(Hook::DelayAnswer(delay)) = hook {
                tokio::time::sleep(delay).await;
            }
            self.completed.lock().expect("completed").push(name);
            self.took
                .lock()
                .expect("took")
                .entry(name)
                .or_default()
                .push(started.elapsed());
            result
        })
    }
}

impl Store for HookedStore {
    fn load_history<'a>(
        &'a self,
        channel: &'a str,
        budget: usize,
    ) -> BoxFuture<'a, Result<Vec<ChatMessage>, StoreError>> {
        self.around("load_history", move || {
            self.inner.load_history(channel, budget)
        })
    }
    fn append<'a>(
        &'a self,
        channel: &'a str,
        messages: &'a [ChatMessage],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.around("append", move || self.inner.append(channel, messages))
    }
    fn clear<'a>(&'a self, channel: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.around("clear", move || self.inner.clear(channel))
    }
    fn prune_history<'a>(&'a self, before: SystemTime) -> BoxFuture<'a, Result<u64, StoreError>> {
        self.around("prune_history", move || self.inner.prune_history(before))
    }
    fn channel_settings<'a>(
        &'a self,
        channel: &'a str,
    ) -> BoxFuture<'a, Result<Option<ChannelSettings>, StoreError>> {
        self.around("channel_settings", move || {
            self.inner.channel_settings(channel)
        })
    }
    fn set_channel_settings<'a>(
        &'a self,
        channel: &'a str,
        settings: &'a ChannelSettings,
        changed_by: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.around("set_channel_settings", move || {
            self.inner
                .set_channel_settings(channel, settings, changed_by)
        })
    }
    fn start_run<'a>(
        &'a self,
        run_id: &'a str,
        channel: &'a str,
        instance: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.around("start_run", move || {
            self.inner.start_run(run_id, channel, instance)
        })
    }
    fn heartbeat_run<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.around("heartbeat_run", move || self.inner.heartbeat_run(run_id))
    }
    fn finish_run<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.around("finish_run", move || self.inner.finish_run(run_id))
    }
    fn create_approval<'a>(
        &'a self,
        approval: &'a ApprovalRecord,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.around("create_approval", move || {
            self.inner.create_approval(approval)
        })
    }
    fn decide_approval_noted<'a>(
        &'a self,
        id: &'a str,
        status: ApprovalStatus,
        by: Option<&'a str>,
        note: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Decided, StoreError>> {
        self.around("decide_approval", move || {
            self.inner.decide_approval_noted(id, status, by, note)
        })
    }
    fn approval<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<ApprovalRecord>, StoreError>> {
        self.around("approval", move || self.inner.approval(id))
    }
    fn set_approval_message<'a>(
        &'a self,
        id: &'a str,
        message_ref: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.around("set_approval_message", move || {
            self.inner.set_approval_message(id, message_ref)
        })
    }
    fn pending_approvals<'a>(
        &'a self,
        channel: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        self.around("pending_approvals", move || {
            self.inner.pending_approvals(channel)
        })
    }
    fn expire_overdue<'a>(
        &'a self,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        self.around("expire_overdue", move || self.inner.expire_overdue(now))
    }
    fn abandon_orphaned<'a>(
        &'a self,
        stale_before: SystemTime,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        self.around("abandon_orphaned", move || {
            self.inner.abandon_orphaned(stale_before)
        })
    }
    fn record_audit<'a>(
        &'a self,
        record: &'a AuditRecord,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.around("record_audit", move || self.inner.record_audit(record))
    }
    fn recent_audit<'a>(
        &'a self,
        channel: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<AuditRecord>, StoreError>> {
        self.around("recent_audit", move || {
            self.inner.recent_audit(channel, limit)
        })
    }
    fn create_rule<'a>(&'a self, rule: &'a ChannelRule) -> BoxFuture<'a, Result<(), StoreError>> {
        self.around("create_rule", move || self.inner.create_rule(rule))
    }
    fn channel_rules<'a>(
        &'a self,
        channel: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Vec<ChannelRule>, StoreError>> {
        self.around("channel_rules", move || {
            self.inner.channel_rules(channel, now)
        })
    }
    fn revoke_rule<'a>(
        &'a self,
        channel: &'a str,
        id: &'a str,
        by: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.around("revoke_rule", move || {
            self.inner.revoke_rule(channel, id, by)
        })
    }
}
