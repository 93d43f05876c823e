//! Conversation history kept in memory in front of a store.
//!
//! Every run starts by loading its channel's history, and under load that read waits for a
//! core and a connection while the person waits. The history a run needs is the one the
//! previous run of the channel loaded plus what it appended, so [`HistoryCache`] keeps it:
//! the store stays the record (every write still goes to it first), the cache only saves
//! the read. Nothing the risk gate decides depends on it (channel settings are always read
//! from the store).
//!
//! Coherence, for one process serving a channel (the deployment model: a channel belongs to
//! the one process that serves its guild's shard):
//! - a load fills the cache only if no write to the channel started or was under way while
//!   it read (a generation count and an in-flight count per channel);
//! - an append extends a cached history only after the store took it; a failed append drops
//!   the channel's entry (what the store holds is then unknown);
//! - `clear` drops the channel's entry, `prune_history` drops every entry;
//! - a load asking for a larger budget than the entry was filled with reads the store.
//!
//! At most `capacity` channels are kept (`store.history_cache_channels`); a full cache drops
//! its least recently used entry.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::core::agent::{ChatMessage, trim_to_budget};
use crate::core::ports::{Store, StoreError};
use crate::core::tools::BoxFuture;

/// A store whose `load_history` is served from memory when it can be.
pub struct HistoryCache {
    inner: Arc<dyn Store>,
    capacity: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    channels: HashMap<String, Channel>,
    /// Bumped by every use, for least-recently-used eviction.
    clock: u64,
}

#[derive(Default)]
struct Channel {
    /// Bumped when a write to the channel starts.
    generation: u64,
    /// Writes under way.
    writing: u32,
    /// Reads of the store under way (an entry is not evicted while one runs, so its
    /// generation stays comparable).
    loading: u32,
    /// The history, trimmed to `budget`, if cached.
    history: Option<Cached>,
    used: u64,
}

struct Cached {
    budget: usize,
    messages: Vec<ChatMessage>,
}

impl HistoryCache {
    /// Keeps the history of up to `capacity` channels in front of `inner`.
    pub fn new(inner: Arc<dyn Store>, capacity: usize) -> Self {
        Self {
            inner,
            capacity: capacity.max(1),
            state: Mutex::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data: keep using it.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Channels whose history is cached (for tests and status).
    pub fn cached_channels(&self) -> usize {
        self.state()
            .channels
            .values()
            .filter(|c| c.history.is_some())
            .count()
    }

    async fn load(&self, channel: &str, budget: usize) -> Result<Vec<ChatMessage>, StoreError> {
        let (generation, guard) = {
            let mut state = self.state();
            state.clock += 1;
            let now = state.clock;
            if let Some(entry) = state.channels.get_mut(channel) {
                entry.used = now;
                if let Some(cached) = &entry.history
                    && budget <= cached.budget
                {
                    return Ok(trim_to_budget(&cached.messages, budget));
                }
            }
            self.make_room(&mut state, channel);
            let entry = state.channels.entry(channel.to_owned()).or_default();
            entry.used = now;
            entry.loading += 1;
            // A write under way: what the store returns may or may not include it.
            let generation = (entry.writing == 0).then_some(entry.generation);
            (generation, Busy::new(self, channel, Kind::Loading))
        };
        let result = self.inner.load_history(channel, budget).await;
        guard.finish(|entry| {
            if let Ok(messages) = &result
                && generation == Some(entry.generation)
                && entry.writing == 0
            {
                entry.history = Some(Cached {
                    budget,
                    messages: messages.clone(),
                });
            }
        });
        result
    }

    /// Drops the least recently used entry when a new channel would exceed the capacity.
    fn make_room(&self, state: &mut State, channel: &str) {
        if state.channels.contains_key(channel) || state.channels.len() < self.capacity {
            return;
        }
        // Entries with reads or writes under way stay: their counts must survive.
        if let Some(oldest) = state
            .channels
            .iter()
            .filter(|(_, c)| c.writing == 0 && c.loading == 0)
            .min_by_key(|(_, c)| c.used)
            .map(|(name, _)| name.clone())
        {
            state.channels.remove(&oldest);
        }
    }

    /// Marks a write to `channel` as started; returns the generation it started.
    fn begin_write<'a>(&'a self, channel: &'a str) -> (u64, Busy<'a>) {
        let mut state = self.state();
        state.clock += 1;
        let now = state.clock;
        self.make_room(&mut state, channel);
        let entry = state.channels.entry(channel.to_owned()).or_default();
        entry.generation += 1;
        entry.writing += 1;
        entry.used = now;
        (entry.generation, Busy::new(self, channel, Kind::Writing))
    }

    async fn append_through(
        &self,
        channel: &str,
        messages: &[ChatMessage],
    ) -> Result<(), StoreError> {
        let (started, guard) = self.begin_write(channel);
        let result = self.inner.append(channel, messages).await;
        guard.finish(|entry| {
            // Extend only a history no other write touched meanwhile; otherwise the store is
            // the only one that knows the order.
            match (&result, entry.generation == started, entry.history.as_mut()) {
                (Ok(()), true, Some(cached)) => {
                    cached.messages.extend_from_slice(messages);
                    cached.messages = trim_to_budget(&cached.messages, cached.budget);
                }
                _ => entry.history = None,
            }
        });
        result
    }

    async fn clear_through(&self, channel: &str) -> Result<(), StoreError> {
        let (_, guard) = self.begin_write(channel);
        let result = self.inner.clear(channel).await;
        guard.finish(|entry| entry.history = None);
        result
    }

    async fn prune_through(&self, before: SystemTime) -> Result<u64, StoreError> {
        let forget = |state: &mut State| {
            for entry in state.channels.values_mut() {
                entry.generation += 1;
                entry.history = None;
            }
        };
        forget(&mut self.state());
        let result = self.inner.prune_history(before).await;
        forget(&mut self.state());
        result
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Loading,
    Writing,
}

/// A read or write of a channel under way. Ends its count when finished, or when dropped
/// (the operation was cancelled: then the cached history is dropped too, since a cancelled
/// write may or may not have landed).
struct Busy<'a> {
    cache: &'a HistoryCache,
    channel: &'a str,
    kind: Kind,
    done: bool,
}

impl<'a> Busy<'a> {
    fn new(cache: &'a HistoryCache, channel: &'a str, kind: Kind) -> Self {
        Self {
            cache,
            channel,
            kind,
            done: false,
        }
    }

    /// Ends the count and applies `update` to the channel's entry, under one lock.
    fn finish(mut self, update: impl FnOnce(&mut Channel)) {
        self.done = true;
        let mut state = self.cache.state();
        if let Some(entry) = state.channels.get_mut(self.channel) {
            self.end(entry);
            update(entry);
        }
    }

    fn end(&self, entry: &mut Channel) {
        match self.kind {
            Kind::Loading => entry.loading = entry.loading.saturating_sub(1),
            Kind::Writing => entry.writing = entry.writing.saturating_sub(1),
        }
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut state = self.cache.state();
        if let Some(entry) = state.channels.get_mut(self.channel) {
            self.end(entry);
            entry.generation += 1;
            entry.history = None;
        }
    }
}

impl Store for HistoryCache {
    fn load_history<'a>(
        &'a self,
        channel: &'a str,
        budget: usize,
    ) -> BoxFuture<'a, Result<Vec<ChatMessage>, StoreError>> {
        Box::pin(self.load(channel, budget))
    }
    fn append<'a>(
        &'a self,
        channel: &'a str,
        messages: &'a [ChatMessage],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.append_through(channel, messages))
    }
    fn clear<'a>(&'a self, channel: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.clear_through(channel))
    }
    fn prune_history<'a>(&'a self, before: SystemTime) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(self.prune_through(before))
    }
    crate::forward_store!(inner:
        channel_settings, set_channel_settings, start_run, heartbeat_run, finish_run,
        create_approval, decide_approval_noted, approval, set_approval_message, claim_continuation,
        pending_approvals, expire_overdue, abandon_orphaned, record_audit, recent_audit,
        create_rule, channel_rules, revoke_rule, settled_approvals, live_run_instance, earlier_run,
    );
}
