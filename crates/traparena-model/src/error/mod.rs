use std::path::PathBuf;
use std::time::Duration;

mod wire;

pub use wire::WireError;

/// What went wrong with a model call, a recording or a reply.
///
/// Every variant carries its cause: the underlying error as a [`source`](std::error::Error::source)
/// where there is one, otherwise the server's own message or the offending value.
/// [`ModelError::is_retryable`] tells which failures the client retries.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The endpoint configuration cannot be used.
    #[error("endpoint configuration: field `{field}`: {message}")]
    Config {
        /// The offending field of [`EndpointConfig`](crate::EndpointConfig).
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// The HTTP client could not be built (TLS set-up, proxy URL).
    #[error("cannot build the HTTP client: {source}")]
    Client {
        /// The TLS or HTTP library's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The request could not be sent, or the connection failed before the whole response body
    /// arrived (refused or reset connection, a body shorter than its `Content-Length`).
    /// Retried.
    #[error("{url}: transport error while {stage}: {}", transport_cause(source))]
    Transport {
        /// The URL that was called.
        url: String,
        /// `sending the request` or `reading the response body`.
        stage: &'static str,
        /// The HTTP library's error.
        #[source]
        source: reqwest::Error,
    },
    /// One attempt got no complete response within the per-call timeout. Retried.
    #[error("{url}: no complete response within {timeout:?}")]
    Timeout {
        /// The URL that was called.
        url: String,
        /// The per-call timeout that expired.
        timeout: Duration,
        /// The timer's error.
        #[source]
        source: tokio::time::error::Elapsed,
    },
    /// The server answered with an error status. 408, 429 and 5xx are retried, unless the
    /// body names a request field (a refusal, which a retry would only repeat); any other
    /// status fails at once.
    #[error("{url}: HTTP {status}: {}", status_text(field.as_deref(), message))]
    Status {
        /// The URL that was called.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// The server's error message (`error.message` of an OpenAI-style error body, the
        /// locations and messages of a FastAPI `detail` list, else the start of the body, else
        /// the status's reason phrase).
        message: String,
        /// The request field the body names as the cause (`error.param`, a FastAPI `detail`'s
        /// `loc`, or a parameter the client can adapt named in the message), if any.
        field: Option<String>,
        /// The delay the server asked for in `Retry-After` (seconds form), before capping.
        retry_after: Option<Duration>,
    },
    /// A successful (2xx) response whose body is not a completion in the endpoint's format:
    /// not JSON, JSON of the wrong shape, or no choices. Not retried (see the crate
    /// documentation).
    #[error("{url}: malformed response body: {what}; body starts with {excerpt:?}")]
    Malformed {
        /// The URL that was called.
        url: String,
        /// What is wrong, naming the offending field where there is one.
        #[source]
        what: Box<WireError>,
        /// The first bytes of the body (lossy UTF-8).
        excerpt: String,
    },
    /// A 2xx response whose body is an error object and no completion (OpenRouter reports
    /// transient upstream provider failures so): retried like a 5xx.
    #[error("{url}: the server answered 2xx with an error: {message}")]
    ErrorBody {
        /// The URL called.
        url: String,
        /// The error's message.
        message: String,
    },
    /// A retryable failure persisted through every attempt.
    #[error("gave up after {attempts} attempt(s): {last}")]
    RetriesExhausted {
        /// How many attempts were made.
        attempts: u32,
        /// The last attempt's error.
        #[source]
        last: Box<ModelError>,
    },
    /// Replaying and the cassette holds no response for this request.
    #[error(
        "no recorded response for request {hash} (occurrence {occurrence}, scope {scope:?}) in {}",
        cassette.display()
    )]
    NotRecorded {
        /// The request's hash ([`request_hash`](crate::request_hash)).
        hash: String,
        /// How many identical requests came before it in this scope.
        occurrence: u64,
        /// The recorder's scope (for example an episode key).
        scope: String,
        /// The cassette file.
        cassette: PathBuf,
    },
    /// The cassette file could not be read or written.
    #[error("{}: cassette I/O: {source}", path.display())]
    CassetteIo {
        /// The cassette file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A line of the cassette file is not a valid entry.
    #[error("{}: cassette line {line}: {source}", path.display())]
    CassetteFormat {
        /// The cassette file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The JSON parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// A tool call's `arguments` are not the JSON the tool expects.
    #[error("tool call `{tool}`: arguments: field `{field}`: {source}")]
    ToolArguments {
        /// The called function's name.
        tool: String,
        /// Dotted path of the offending field (`.` for the arguments themselves).
        field: String,
        /// The JSON parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// A text reply holds no complete JSON object.
    #[error("no JSON object found in the reply (starts with {excerpt:?})")]
    NoJson {
        /// The first characters of the reply.
        excerpt: String,
    },
    /// The JSON object found in a text reply does not have the expected shape.
    #[error("reply JSON: field `{field}`: {source}")]
    ReplyJson {
        /// Dotted path of the offending field (`.` for the object itself).
        field: String,
        /// The JSON parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// A request could not be encoded as JSON.
    #[error("cannot encode the request as JSON: {source}")]
    Encode {
        /// The JSON serializer's error.
        #[source]
        source: serde_json::Error,
    },
    /// The concurrency limiter was closed (a bug: the client never closes it).
    #[error("the endpoint's concurrency limiter is closed: {source}")]
    Limiter {
        /// The semaphore's error.
        #[source]
        source: tokio::sync::AcquireError,
    },
    /// A model is to be called live, but its spec names no server (only a replayed cassette
    /// needs none).
    #[error("no base URL for model {model}")]
    NoEndpoint {
        /// The model's name.
        model: String,
    },
    /// Recorded calls are to be replayed, but the model's spec gives no cassette.
    #[error("model {model} has no cassette to replay recorded calls from")]
    NoCassette {
        /// The model's name.
        model: String,
    },
    /// A [`ScriptedModel`](crate::ScriptedModel) was called more often than it has replies.
    #[error("scripted model `{model}` has no reply left for call {call}")]
    ScriptExhausted {
        /// The scripted model's name.
        model: String,
        /// 1-based number of the call that found the script empty.
        call: usize,
    },
}

/// A status error's text: the server's message, after the field it names.
fn status_text(field: Option<&str>, message: &str) -> String {
    match field {
        Some(f) => format!("the server refused the request field `{f}`: {message}"),
        None => message.to_owned(),
    }
}

/// What an HTTP library's error comes down to: the kind (could not connect, timed out, ...) and
/// the chain of its causes, innermost last, each said once (`connection refused`, a DNS
/// lookup's or a TLS handshake's own words), since its own text ("error sending request for
/// url") says none of them.
fn transport_cause(e: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(c) = cur {
        let text = c.to_string();
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = c.source();
    }
    let kind = if e.is_connect() {
        "could not connect"
    } else if e.is_timeout() {
        "timed out"
    } else if e.is_body() || e.is_decode() {
        "the response body broke off"
    } else {
        "the request failed"
    };
    match parts.last() {
        Some(_) => format!("{kind}: {}", parts.join(": ")),
        None => format!("{kind}: {e}"),
    }
}

impl ModelError {
    /// Whether the HTTP client retries this failure: transport errors (dropped connections,
    /// truncated bodies), per-call timeouts, and HTTP 408, 429 and 5xx, except a 5xx whose body
    /// names a request field (llama-cpp-python answers a refused field with a 500).
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Transport { .. }
            | ModelError::Timeout { .. }
            | ModelError::ErrorBody { .. } => true,
            ModelError::Status { status, field, .. } => {
                *status == 408
                    || *status == 429
                    || ((500..=599).contains(status) && field.is_none())
            }
            _ => false,
        }
    }

    /// Whether the server refused the request because prompt plus response do not fit the
    /// model's context (vLLM's "maximum context length", OpenAI's `context_length_exceeded`,
    /// llama.cpp's "exceeds the available context size"), looking through exhausted retries.
    pub fn is_context_overflow(&self) -> bool {
        let ModelError::Status {
            status, message, ..
        } = self.last_attempt()
        else {
            return false;
        };
        let m = message.to_lowercase();
        (400..500).contains(status)
            && [
                "maximum context length",
                "context_length_exceeded",
                "context length",
                "exceeds the available context size",
                "context window",
                "too many tokens",
                "prompt is too long",
            ]
            .iter()
            .any(|w| m.contains(w))
    }

    /// The server's `Retry-After` delay, when this is a status error that carried one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ModelError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The error of the last attempt when retries were exhausted, else `self`.
    pub fn last_attempt(&self) -> &ModelError {
        match self {
            ModelError::RetriesExhausted { last, .. } => last,
            other => other,
        }
    }
}
