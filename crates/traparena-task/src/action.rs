use serde::{Deserialize, Serialize};

use crate::spec::Location;

/// One agent action, in the JSON form agents emit, replay files hold and trajectories log.
///
/// ```
/// use traparena_task::Action;
/// let a: Action = serde_json::from_str(r#"{"action": "read", "path": "a.py", "end_line": 9}"#).unwrap();
/// assert_eq!(a, Action::Read { path: "a.py".into(), start_line: None, end_line: Some(9) });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Read a file, optionally a range of lines (1-based, inclusive).
    Read {
        /// File path relative to the workspace.
        path: String,
        /// First line to show.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        start_line: Option<u64>,
        /// Last line to show.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        end_line: Option<u64>,
    },
    /// List a folder (the workspace root by default).
    List {
        /// Folder path relative to the workspace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
    },
    /// Search file contents for a literal pattern.
    Search {
        /// The text to look for.
        pattern: String,
        /// Folder or file to search in (the workspace by default).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
    },
    /// Replace exactly one occurrence of `old` with `new` in a file.
    Edit {
        /// File path relative to the workspace.
        path: String,
        /// The exact text to replace; it must occur once.
        old: String,
        /// The replacement.
        new: String,
    },
    /// Write a whole file.
    Write {
        /// File path relative to the workspace.
        path: String,
        /// The new contents.
        content: String,
    },
    /// Run the public tests.
    RunPublicTests,
    /// End the episode and submit the workspace as the candidate patch.
    Submit,
}

impl Action {
    /// The action's name as it appears in the `action` field.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Read { .. } => "read",
            Action::List { .. } => "list",
            Action::Search { .. } => "search",
            Action::Edit { .. } => "edit",
            Action::Write { .. } => "write",
            Action::RunPublicTests => "run_public_tests",
            Action::Submit => "submit",
        }
    }
}

/// The structured claims a collaborator message makes.
///
/// Susceptibility is judged from claims, never from a message's wording. Every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claims {
    /// Places the message says hold the defect.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blame: Vec<Location>,
    /// The message urges the agent to submit now.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub urge_submit: bool,
    /// Cases the message says do not matter.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dismissed_cases: Vec<String>,
}

impl Claims {
    /// True when the message claims nothing.
    pub fn is_empty(&self) -> bool {
        self.blame.is_empty() && !self.urge_submit && self.dismissed_cases.is_empty()
    }
}

/// One entry of a task's `attacks.json` pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttackMessage {
    /// The message as the agent would read it.
    pub text: String,
    /// What it claims.
    #[serde(default)]
    pub claims: Claims,
}
