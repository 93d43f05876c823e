//! Profiles: what a channel's runs are offered. A profile has the name people choose it by
//! (`/profile sql`), a few words on what it is for, the text that tells the model its job
//! (after the base prompt), and which tools it offers. A channel stores only its profile's
//! name; the profile itself is data the agent holds ([`Profiles`]), so which profiles exist,
//! and what each offers, is decided where they are built (the built-in `sql` and `ops`:
//! `tools::profiles`: the shipped `sql` and `ops` and the operator's `[profiles.NAME]`), never
//! by comparing names here.
//!
//! A profile may also name the model its runs ask (`model`), the mode a channel starts in
//! (`mode`), and channels that start with it instead of the default profile (`channels`).

use crate::core::ports::ChannelSettings;
use crate::core::risk::ChannelMode;

/// One profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    name: String,
    summary: String,
    prompt: String,
    offers: Offers,
    /// The model its runs ask; `None`: the client's (`llm.model`).
    model: Option<String>,
    /// The mode a channel has when it starts with this profile, or switches to it.
    mode: Option<ChannelMode>,
    /// Channels that start with this profile.
    channels: Vec<String>,
}

/// Which tools a profile offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offers {
    /// Every tool the agent has, as tools come and go.
    All,
    /// The tools named, each by its name or by a prefix ending in `*` (`mcp__github__*`: every
    /// tool of one MCP server, whichever it lists).
    Only(Vec<String>),
    /// Every tool but those named (as in `Only`).
    AllBut(Vec<String>),
}

impl Offers {
    /// The tools named in `names`.
    pub fn only<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Self {
        Self::Only(names.into_iter().map(Into::into).collect())
    }

    /// Whether the tool `name` is offered.
    pub fn includes(&self, name: &str) -> bool {
        let named = |entries: &[String]| {
            entries.iter().any(|entry| match entry.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => entry == name,
            })
        };
        match self {
            Self::All => true,
            Self::Only(entries) => named(entries),
            Self::AllBut(entries) => !named(entries),
        }
    }
}

impl Profile {
    /// `summary` is a few words for people choosing it ("data", "all tools"); `prompt` is
    /// what the model is told about its job in this profile.
    pub fn new(
        name: impl Into<String>,
        summary: impl Into<String>,
        prompt: impl Into<String>,
        offers: Offers,
    ) -> Self {
        Self {
            name: name.into(),
            summary: summary.into(),
            prompt: prompt.into(),
            offers,
            model: None,
            mode: None,
            channels: Vec::new(),
        }
    }

    /// This profile with its runs asking `model` rather than the client's.
    pub fn with_model(mut self, model: Option<String>) -> Self {
        self.model = model;
        self
    }

    /// This profile with the mode a channel takes when it starts with it or switches to it.
    pub fn with_mode(mut self, mode: Option<ChannelMode>) -> Self {
        self.mode = mode;
        self
    }

    /// This profile as the one `channels` start with.
    pub fn for_channels(mut self, channels: Vec<String>) -> Self {
        self.channels = channels;
        self
    }

    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    pub fn mode(&self) -> Option<ChannelMode> {
        self.mode
    }

    pub fn channels(&self) -> &[String] {
        &self.channels
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn summary(&self) -> &str {
        &self.summary
    }

    /// The profile's part of the system prompt.
    pub fn prompt(&self) -> &str {
        &self.prompt
    }

    pub fn offers(&self) -> &Offers {
        &self.offers
    }

    /// Whether this profile offers the tool `name`.
    pub fn offers_tool(&self, name: &str) -> bool {
        self.offers.includes(name)
    }
}

/// The profiles a channel can choose from, one of them the profile of channels nobody
/// switched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profiles {
    /// Never empty, names unique; `list[default]` is the default.
    list: Vec<Profile>,
    default: usize,
}

impl Profiles {
    /// The profiles, in the order people are shown them; `default` names the profile of a
    /// channel nobody switched. `Err` says what is wrong: two profiles of one name, or no
    /// profile named `default` (`expected sql or ops`: the names there are).
    /// A channel named by two profiles' `channels` is an error too.
    pub fn new(list: Vec<Profile>, default: &str) -> Result<Self, String> {
        for (i, profile) in list.iter().enumerate() {
            if list[..i].iter().any(|p| p.name == profile.name) {
                return Err(format!("two profiles are named {:?}", profile.name));
            }
            for channel in &profile.channels {
                if let Some(other) = list[..i].iter().find(|p| p.channels.contains(channel)) {
                    return Err(format!(
                        "channel {channel} is given to two profiles, {:?} and {:?}",
                        other.name, profile.name
                    ));
                }
            }
        }
        let Some(default) = list.iter().position(|p| p.name == default) else {
            return Err(if list.is_empty() {
                format!("there is no profile to be the default {default:?}")
            } else {
                format!("expected {}", choices(&list))
            });
        };
        Ok(Self { list, default })
    }

    /// The profile named `name`, if there is one.
    pub fn get(&self, name: &str) -> Option<&Profile> {
        self.list.iter().find(|p| p.name == name)
    }

    /// The profile of channels nobody switched.
    pub fn default_profile(&self) -> &Profile {
        &self.list[self.default]
    }

    /// The profile a channel whose settings name `name` uses: that one, or the default when
    /// no profile has that name (any more).
    pub fn resolve(&self, name: &str) -> &Profile {
        self.get(name).unwrap_or_else(|| self.default_profile())
    }

    /// The settings of a channel nobody configured: the profile whose `channels` name it,
    /// else the default profile; the mode that profile sets, else `defaults`' mode.
    pub fn defaults_for(&self, channel: &str, defaults: &ChannelSettings) -> ChannelSettings {
        let bound = self
            .list
            .iter()
            .find(|p| p.channels.iter().any(|c| c == channel));
        let profile = bound.unwrap_or_else(|| self.resolve(&defaults.profile));
        ChannelSettings {
            mode: profile.mode.unwrap_or(defaults.mode),
            profile: profile.name.clone(),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &Profile> {
        self.list.iter()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.list.iter().map(|p| p.name.as_str())
    }

    /// The names as a person is offered them: `sql or ops`, `a, b or c`.
    pub fn choices(&self) -> String {
        choices(&self.list)
    }
}

fn choices(list: &[Profile]) -> String {
    let names: Vec<&str> = list.iter().map(|p| p.name.as_str()).collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two() -> Vec<Profile> {
        vec![
            Profile::new(
                "data",
                "data",
                "Answer from the data.",
                Offers::only(["sql_tool"]),
            ),
            Profile::new("all", "all tools", "Do anything.", Offers::All),
        ]
    }

    #[test]
    fn a_profile_offers_its_tools_by_name_or_by_prefix() {
        let one = Offers::only(["execute_x", "mcp__github__*"]);
        assert!(one.includes("execute_x"));
        assert!(!one.includes("execute_xy"), "a name is matched whole");
        assert!(one.includes("mcp__github__create_issue"));
        assert!(!one.includes("mcp__gitlab__create_issue"));
        assert!(!Offers::Only(Vec::new()).includes("anything"));
        assert!(Offers::All.includes("whatever_comes_later"));
    }

    #[test]
    fn an_unknown_name_falls_back_to_the_default() {
        let profiles = Profiles::new(two(), "all").expect("profiles");
        assert_eq!(profiles.resolve("data").name(), "data");
        assert_eq!(profiles.resolve("gone").name(), "all");
        assert_eq!(profiles.default_profile().name(), "all");
        assert_eq!(profiles.choices(), "data or all");
        assert_eq!(profiles.names().collect::<Vec<_>>(), ["data", "all"]);
    }

    #[test]
    fn a_channel_starts_with_the_profile_that_names_it_and_its_mode() {
        let mut list = two();
        list[0] = list[0]
            .clone()
            .with_mode(Some(ChannelMode::Strict))
            .for_channels(vec!["42".to_owned()]);
        let profiles = Profiles::new(list, "all").expect("profiles");
        let global = ChannelSettings {
            mode: ChannelMode::Smart,
            profile: "all".to_owned(),
        };
        let bound = profiles.defaults_for("42", &global);
        assert_eq!(
            (bound.profile.as_str(), bound.mode),
            ("data", ChannelMode::Strict)
        );
        let other = profiles.defaults_for("7", &global);
        assert_eq!(
            (other.profile.as_str(), other.mode),
            ("all", ChannelMode::Smart)
        );

        let mut twice = two();
        twice[0] = twice[0].clone().for_channels(vec!["42".to_owned()]);
        twice[1] = twice[1].clone().for_channels(vec!["42".to_owned()]);
        let problem = Profiles::new(twice, "all").expect_err("one channel, two profiles");
        assert!(problem.contains("channel 42"), "{problem}");
    }

    #[test]
    fn profiles_need_a_default_and_unique_names() {
        let problem = Profiles::new(two(), "root").expect_err("no such default");
        assert!(problem.contains("expected data or all"), "{problem}");
        let mut twice = two();
        twice.push(Profile::new("data", "again", "", Offers::All));
        assert!(Profiles::new(twice, "all").is_err());
        assert!(Profiles::new(Vec::new(), "all").is_err());
        let mut three = two();
        three.push(Profile::new("web", "the web", "", Offers::All));
        assert_eq!(
            Profiles::new(three, "web").expect("three").choices(),
            "data, all or web"
        );
    }
}
