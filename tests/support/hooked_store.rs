//! A store that delays or fails chosen operations before passing them to a real one, so a
//! test can make the state database slow or broken at exact points (under paused tokio time
//! a delay costs nothing). It also times every operation (the load bench reads that).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use riskgate::core::ports::{Store, StoreError, StoreErrorKind};
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
    /// Hooks for the next call of an operation only.
    once: Mutex<HashMap<&'static str, Hook>>,
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
            once: Mutex::default(),
            completed: Mutex::default(),
            took: Mutex::default(),
        })
    }

    /// Every later call of `operation` (a `Store` method's name) meets `hook`.
    pub fn hook(&self, operation: &'static str, hook: Hook) {
        self.hooks.lock().expect("hooks").insert(operation, hook);
    }

    /// The next call of `operation` meets `hook`; later ones do not.
    pub fn hook_once(&self, operation: &'static str, hook: Hook) {
        self.once.lock().expect("once").insert(operation, hook);
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
        let once = self.once.lock().expect("once").remove(name);
        let hook = once.or_else(|| self.hooks.lock().expect("hooks").get(name).cloned());
        Box::pin(async move {
            let started = tokio::time::Instant::now();
            match hook {
                Some(Hook::Delay(delay)) => tokio::time::sleep(delay).await,
                Some(Hook::Fail(message)) => {
                    return Err(StoreError::new(StoreErrorKind::Unavailable, message));
                }
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
    riskgate::forward_store!(inner via around:
        load_history, append, clear, prune_history, channel_settings, set_channel_settings,
        start_run, heartbeat_run, finish_run, create_approval, decide_approval_noted,
        approval, set_approval_message, claim_continuation, pending_approvals, expire_overdue, abandon_orphaned,
        record_audit, recent_audit, create_rule, channel_rules, revoke_rule,
        settled_approvals, live_run_instance, earlier_run,
    );
}
