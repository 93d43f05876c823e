//! The in-memory conversation store.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::core::agent::{ChatMessage, trim_to_budget};
use crate::core::ports::{ChannelSettings, ConversationStore, StoreError};
use crate::core::tools::BoxFuture;

/// Conversations and channel settings in memory.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    history: HashMap<String, Vec<ChatMessage>>,
    settings: HashMap<String, ChannelSettings>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> Result<T, StoreError> {
        let mut inner = self
            .inner
            .lock()
            .map_err(|_| StoreError("the in-memory store was poisoned by a panic".to_owned()))?;
        Ok(f(&mut inner))
    }
}

impl ConversationStore for MemoryStore {
    fn load_history<'a>(
        &'a self,
        channel: &'a str,
        budget: usize,
    ) -> BoxFuture<'a, Result<Vec<ChatMessage>, StoreError>> {
        Box::pin(async move {
            self.with(|inner| {
                inner
                    .history
                    .get(channel)
                    .map(|h| trim_to_budget(h, budget))
                    .unwrap_or_default()
            })
        })
    }

    fn append<'a>(
        &'a self,
        channel: &'a str,
        messages: &'a [ChatMessage],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.with(|inner| {
                inner
                    .history
                    .entry(channel.to_owned())
                    .or_default()
                    .extend_from_slice(messages);
            })
        })
    }

    fn clear<'a>(&'a self, channel: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.with(|inner| {
                inner.history.remove(channel);
            })
        })
    }

    fn channel_settings<'a>(
        &'a self,
        channel: &'a str,
    ) -> BoxFuture<'a, Result<Option<ChannelSettings>, StoreError>> {
        Box::pin(async move { self.with(|inner| inner.settings.get(channel).cloned()) })
    }

    fn set_channel_settings<'a>(
        &'a self,
        channel: &'a str,
        settings: &'a ChannelSettings,
        _changed_by: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.with(|inner| {
                inner.settings.insert(channel.to_owned(), settings.clone());
            })
        })
    }
}
