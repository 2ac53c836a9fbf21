//! The HTTP client for OpenAI-compatible chat completions.

use parking_lot::Mutex;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use serde_json::Value;
use tokio::sync::Semaphore;

use crate::adapt::{Adapted, named_field, refused};
use crate::config::EndpointConfig;
use crate::error::ModelError;
use crate::model::ChatModel;
use crate::reading::{context_window_of, parse_completion, server_message};
use crate::types::{ChatRequest, ChatResponse};
use crate::wire::KeyHeader;

/// A client for one OpenAI-compatible endpoint (`POST {base_url}/chat/completions`).
///
/// Cheap to clone; clones share the connection pool, the concurrency limit
/// ([`EndpointConfig::max_concurrency`] requests in flight over all clones) and the jitter RNG.
/// Retries 408, 429, 5xx, per-call timeouts and transport failures with exponential backoff
/// and seeded jitter, waiting at least a server's `Retry-After` (capped); any other failure is
/// returned at once.
#[derive(Clone)]
pub struct ChatClient {
    inner: Arc<Inner>,
}

struct Inner {
    config: EndpointConfig,
    url: String,
    http: reqwest::Client,
    limiter: Arc<Semaphore>,
    backoff: Mutex<Backoff>,
    /// Parameters the server refused, learnt once and kept for every later call.
    adapted: Mutex<Adapted>,
}

impl fmt::Debug for ChatClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatClient")
            .field("config", &self.inner.config)
            .field("available_permits", &self.inner.limiter.available_permits())
            .finish_non_exhaustive()
    }
}

impl ChatClient {
    /// Checks `config` and builds the client (TLS through rustls with the ring provider and the
    /// platform's certificate verifier). Makes no request.
    pub fn new(config: EndpointConfig) -> Result<Self, ModelError> {
        let limiter = Arc::new(Semaphore::new(config.max_concurrency));
        Self::with_limiter(config, limiter)
    }

    /// Like [`ChatClient::new`], but requests take their slots from `limiter` instead of a new
    /// semaphore of [`EndpointConfig::max_concurrency`] permits: for separately configured
    /// clients (say, target and attacker models) served by the same endpoint. Clones of one
    /// client share their limiter anyway.
    pub fn with_limiter(
        config: EndpointConfig,
        limiter: Arc<Semaphore>,
    ) -> Result<Self, ModelError> {
        config.validate()?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(client_error)?;
        let tls = rustls_platform_verifier::BuilderVerifierExt::with_platform_verifier(tls)
            .map_err(client_error)?
            .with_no_client_auth();
        let mut builder = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .connect_timeout(config.timeout)
            .user_agent(concat!("traparena-llm/", env!("CARGO_PKG_VERSION")));
        builder = match &config.proxy {
            Some(proxy) => builder.proxy(reqwest::Proxy::all(proxy).map_err(client_error)?),
            None => builder.no_proxy(),
        };
        let http = builder.build().map_err(client_error)?;
        Ok(ChatClient {
            inner: Arc::new(Inner {
                url: config.url(),
                http,
                limiter,
                backoff: Mutex::new(Backoff::new(&config)),
                adapted: Mutex::new(Adapted::from_config(&config)),
                config,
            }),
        })
    }

    /// The endpoint's configuration.
    pub fn config(&self) -> &EndpointConfig {
        &self.inner.config
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// The semaphore that bounds requests in flight (see [`ChatClient::with_limiter`]).
    pub fn limiter(&self) -> &Arc<Semaphore> {
        &self.inner.limiter
    }

    /// The model's context window in tokens, asked of the server: vLLM and SGLang report
    /// `max_model_len` for each model of `GET {base_url}/models`; the llama.cpp server reports
    /// `n_ctx` at `GET /props` (beside `/v1`). `Ok(None)` when the server tells neither (a
    /// hosted API); an error only when the server cannot be reached at all.
    pub async fn context_window(&self) -> Result<Option<u32>, ModelError> {
        let base = self.inner.config.base_url.trim_end_matches('/');
        let base = base.strip_suffix("/chat/completions").unwrap_or(base);
        let root = base.strip_suffix("/v1").unwrap_or(base);
        let model = &self.inner.config.model;
        let mut reached = false;
        let mut last_err = None;
        for url in [format!("{base}/models"), format!("{root}/props")] {
            let mut req = self.inner.http.get(&url);
            if let Some(key) = &self.inner.config.api_key {
                req = req.bearer_auth(key);
            }
            let fut = async {
                let resp = req.send().await?;
                let ok = resp.status().is_success();
                let bytes = resp.bytes().await?;
                Ok::<_, reqwest::Error>((ok, bytes))
            };
            let (ok, bytes) = match tokio::time::timeout(self.inner.config.timeout, fut).await {
                Ok(Ok(r)) => r,
                Ok(Err(source)) => {
                    last_err = Some(ModelError::Transport {
                        url: url.clone(),
                        stage: "asking for the context window",
                        source,
                    });
                    continue;
                }
                Err(source) => {
                    last_err = Some(ModelError::Timeout {
                        url: url.clone(),
                        timeout: self.inner.config.timeout,
                        source,
                    });
                    continue;
                }
            };
            reached = true;
            let Some(v) = ok
                .then(|| serde_json::from_slice::<Value>(&bytes).ok())
                .flatten()
            else {
                continue;
            };
            if let Some(n) = context_window_of(&v, model) {
                return Ok(Some(n));
            }
        }
        match (reached, last_err) {
            (false, Some(e)) => Err(e),
            _ => Ok(None),
        }
    }

    /// Free slots of the concurrency limit right now.
    pub fn available_permits(&self) -> usize {
        self.inner.limiter.available_permits()
    }

    /// The JSON body sent for `request`: its fields plus `model` (and `max_tokens` renamed
    /// when the endpoint asks for `max_completion_tokens`, the temperature left out when it
    /// takes none, both as configured or as learnt from a refusal; a `json_schema` response
    /// format sent as `json_object`, or none, with the JSON instruction in the system message,
    /// when the server refused it).
    pub fn request_body(&self, request: &ChatRequest) -> Result<Value, ModelError> {
        let adapted = *self.inner.adapted.lock();
        self.body_with(request, adapted)
    }

    fn body_with(&self, request: &ChatRequest, adapted: Adapted) -> Result<Value, ModelError> {
        let value =
            serde_json::to_value(request).map_err(|source| ModelError::Encode { source })?;
        let Value::Object(mut body) = value else {
            unreachable!("a ChatRequest serializes to a JSON object")
        };
        body.insert(
            "model".to_owned(),
            Value::String(self.inner.config.model.clone()),
        );
        adapted.apply(&mut body, request);
        // Another format is made of the adapted chat body, so that a learnt rename or a
        // dropped temperature holds there too.
        self.inner
            .config
            .api
            .format()
            .upstream_body(body, &self.inner.config.model)
            .map_err(|source| ModelError::Encode { source })
    }

    /// One attempt under the concurrency limit and the per-call timeout.
    async fn attempt(&self, body: &[u8]) -> Result<ChatResponse, ModelError> {
        let inner = &self.inner;
        let _permit = inner
            .limiter
            .acquire()
            .await
            .map_err(|source| ModelError::Limiter { source })?;
        match tokio::time::timeout(inner.config.timeout, self.exchange(body)).await {
            Ok(result) => result,
            Err(source) => Err(ModelError::Timeout {
                url: inner.url.clone(),
                timeout: inner.config.timeout,
                source,
            }),
        }
    }

    /// Sends the body and reads the whole response.
    async fn exchange(&self, body: &[u8]) -> Result<ChatResponse, ModelError> {
        let inner = &self.inner;
        let transport = |stage| {
            move |source| ModelError::Transport {
                url: inner.url.clone(),
                stage,
                source,
            }
        };
        let mut request = inner
            .http
            .post(&inner.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .body(body.to_vec());
        let format = inner.config.api.format();
        for (name, value) in format.headers() {
            request = request.header(*name, *value);
        }
        if let Some(key) = &inner.config.api_key {
            request = match format.key_header() {
                KeyHeader::Named(name) => request.header(name, key),
                KeyHeader::Bearer => request.bearer_auth(key),
            };
        }
        let response = request
            .send()
            .await
            .map_err(transport("sending the request"))?;
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let bytes = response
            .bytes()
            .await
            .map_err(transport("reading the response body"))?;
        if !status.is_success() {
            let message = server_message(&bytes)
                .unwrap_or_else(|| status.canonical_reason().unwrap_or("").to_owned());
            return Err(ModelError::Status {
                url: inner.url.clone(),
                status: status.as_u16(),
                field: named_field(&bytes, &message),
                message,
                retry_after,
            });
        }
        parse_completion(&inner.url, &bytes, inner.config.api)
    }
}

#[async_trait]
impl ChatModel for ChatClient {
    fn model(&self) -> &str {
        &self.inner.config.model
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let lock = || self.inner.adapted.lock();
        let mut adapted = *lock();
        let encode = |a| {
            serde_json::to_vec(&self.body_with(request, a)?)
                .map_err(|source| ModelError::Encode { source })
        };
        let mut body = encode(adapted)?;
        let mut adjustments = Vec::new();
        let mut attempts = 0;
        loop {
            attempts += 1;
            match self.attempt(&body).await {
                Ok(mut response) => {
                    response.adjustments = adjustments;
                    return Ok(response);
                }
                // A refused parameter is renamed, dropped or stepped down once, without counting
                // as a retry; what this request sent is stepped from, and what every clone
                // learnt is kept.
                Err(e) if let Some(r) = refused(&e) => {
                    let Some(note) = adapted.step(r, request) else {
                        return Err(e);
                    };
                    adjustments.push(format!("the server refused a parameter ({e}); {note}"));
                    let mut shared = lock();
                    *shared = shared.merge(adapted);
                    adapted = *shared;
                    drop(shared);
                    body = encode(adapted)?;
                    attempts -= 1;
                }
                Err(e) if !e.is_retryable() => return Err(e),
                Err(e) if attempts > self.inner.config.max_retries => {
                    return Err(ModelError::RetriesExhausted {
                        attempts,
                        last: Box::new(e),
                    });
                }
                Err(e) => {
                    let delay = self.inner.backoff.lock().delay(attempts, e.retry_after());
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }
}

fn client_error(e: impl std::error::Error + Send + Sync + 'static) -> ModelError {
    ModelError::Client {
        source: Box::new(e),
    }
}

/// `Retry-After` in its seconds form (decimals accepted), or OpenAI's `retry-after-ms`.
/// The HTTP-date form is ignored (the normal backoff applies).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| -> Option<f64> {
        let v: f64 = headers.get(name)?.to_str().ok()?.trim().parse().ok()?;
        (v.is_finite() && v >= 0.0).then_some(v)
    };
    if let Some(ms) = number("retry-after-ms") {
        return Some(Duration::from_secs_f64((ms / 1000.0).min(1e9)));
    }
    number("retry-after").map(|s| Duration::from_secs_f64(s.min(1e9)))
}

/// Exponential backoff with "equal jitter" from a seeded ChaCha RNG.
#[derive(Debug)]
struct Backoff {
    base: Duration,
    max: Duration,
    retry_after_max: Duration,
    rng: ChaCha8Rng,
}

impl Backoff {
    fn new(config: &EndpointConfig) -> Self {
        Backoff {
            base: config.backoff_base,
            max: config.backoff_max,
            retry_after_max: config.retry_after_max,
            rng: ChaCha8Rng::seed_from_u64(config.jitter_seed),
        }
    }

    /// The wait after the `failed`-th failed attempt (1-based): `d = min(max, base * 2^(failed-1))`,
    /// drawn uniformly from `[d/2, d]`, and at least `min(retry_after, retry_after_max)`.
    fn delay(&mut self, failed: u32, retry_after: Option<Duration>) -> Duration {
        let factor = 1u32
            .checked_shl(failed.saturating_sub(1))
            .unwrap_or(u32::MAX);
        let full = self.base.saturating_mul(factor).min(self.max);
        let half = full / 2;
        let span = u64::try_from((full - half).as_nanos()).unwrap_or(u64::MAX);
        let jitter = match span.checked_add(1) {
            Some(n) => self.rng.next_u64() % n,
            None => self.rng.next_u64(),
        };
        let delay = half + Duration::from_nanos(jitter);
        match retry_after {
            Some(ra) => delay.max(ra.min(self.retry_after_max)),
            None => delay,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MaxTokensField;
    use reqwest::header::HeaderValue;

    fn backoff(seed: u64) -> Backoff {
        let mut c = EndpointConfig::new("http://h", "m");
        c.backoff_base = Duration::from_millis(100);
        c.backoff_max = Duration::from_millis(1000);
        c.retry_after_max = Duration::from_secs(5);
        c.jitter_seed = seed;
        Backoff::new(&c)
    }

    #[test]
    fn backoff_grows_is_bounded_and_reproducible() {
        let mut a = backoff(7);
        let mut b = backoff(7);
        for failed in 1..=40 {
            let d = a.delay(failed, None);
            assert_eq!(d, b.delay(failed, None));
            let full = Duration::from_millis(100)
                .saturating_mul(1u32.checked_shl(failed - 1).unwrap_or(u32::MAX))
                .min(Duration::from_millis(1000));
            assert!(d >= full / 2 && d <= full, "{failed}: {d:?}");
        }
        let seq = |seed| {
            let mut b = backoff(seed);
            (1..=5).map(|i| b.delay(i, None)).collect::<Vec<_>>()
        };
        assert_ne!(seq(1), seq(2));
    }

    #[test]
    fn retry_after_is_honoured_and_capped() {
        let mut b = backoff(0);
        assert!(b.delay(1, Some(Duration::from_secs(2))) >= Duration::from_secs(2));
        assert_eq!(
            b.delay(1, Some(Duration::from_secs(3600))),
            Duration::from_secs(5)
        );
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static(" 3 "));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(1500)));
    }

    #[test]
    fn builds_for_https_and_renames_max_tokens() {
        let mut c = EndpointConfig::new("https://api.example.invalid/v1", "m");
        c.max_tokens_field = MaxTokensField::MaxCompletionTokens;
        let client = ChatClient::new(c).unwrap();
        let body = client
            .request_body(&ChatRequest::new(vec![]).with_max_tokens(9))
            .unwrap();
        assert_eq!(body["max_completion_tokens"], 9);
        assert!(body.get("max_tokens").is_none());
        assert_eq!(body["model"], "m");
    }
}
