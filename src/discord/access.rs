//! Who may start runs: `discord.allowed_users` and `discord.allowed_roles` (both empty:
//! everyone who can write where the bot listens), replaced in a channel and its threads by
//! that channel's `discord.channel_access` entry. Checked for every message before anything
//! reaches the model; a member outside the lists gets one short notice per channel (while
//! `discord.notify_refused` is on) and never a run.

use std::collections::HashSet;
use std::sync::Mutex;

use crate::config::{ChannelAccess, DiscordSettings};

/// The lists in force, and who was already told.
pub(super) struct Access {
    users: Vec<u64>,
    roles: Vec<u64>,
    channels: Vec<ChannelAccess>,
    notify: bool,
    told: Mutex<HashSet<(u64, u64)>>,
}

/// How many (member, channel) notices are remembered before the set starts again.
const TOLD_CAPACITY: usize = 10_000;

impl Access {
    pub(super) fn new(settings: &DiscordSettings) -> Self {
        Self {
            users: settings.allowed_users.clone(),
            roles: settings.allowed_roles.clone(),
            channels: settings.channel_access.clone(),
            notify: settings.notify_refused,
            told: Mutex::new(HashSet::new()),
        }
    }

    /// Whether `user` with `roles` may start a run in `channel` (whose parent, for a
    /// thread, is `parent`).
    pub(super) fn allows(
        &self,
        user: u64,
        roles: &[u64],
        channel: u64,
        parent: Option<u64>,
    ) -> bool {
        let entry = self
            .channels
            .iter()
            .find(|c| c.channel == channel)
            .or_else(|| parent.and_then(|p| self.channels.iter().find(|c| c.channel == p)));
        let (users, allowed_roles) = match entry {
            Some(entry) => (&entry.allowed_users, &entry.allowed_roles),
            None => (&self.users, &self.roles),
        };
        if users.is_empty() && allowed_roles.is_empty() {
            return true;
        }
        users.contains(&user) || roles.iter().any(|r| allowed_roles.contains(r))
    }

    /// Whether to tell `user` in `channel` that they may not make requests: the first time
    /// only, and only while notices are on.
    pub(super) fn should_tell(&self, user: u64, channel: u64) -> bool {
        if !self.notify {
            return false;
        }
        let mut told = self
            .told
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if told.len() >= TOLD_CAPACITY {
            told.clear();
        }
        told.insert((user, channel))
    }
}

/// The notice a member outside the lists gets.
pub(super) const REFUSED_NOTICE: &str = "Only the people this bot's operator listed may make requests here, so this message was not passed on. Ask an admin to add you (discord.allowed_users or discord.allowed_roles).";

#[cfg(test)]
mod tests {
    use super::*;

    fn access(users: &[u64], roles: &[u64], channels: Vec<ChannelAccess>) -> Access {
        Access::new(&DiscordSettings {
            allowed_users: users.to_vec(),
            allowed_roles: roles.to_vec(),
            channel_access: channels,
            ..DiscordSettings::default()
        })
    }

    #[test]
    fn empty_lists_let_everyone_ask() {
        assert!(access(&[], &[], vec![]).allows(1, &[], 10, None));
    }

    #[test]
    fn users_or_roles_are_needed_once_a_list_is_set() {
        let a = access(&[1], &[100], vec![]);
        assert!(a.allows(1, &[], 10, None));
        assert!(a.allows(2, &[100], 10, None));
        assert!(!a.allows(2, &[200], 10, None));
    }

    #[test]
    fn a_channel_entry_replaces_the_lists_there_and_in_its_threads() {
        let a = access(
            &[1],
            &[],
            vec![ChannelAccess {
                channel: 10,
                allowed_users: vec![2],
                allowed_roles: vec![],
            }],
        );
        assert!(!a.allows(1, &[], 10, None));
        assert!(a.allows(2, &[], 10, None));
        assert!(a.allows(2, &[], 11, Some(10)), "a thread of the channel");
        assert!(
            a.allows(1, &[], 20, None),
            "other channels keep the global list"
        );
        assert!(!a.allows(2, &[], 20, None));
    }

    #[test]
    fn a_refused_member_is_told_once_per_channel() {
        let a = access(&[1], &[], vec![]);
        assert!(a.should_tell(2, 10));
        assert!(!a.should_tell(2, 10));
        assert!(a.should_tell(2, 11));
    }
}
