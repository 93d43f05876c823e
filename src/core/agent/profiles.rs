//! The prompt profile each channel's last run confirmed, so the next run's first model call
//! need not wait for the settings read.
//!
//! Every run reads its channel's settings from the store: the gate's mode must be the
//! stored one, whatever any process changed a moment ago. The first model call needs only
//! the profile (which prompt and tools it sends), and a channel's profile rarely changes.
//! So a run of a channel this process has served before sends its first call on the
//! profile it saw last while the read is under way; the read confirms it before anything in
//! the reply is looked at, and a different profile drops that call and asks again (see
//! `Agent::drive`). Nothing the gate decides comes from here.
//!
//! Changes of a profile made through this process ([`ProfileWatch`], the store every front
//! end writes settings through) reach the memory at once: the entry is withdrawn before the
//! write (a run starting meanwhile waits for its read) and set to the new profile after it,
//! and a run that read its settings before the change cannot put the old profile back
//! ([`ProfileMemory::mark`]). So after `/profile X` no model call goes out on the old
//! profile. Only a change written to the database by another process can still cost one
//! call, dropped as soon as the read is back.
//!
//! At most `capacity` channels are remembered; a full memory forgets one entry to make
//! room (a forgotten channel's next run waits for its read, as a new channel's does).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::core::agent::ChatMessage;
use crate::core::ports::{
    ApprovalRecord, ApprovalStatus, AuditRecord, ChannelSettings, Decided, Store, StoreError,
};
use crate::core::rules::ChannelRule;
use crate::core::tools::BoxFuture;

/// Channels remembered unless the agent is built with another capacity: at ~100 bytes per
/// entry, a few MiB at most.
pub const DEFAULT_CAPACITY: usize = 50_000;

/// Channel -> the profile its last run was confirmed on.
#[derive(Debug)]
pub struct ProfileMemory {
    capacity: usize,
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    channels: HashMap<String, Entry>,
    /// Changes made through this process so far.
    changes: u64,
}

#[derive(Debug)]
struct Entry {
    /// `None` while a change is being written: nothing is sent on a guess meanwhile.
    profile: Option<String>,
    /// The change that set this entry (0: a run's confirmation).
    change: u64,
}

impl Default for ProfileMemory {
    fn default() -> Self {
        Self::with_capacity(DEFAULT_CAPACITY)
    }
}

impl ProfileMemory {
    /// A memory of at most `capacity` channels (0 remembers nothing).
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            capacity,
            seen: Mutex::new(Seen::default()),
        }
    }

    /// The profile the channel's last confirmed run used, if this process remembers it.
    pub fn last(&self, channel: &str) -> Option<String> {
        self.seen
            .lock()
            .ok()?
            .channels
            .get(channel)?
            .profile
            .clone()
    }

    /// Taken before a run reads its settings; given back to [`ProfileMemory::confirm`].
    pub fn mark(&self) -> u64 {
        self.seen.lock().map_or(0, |seen| seen.changes)
    }

    /// Records the profile the store confirmed for the channel, unless a change made
    /// through this process since `mark` was taken says otherwise.
    pub fn confirm(&self, channel: &str, profile: &str, mark: u64) {
        self.put(channel, Some(profile), |entry| entry.change <= mark, 0);
    }

    /// A change of the channel's profile is about to be written: forget the old one.
    pub fn changing(&self, channel: &str) {
        let Ok(mut seen) = self.seen.lock() else {
            return;
        };
        seen.changes += 1;
        let change = seen.changes;
        if let Some(entry) = seen.channels.get_mut(channel) {
            *entry = Entry {
                profile: None,
                change,
            };
        }
    }

    /// The change was written: the channel's runs use `profile` from now on.
    pub fn changed(&self, channel: &str, profile: &str) {
        let change = match self.seen.lock() {
            Ok(mut seen) => {
                seen.changes += 1;
                seen.changes
            }
            Err(_) => return,
        };
        self.put(channel, Some(profile), |_| true, change);
    }

    fn put(&self, channel: &str, profile: Option<&str>, may: impl Fn(&Entry) -> bool, change: u64) {
        if self.capacity == 0 {
            return;
        }
        let Ok(mut seen) = self.seen.lock() else {
            return;
        };
        let entry = Entry {
            profile: profile.map(str::to_owned),
            change,
        };
        if let Some(known) = seen.channels.get_mut(channel) {
            if may(known) {
                *known = entry;
            }
            return;
        }
        if seen.channels.len() >= self.capacity
            && let Some(any) = seen.channels.keys().next().cloned()
        {
            seen.channels.remove(&any);
        }
        seen.channels.insert(channel.to_owned(), entry);
    }

    /// How many channels are remembered.
    pub fn len(&self) -> usize {
        self.seen.lock().map_or(0, |seen| seen.channels.len())
    }

    /// Whether no channel is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The store as the agent and the front ends use it: every settings write goes through
/// [`ProfileMemory::changing`] and [`ProfileMemory::changed`]; everything else passes
/// through unchanged.
pub struct ProfileWatch {
    inner: Arc<dyn Store>,
    memory: Arc<ProfileMemory>,
}

impl ProfileWatch {
    pub fn new(inner: Arc<dyn Store>, memory: Arc<ProfileMemory>) -> Self {
        Self { inner, memory }
    }

    async fn write_settings(
        &self,
        channel: &str,
        settings: &ChannelSettings,
        changed_by: &str,
    ) -> Result<(), StoreError> {
        self.memory.changing(channel);
        self.inner
            .set_channel_settings(channel, settings, changed_by)
            .await?;
        self.memory.changed(channel, &settings.profile);
        Ok(())
    }
}

impl Store for ProfileWatch {
    fn load_history<'a>(
        &'a self,
        channel: &'a str,
        budget: usize,
    ) -> BoxFuture<'a, Result<Vec<ChatMessage>, StoreError>> {
        self.inner.load_history(channel, budget)
    }
    fn append<'a>(
        &'a self,
        channel: &'a str,
        messages: &'a [ChatMessage],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.append(channel, messages)
    }
    fn clear<'a>(&'a self, channel: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.clear(channel)
    }
    fn prune_history<'a>(&'a self, before: SystemTime) -> BoxFuture<'a, Result<u64, StoreError>> {
        self.inner.prune_history(before)
    }
    fn channel_settings<'a>(
        &'a self,
        channel: &'a str,
    ) -> BoxFuture<'a, Result<Option<ChannelSettings>, StoreError>> {
        self.inner.channel_settings(channel)
    }
    fn set_channel_settings<'a>(
        &'a self,
        channel: &'a str,
        settings: &'a ChannelSettings,
        changed_by: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.write_settings(channel, settings, changed_by))
    }
    fn start_run<'a>(
        &'a self,
        run_id: &'a str,
        channel: &'a str,
        instance: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.start_run(run_id, channel, instance)
    }
    fn heartbeat_run<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.heartbeat_run(run_id)
    }
    fn finish_run<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.finish_run(run_id)
    }
    fn create_approval<'a>(
        &'a self,
        approval: &'a ApprovalRecord,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.create_approval(approval)
    }
    fn decide_approval_noted<'a>(
        &'a self,
        id: &'a str,
        status: ApprovalStatus,
        by: Option<&'a str>,
        note: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Decided, StoreError>> {
        self.inner.decide_approval_noted(id, status, by, note)
    }
    fn approval<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<ApprovalRecord>, StoreError>> {
        self.inner.approval(id)
    }
    fn set_approval_message<'a>(
        &'a self,
        id: &'a str,
        message_ref: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.set_approval_message(id, message_ref)
    }
    fn pending_approvals<'a>(
        &'a self,
        channel: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        self.inner.pending_approvals(channel)
    }
    fn expire_overdue<'a>(
        &'a self,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        self.inner.expire_overdue(now)
    }
    fn abandon_orphaned<'a>(
        &'a self,
        stale_before: SystemTime,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        self.inner.abandon_orphaned(stale_before)
    }
    fn record_audit<'a>(
        &'a self,
        record: &'a AuditRecord,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.record_audit(record)
    }
    fn recent_audit<'a>(
        &'a self,
        channel: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<AuditRecord>, StoreError>> {
        self.inner.recent_audit(channel, limit)
    }
    fn create_rule<'a>(&'a self, rule: &'a ChannelRule) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.create_rule(rule)
    }
    fn channel_rules<'a>(
        &'a self,
        channel: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Vec<ChannelRule>, StoreError>> {
        self.inner.channel_rules(channel, now)
    }
    fn revoke_rule<'a>(
        &'a self,
        channel: &'a str,
        id: &'a str,
        by: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.inner.revoke_rule(channel, id, by)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_the_latest_profile_of_each_channel() {
        let memory = ProfileMemory::default();
        assert_eq!(memory.last("c1"), None);
        memory.confirm("c1", "sql", 0);
        memory.confirm("c2", "ops", 0);
        assert_eq!(memory.last("c1").as_deref(), Some("sql"));
        memory.confirm("c1", "ops", 0);
        assert_eq!(memory.last("c1").as_deref(), Some("ops"));
        assert_eq!(memory.last("c2").as_deref(), Some("ops"));
        assert_eq!(memory.len(), 2);
    }

    #[test]
    fn a_full_memory_forgets_one_channel_to_make_room() {
        let memory = ProfileMemory::with_capacity(3);
        for channel in ["a", "b", "c", "d", "e"] {
            memory.confirm(channel, "ops", 0);
            assert!(memory.len() <= 3, "{} channels kept", memory.len());
        }
        assert_eq!(memory.len(), 3);
        assert_eq!(
            memory.last("e").as_deref(),
            Some("ops"),
            "the newest is kept"
        );
        // A known channel changing its profile takes no room.
        memory.confirm("e", "sql", 0);
        assert_eq!(memory.len(), 3);
        assert_eq!(memory.last("e").as_deref(), Some("sql"));
    }

    #[test]
    fn a_change_made_here_wins_over_a_run_that_read_before_it() {
        let memory = ProfileMemory::default();
        memory.confirm("c1", "ops", memory.mark());
        // A run takes its mark, then `/profile sql` is written while its read is under way.
        let mark = memory.mark();
        memory.changing("c1");
        assert_eq!(
            memory.last("c1"),
            None,
            "no guess while the change is written"
        );
        memory.changed("c1", "sql");
        // The run's read saw the old profile; confirming it must not bring it back.
        memory.confirm("c1", "ops", mark);
        assert_eq!(memory.last("c1").as_deref(), Some("sql"));
        // A run that read after the change confirms as usual.
        memory.confirm("c1", "sql", memory.mark());
        assert_eq!(memory.last("c1").as_deref(), Some("sql"));
        // A change whose write failed leaves no guess; the next run's read decides.
        memory.changing("c1");
        memory.confirm("c1", "ops", mark);
        assert_eq!(memory.last("c1"), None);
        memory.confirm("c1", "ops", memory.mark());
        assert_eq!(memory.last("c1").as_deref(), Some("ops"));
    }

    #[test]
    fn a_memory_of_no_channels_remembers_nothing() {
        let memory = ProfileMemory::with_capacity(0);
        memory.confirm("a", "ops", 0);
        assert!(memory.is_empty());
        assert_eq!(memory.last("a"), None);
    }
}
