//! Endpoint configuration.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::ModelError;
use crate::wire::WireApi;

/// How the maximum response length is named in the request body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum MaxTokensField {
    /// `max_tokens` (vLLM, the llama.cpp server, most compatible servers).
    #[default]
    MaxTokens,
    /// `max_completion_tokens` (hosted models that refuse `max_tokens`).
    MaxCompletionTokens,
}

/// One OpenAI-compatible chat endpoint and how to call it.
///
/// Build it with [`EndpointConfig::new`] and adjust the public fields. The library reads no
/// environment variable: the command line fills this struct (see `docs/models.md`).
#[derive(Clone, PartialEq)]
pub struct EndpointConfig {
    /// The API base URL, up to and including the version (`http://127.0.0.1:8089/v1`,
    /// `https://api.example.com/v1`). Requests go to `{base_url}/chat/completions`; a base URL
    /// that already ends in `/chat/completions` is used as it is.
    pub base_url: String,
    /// The model name sent with every request.
    pub model: String,
    /// Sent as `Authorization: Bearer ...` when set. Never shown by `Debug`.
    pub api_key: Option<String>,
    /// Limit for one attempt: connecting, sending and reading the whole response.
    pub timeout: Duration,
    /// Retries after the first attempt (so at most `max_retries + 1` attempts).
    pub max_retries: u32,
    /// Backoff before the first retry; doubles with every further retry.
    pub backoff_base: Duration,
    /// Upper bound of the exponential backoff.
    pub backoff_max: Duration,
    /// Upper bound for a server's `Retry-After` delay.
    pub retry_after_max: Duration,
    /// Requests in flight at once, over all clones of the client.
    pub max_concurrency: usize,
    /// Seed of the ChaCha RNG that draws the backoff jitter.
    pub jitter_seed: u64,
    /// How the maximum response length is named in the body. A server that refuses
    /// `max_tokens` (hosted reasoning models want `max_completion_tokens`) is met by one
    /// automatic retry with the other name, which the response records.
    pub max_tokens_field: MaxTokensField,
    /// Never send a temperature (models that accept only their default). A server that refuses
    /// the temperature is met by one automatic retry without it, which the response records.
    pub omit_temperature: bool,
    /// An HTTP(S) proxy for every request (`http://proxy:3128`); `None` connects directly.
    /// Proxy environment variables are not consulted.
    pub proxy: Option<String>,
    /// The API the endpoint speaks (chat completions unless set): requests are translated
    /// into it and its answers back ([`crate::wire`]).
    pub api: WireApi,
}

impl EndpointConfig {
    /// Defaults: 600 s per attempt, 4 retries, backoff from 1 s up to 30 s, `Retry-After`
    /// capped at 120 s, 4 requests in flight, jitter seed 0, `max_tokens`, no proxy.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        EndpointConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(600),
            max_retries: 4,
            backoff_base: Duration::from_secs(1),
            backoff_max: Duration::from_secs(30),
            retry_after_max: Duration::from_secs(120),
            max_concurrency: 4,
            jitter_seed: 0,
            max_tokens_field: MaxTokensField::MaxTokens,
            omit_temperature: false,
            proxy: None,
            api: WireApi::ChatCompletions,
        }
    }

    /// Sets the API key.
    pub fn with_api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// The chat-completions URL.
    pub fn chat_completions_url(&self) -> String {
        self.url_of(WireApi::ChatCompletions)
    }

    /// The URL requests go to: the endpoint of [`EndpointConfig::api`] under the base URL
    /// (a base URL that already ends in it is used as it is).
    pub fn url(&self) -> String {
        self.url_of(self.api)
    }

    fn url_of(&self, api: WireApi) -> String {
        let base = self.base_url.trim_end_matches('/');
        let path = api.path();
        if base.ends_with(&format!("/{path}")) {
            base.to_owned()
        } else {
            format!("{base}/{path}")
        }
    }

    /// Checks the fields a client needs.
    pub fn validate(&self) -> Result<(), ModelError> {
        let bad = |field, message: &str| {
            Err(ModelError::Config {
                field,
                message: message.to_owned(),
            })
        };
        let url = self.base_url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return bad(
                "base_url",
                &format!("{url:?} is not an http:// or https:// URL"),
            );
        }
        if self.model.trim().is_empty() {
            return bad("model", "is empty");
        }
        if self.timeout.is_zero() {
            return bad("timeout", "is zero");
        }
        if self.max_concurrency == 0 {
            return bad("max_concurrency", "is zero");
        }
        if self
            .api_key
            .as_deref()
            .is_some_and(|k| k.contains(['\r', '\n']))
        {
            return bad("api_key", "contains a line break");
        }
        Ok(())
    }
}

impl fmt::Debug for EndpointConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EndpointConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("backoff_base", &self.backoff_base)
            .field("backoff_max", &self.backoff_max)
            .field("retry_after_max", &self.retry_after_max)
            .field("max_concurrency", &self.max_concurrency)
            .field("jitter_seed", &self.jitter_seed)
            .field("max_tokens_field", &self.max_tokens_field)
            .field("omit_temperature", &self.omit_temperature)
            .field("proxy", &self.proxy)
            .field("api", &self.api)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_join_and_validation() {
        let c = EndpointConfig::new("http://h:1/v1/", "m");
        assert_eq!(c.chat_completions_url(), "http://h:1/v1/chat/completions");
        let c = EndpointConfig::new("http://h:1/v1/chat/completions", "m");
        assert_eq!(c.chat_completions_url(), "http://h:1/v1/chat/completions");
        assert!(c.validate().is_ok());
        let err = EndpointConfig::new("h:1", "m").validate().unwrap_err();
        assert!(err.to_string().contains("base_url"), "{err}");
        assert!(EndpointConfig::new("http://h", " ").validate().is_err());
    }

    #[test]
    fn debug_hides_the_key() {
        let c = EndpointConfig::new("http://h", "m").with_api_key("sk-secret");
        let shown = format!("{c:?}");
        assert!(
            !shown.contains("sk-secret") && shown.contains("<redacted>"),
            "{shown}"
        );
    }
}
