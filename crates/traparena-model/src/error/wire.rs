//! What can be wrong with a body in one of the wire formats ([`crate::wire`]).

/// A body that cannot be read in its wire format, or holds what cannot be carried into chat
/// completions.
///
/// The injecting proxy answers a client's unreadable request with this error's text (HTTP
/// 400, in the client's format); the client reports an upstream's unreadable answer as
/// [`ModelError::Malformed`](crate::ModelError::Malformed), or an error object in it as
/// [`ModelError::ErrorBody`](crate::ModelError::ErrorBody). Each text names where in the body
/// the problem is (`messages[2].content[0]`) and what it found there.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// The body is not JSON.
    #[error("the body is not JSON: {source}")]
    NotJson {
        /// The JSON parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// The body is JSON but not an object.
    #[error("the body is not a JSON object")]
    NotObject,
    /// A request lacks a field the format requires, or has it of the wrong type.
    #[error("the body has no `{field}` {wanted}")]
    NoField {
        /// The field (`messages`, `input`).
        field: &'static str,
        /// What it should be (`list`, `(a text or a list of items)`).
        wanted: &'static str,
    },
    /// A chat completions request whose field at `path` has the wrong type or value.
    #[error("not a chat completions request: {path}: {source}")]
    NotARequest {
        /// The field's path (`messages[0].role`).
        path: String,
        /// The JSON reader's error.
        #[source]
        source: serde_json::Error,
    },
    /// A content part that is not text (an image, a document): only text is passed on.
    #[error("{at}: only text is passed on (a part of type {kind:?} is not)")]
    NotText {
        /// Where the content is (`messages[1]`).
        at: String,
        /// The part's type (`image_url`, `input_image`).
        kind: String,
    },
    /// A content part with neither text nor a type.
    #[error("{at}: a content part without text")]
    NoText {
        /// Where the content is.
        at: String,
    },
    /// Content that is neither text nor a list of parts.
    #[error("{at}: content is neither text nor a list ({found})")]
    NotContent {
        /// Where the content is.
        at: String,
        /// The content, as JSON.
        found: String,
    },
    /// An Anthropic Messages block that chat completions has no place for (an image, a
    /// document, a server tool's result) in a turn of this role.
    #[error("{at}: a {kind:?} block of a {role:?} turn is not passed on")]
    Block {
        /// Where the block is (`messages[0].content[1]`).
        at: String,
        /// The block's type.
        kind: String,
        /// The role of the turn that holds it.
        role: String,
    },
    /// A turn or item of a role that chat completions has no place for.
    #[error("{at}: role {role:?} {why}")]
    Role {
        /// Where the turn is.
        at: String,
        /// Its role.
        role: String,
        /// Why it is refused (`is neither user, assistant nor system`).
        why: &'static str,
    },
    /// An OpenAI Responses input item of a type chat completions has no place for.
    #[error("{at}: an item of type {kind:?} is not passed on")]
    Item {
        /// Where the item is (`input[3]`).
        at: String,
        /// Its type (`local_shell_call`).
        kind: String,
    },
    /// A feature of the format that TrapArena refuses (the Responses API's stored state).
    #[error("{feature} is not supported: {instead}")]
    Unsupported {
        /// The feature (`previous_response_id`).
        feature: &'static str,
        /// What to do instead.
        instead: &'static str,
    },
    /// An answer that is the server's error object rather than a completion.
    #[error("the server says: {message}")]
    ErrorBody {
        /// The server's message (`error.message`, or the error as JSON).
        message: String,
    },
    /// An answer that lacks a field the format requires, or has it of the wrong type.
    #[error("field `{field}` {problem}")]
    Field {
        /// The field (`choices`, `content`, `output`).
        field: &'static str,
        /// What is wrong with it (`is missing`, `is not a list`, `is empty`).
        problem: &'static str,
    },
    /// A chat completion whose field at `path` has the wrong type or value.
    #[error("field `{path}` has the wrong shape ({source})")]
    Shape {
        /// The field's path (`choices[0].message.tool_calls`).
        path: String,
        /// The JSON reader's error.
        #[source]
        source: serde_json::Error,
    },
}
