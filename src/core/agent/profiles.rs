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
//! At most `capacity` channels are remembered; a full memory forgets one entry to make
//! room (a forgotten channel's next run waits for its read, as a new channel's does).

use std::collections::HashMap;
use std::sync::Mutex;

/// Channels remembered unless the agent is built with another capacity: at ~100 bytes per
/// entry, a few MiB at most.
pub const DEFAULT_CAPACITY: usize = 50_000;

/// Channel -> the profile its last run was confirmed on.
#[derive(Debug)]
pub struct ProfileMemory {
    capacity: usize,
    seen: Mutex<HashMap<String, String>>,
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
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// The profile the channel's last confirmed run used, if this process remembers it.
    pub fn last(&self, channel: &str) -> Option<String> {
        self.seen.lock().ok()?.get(channel).cloned()
    }

    /// Records the profile the store confirmed for the channel.
    pub fn confirm(&self, channel: &str, profile: &str) {
        if self.capacity == 0 {
            return;
        }
        let Ok(mut seen) = self.seen.lock() else {
            return;
        };
        if let Some(known) = seen.get_mut(channel) {
            if known != profile {
                profile.clone_into(known);
            }
            return;
        }
        if seen.len() >= self.capacity
            && let Some(any) = seen.keys().next().cloned()
        {
            seen.remove(&any);
        }
        seen.insert(channel.to_owned(), profile.to_owned());
    }

    /// How many channels are remembered.
    pub fn len(&self) -> usize {
        self.seen.lock().map_or(0, |seen| seen.len())
    }

    /// Whether no channel is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_the_latest_profile_of_each_channel() {
        let memory = ProfileMemory::default();
        assert_eq!(memory.last("c1"), None);
        memory.confirm("c1", "sql");
        memory.confirm("c2", "ops");
        assert_eq!(memory.last("c1").as_deref(), Some("sql"));
        memory.confirm("c1", "ops");
        assert_eq!(memory.last("c1").as_deref(), Some("ops"));
        assert_eq!(memory.last("c2").as_deref(), Some("ops"));
        assert_eq!(memory.len(), 2);
    }

    #[test]
    fn a_full_memory_forgets_one_channel_to_make_room() {
        let memory = ProfileMemory::with_capacity(3);
        for channel in ["a", "b", "c", "d", "e"] {
            memory.confirm(channel, "ops");
            assert!(memory.len() <= 3, "{} channels kept", memory.len());
        }
        assert_eq!(memory.len(), 3);
        assert_eq!(
            memory.last("e").as_deref(),
            Some("ops"),
            "the newest is kept"
        );
        // A known channel changing its profile takes no room.
        memory.confirm("e", "sql");
        assert_eq!(memory.len(), 3);
        assert_eq!(memory.last("e").as_deref(), Some("sql"));
    }

    #[test]
    fn a_memory_of_no_channels_remembers_nothing() {
        let memory = ProfileMemory::with_capacity(0);
        memory.confirm("a", "ops");
        assert!(memory.is_empty());
        assert_eq!(memory.last("a"), None);
    }
}
