use traparena_model::ModelError;

/// What went wrong in the model-backed components' own code paths.
///
/// The agent, the attacker and the curator report a failed model call inside their trait's
/// error (`AgentError::Model`, `AttackError::Model`) and a reply they cannot read as an
/// outcome; what is left to fail here is the model layer underneath.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// A model call, a recording or a reply failed ([`ModelError`]).
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// Why no action could be read from a model's reply. Its text is what the agent tells the
/// model in the corrective observation, so it says what is wrong and where, in the model's
/// terms (the fields of the reply, the tools it was offered).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ActionError {
    /// The reply's JSON is not an object.
    #[error("the reply is not a JSON object")]
    NotObject,
    /// The object has no `action` field.
    #[error("the JSON object has no `action` field")]
    NoAction,
    /// The `action` field is not a string.
    #[error("`action` is not a string")]
    ActionNotString,
    /// The `action` field names no action.
    #[error("`action`: {message}")]
    UnknownAction {
        /// The reader's message (`unknown variant `fly`, expected one of ...`).
        message: String,
    },
    /// A field of the action is of the wrong type or value.
    #[error("field `{field}` of `{action}`: {message}")]
    Field {
        /// The action.
        action: String,
        /// The field at fault.
        field: String,
        /// The reader's message.
        message: String,
    },
    /// The action's fields do not read, for a reason that names no one field (a field
    /// missing or unknown).
    #[error("`{action}`: {message}")]
    Fields {
        /// The action.
        action: String,
        /// The reader's message (`missing field `path``).
        message: String,
    },
    /// A field-less action was given a field.
    #[error("`{action}`: unknown field `{field}`, there are no fields")]
    NoFields {
        /// The action.
        action: String,
        /// The field given.
        field: String,
    },
    /// A text reply with nothing in it.
    #[error("the reply is empty")]
    Empty,
    /// A text reply that holds no complete JSON object.
    #[error("the reply holds no complete JSON object")]
    NoJson,
    /// A tool call of a tool that was not offered.
    #[error("there is no tool named {name:?} (the tools are {tools})")]
    NoTool {
        /// The name called.
        name: String,
        /// The tools offered, comma-separated.
        tools: String,
    },
    /// A tool call whose arguments are not JSON.
    #[error("the arguments of `{tool}` are not JSON ({message})")]
    ArgumentsNotJson {
        /// The tool called.
        tool: String,
        /// The reader's message.
        message: String,
    },
    /// A tool call whose arguments are JSON but not an object.
    #[error("the arguments of `{tool}` are not a JSON object")]
    ArgumentsNotObject {
        /// The tool called.
        tool: String,
    },
    /// The reply ran out of tokens inside its reasoning, before any action.
    #[error("the reply stopped inside its reasoning, before any action: think less, then act")]
    CutOffInReasoning,
    /// The reply has reasoning and nothing after it.
    #[error("the reply has reasoning but no action after it")]
    ReasoningOnly,
}
