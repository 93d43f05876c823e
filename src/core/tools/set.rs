//! Which tools there are: a [`ToolSet`] (the tools at one moment, by name) and the
//! [`ToolRegistry`] that holds the current set and replaces it whole when tools come or go
//! while the bot runs. A run takes one set at its start and keeps it to its end, so a tool
//! that appears or disappears meanwhile never changes a run halfway.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, PoisonError, RwLock, Weak};

use serde_json::{Map, Value};

use super::view::{self, CallBrief};
use super::{BoxFuture, Tool, ToolDefinition, with_risk_level};

/// The longest tool name models take (OpenAI's limit for a function's name).
pub const MAX_TOOL_NAME: usize = 64;

/// Whether `name` can name a tool: 1 to [`MAX_TOOL_NAME`] ASCII letters, digits, `_` or `-`,
/// the names every OpenAI-compatible server accepts for a function. Such a name also reads
/// the same wherever it is shown: nothing in it is hidden or can pass for something else.
pub fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_TOOL_NAME {
        return Err(format!(
            "a tool name has 1 to {MAX_TOOL_NAME} characters, not {}",
            name.chars().count()
        ));
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        Some(c) => Err(format!(
            "a tool name has only ASCII letters, digits, `_` and `-`, not {c:?} (in {name:?})"
        )),
        None => Ok(()),
    }
}

/// The tools of an agent at one moment, by name: enabled ones, and the ones the operator
/// switched off (known, never offered, every call denied). Built once, then shared
/// unchanged: a change is a new set ([`ToolRegistry::update`]).
#[derive(Clone, Default)]
pub struct ToolSet {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    disabled: BTreeMap<String, Arc<dyn Tool>>,
}

impl ToolSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an enabled tool; a tool of the same name goes.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.register_with(tool, true);
    }

    /// Adds a tool, enabled or switched off; a tool of the same name goes. A tool whose name
    /// no model could call ([`check_tool_name`]) is left out, and the log says why: use
    /// [`ToolSet::try_register`] to hear it.
    pub fn register_with(&mut self, tool: Arc<dyn Tool>, enabled: bool) {
        if let Err(problem) = self.try_register(tool, enabled) {
            tracing::error!(%problem, "a tool was not registered");
        }
    }

    /// [`ToolSet::register_with`], saying why a tool could not be added.
    pub fn try_register(&mut self, tool: Arc<dyn Tool>, enabled: bool) -> Result<(), String> {
        let name = tool.name().to_owned();
        check_tool_name(&name)?;
        self.remove(&name);
        if enabled {
            self.tools.insert(name, tool);
        } else {
            self.disabled.insert(name, tool);
        }
        Ok(())
    }

    /// Takes the tool `name` out, enabled or not; false when there was none.
    pub fn remove(&mut self, name: &str) -> bool {
        let enabled = self.tools.remove(name).is_some();
        let disabled = self.disabled.remove(name).is_some();
        enabled || disabled
    }

    /// An enabled tool by name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// A tool by name, enabled or switched off: what shows its calls.
    pub fn known(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name).or_else(|| self.disabled.get(name))
    }

    pub fn is_disabled(&self, name: &str) -> bool {
        self.disabled.contains_key(name)
    }

    /// The enabled tools' names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.tools.keys().map(String::as_str)
    }

    /// The enabled tools, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Tool>> + '_ {
        self.tools.values()
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Every enabled tool's definition, with `risk_level` added to its parameters.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .values()
            .map(|tool| ToolDefinition {
                name: tool.name().to_owned(),
                description: tool.description().to_owned(),
                parameters: with_risk_level(tool.parameters()),
            })
            .collect()
    }

    /// Everything a call of `tool` runs, as its tool shows it ([`Tool::whole_call`]); for a
    /// tool this set does not hold (gone since, or never known), the arguments as JSON.
    pub fn whole_call(&self, tool: &str, arguments: &Map<String, Value>) -> String {
        match self.known(tool) {
            Some(tool) => tool.whole_call(arguments),
            None => view::whole_json(arguments),
        }
    }

    /// The short view of a call ([`Tool::brief_call`]), or the default one.
    pub fn brief_call(&self, tool: &str, arguments: &Map<String, Value>) -> CallBrief {
        match self.known(tool) {
            Some(tool) => tool.brief_call(arguments),
            None => view::json_brief(arguments),
        }
    }

    /// The one-line view of a call ([`Tool::call_line`]), or the default one.
    pub fn call_line(&self, tool: &str, arguments: &Map<String, Value>) -> String {
        match self.known(tool) {
            Some(tool) => tool.call_line(arguments),
            None => view::one_line_json(arguments),
        }
    }
}

impl fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("disabled", &self.disabled.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The tools of one agent as they stand: the current [`ToolSet`], replaced whole when tools
/// come or go (an MCP server lists new tools, or dies). Clones share it: the agent, the
/// front ends that show calls and whatever discovers tools all see one set.
///
/// Readers take a [`ToolRegistry::snapshot`] and keep it as long as they need one answer
/// (a run keeps its snapshot to its end); a change never waits for them.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    current: Arc<RwLock<Arc<ToolSet>>>,
    sources: Arc<RwLock<Vec<Weak<dyn ToolSource>>>>,
}

/// Whatever changes a registry's tools from outside (the MCP servers): it can say when no
/// change it knows of is on its way, so a run that starts after a call changed the tools is
/// offered the changed ones.
pub trait ToolSource: Send + Sync {
    /// Resolves once no change is on its way, or after a bound the source chooses.
    fn settled(&self) -> BoxFuture<'_, ()>;
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Waits for the changes `source` says are on their way in [`ToolRegistry::settled`],
    /// as long as `source` lives.
    pub fn add_source(&self, source: Weak<dyn ToolSource>) {
        self.sources
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push(source);
    }

    /// Resolves once no source has a change on its way (see [`ToolSource::settled`]).
    pub async fn settled(&self) {
        let sources: Vec<Arc<dyn ToolSource>> = self
            .sources
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        for source in sources {
            source.settled().await;
        }
    }

    /// The tools as they stand now; later changes make a new set and leave this one as it is.
    pub fn snapshot(&self) -> Arc<ToolSet> {
        // A writer only ever swaps a finished set in, so a panic elsewhere cannot have left
        // a half-made one behind the lock.
        self.current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Makes `set` the current set.
    pub fn replace(&self, set: ToolSet) {
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(set);
    }

    /// Changes the current set as `change` says, as one step: the change works on a copy,
    /// which then replaces the set; two changes never lose each other's work. Runs that
    /// took a snapshot before keep theirs.
    pub fn update<T>(&self, change: impl FnOnce(&mut ToolSet) -> T) -> T {
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        let mut next = ToolSet::clone(&current);
        let answer = change(&mut next);
        *current = Arc::new(next);
        answer
    }

    /// Adds an enabled tool (see [`ToolSet::register`]).
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.update(|set| set.register(tool));
    }

    /// Adds a tool, enabled or switched off (see [`ToolSet::register_with`]).
    pub fn register_with(&mut self, tool: Arc<dyn Tool>, enabled: bool) {
        self.update(|set| set.register_with(tool, enabled));
    }

    /// An enabled tool by name, from the current set.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.snapshot().get(name).cloned()
    }

    pub fn is_disabled(&self, name: &str) -> bool {
        self.snapshot().is_disabled(name)
    }

    /// The enabled tools' names, from the current set.
    pub fn names(&self) -> Vec<String> {
        self.snapshot().names().map(str::to_owned).collect()
    }

    /// Every enabled tool's definition, from the current set.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.snapshot().definitions()
    }
}

impl From<ToolSet> for ToolRegistry {
    fn from(set: ToolSet) -> Self {
        Self {
            current: Arc::new(RwLock::new(Arc::new(set))),
            sources: Arc::default(),
        }
    }
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.snapshot().names()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::tools::testing::Stub;

    fn stub(name: &str) -> Arc<dyn Tool> {
        Arc::new(Stub::named(name))
    }

    #[test]
    fn a_name_no_model_could_call_is_refused() {
        assert!(check_tool_name("mcp__github__create_issue").is_ok());
        assert!(check_tool_name(&"x".repeat(MAX_TOOL_NAME)).is_ok());
        assert!(check_tool_name(&"x".repeat(MAX_TOOL_NAME + 1)).is_err());
        assert!(check_tool_name("").is_err());
        for bad in ["run query", "ls\u{200b}", "dr\u{43e}p", "a.b", "a/b"] {
            assert!(check_tool_name(bad).is_err(), "{bad:?}");
        }
        let mut set = ToolSet::new();
        assert!(set.try_register(stub("bad name"), true).is_err());
        set.register(stub("also bad!"));
        assert!(set.is_empty(), "neither was added");
    }

    #[test]
    fn a_snapshot_stays_as_it_was_while_the_registry_changes() {
        let mut registry = ToolRegistry::new();
        registry.register(stub("one"));
        let shared = registry.clone();
        let before = registry.snapshot();
        shared.update(|set| {
            set.register(stub("mcp__srv__two"));
            assert!(set.remove("one"));
        });
        assert_eq!(before.names().collect::<Vec<_>>(), ["one"], "a run's set");
        assert_eq!(registry.names(), ["mcp__srv__two"], "clones share one set");
        assert!(registry.get("one").is_none());
        registry.replace(ToolSet::new());
        assert!(shared.snapshot().is_empty());
    }

    #[test]
    fn a_switched_off_tool_is_known_but_never_offered() {
        let mut set = ToolSet::new();
        set.register_with(stub("off"), false);
        set.register(stub("on"));
        assert!(set.get("off").is_none() && set.is_disabled("off"));
        assert!(set.known("off").is_some());
        let offered: Vec<String> = set.definitions().into_iter().map(|d| d.name).collect();
        assert_eq!(offered, ["on"]);
        // Registering a name again replaces the tool, enabled or not.
        set.register(stub("off"));
        assert!(!set.is_disabled("off") && set.get("off").is_some());
    }

    #[test]
    fn a_call_of_a_tool_without_views_is_shown_whole_as_json() {
        let mut set = ToolSet::new();
        set.register(stub("mcp__srv__tool"));
        let arguments = serde_json::json!({"b": [1, 2], "a": "x".repeat(5_000)});
        let arguments = arguments.as_object().expect("object");
        for tool in ["mcp__srv__tool", "gone_since"] {
            let whole = set.whole_call(tool, arguments);
            assert!(whole.contains(&"x".repeat(5_000)), "nothing is cut");
            assert_eq!(
                serde_json::from_str::<Value>(&whole).expect("JSON"),
                Value::Object(arguments.clone())
            );
            assert!(whole.contains("\n  \"b\": [\n"), "indented: {whole}");
            assert_eq!(
                set.brief_call(tool, arguments),
                CallBrief::code("json", whole)
            );
            assert_eq!(
                set.call_line(tool, arguments),
                Value::Object(arguments.clone()).to_string()
            );
        }
    }
}
