//! The stub model server of `traparena-testkit`, with what these tests add: a client and a
//! config for it (fast retries, a fixed jitter seed), and a deadline for every test.
// Each test file uses a part of it.
#![allow(dead_code, unused_imports)]

use std::future::Future;
use std::time::Duration;

use traparena_llm::{ChatClient, EndpointConfig};
pub use traparena_testkit::stub::{Reply, StubServer as Stub, completion_body};

/// Runs a test body with a hard deadline, so that no test can hang.
pub async fn bounded<F: Future>(body: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), body)
        .await
        .expect("test exceeded its 60 s deadline")
}

/// A client of the stub.
pub trait StubClient {
    /// A config for this stub with fast retries and a fixed jitter seed.
    fn config(&self) -> EndpointConfig;
    /// A client with [`StubClient::config`].
    fn client(&self) -> ChatClient;
}

impl StubClient for Stub {
    fn config(&self) -> EndpointConfig {
        let mut c = EndpointConfig::new(self.base_url(), "test-model");
        c.timeout = Duration::from_secs(5);
        c.max_retries = 2;
        c.backoff_base = Duration::from_millis(10);
        c.backoff_max = Duration::from_millis(40);
        c.retry_after_max = Duration::from_secs(2);
        c.jitter_seed = 42;
        c
    }

    fn client(&self) -> ChatClient {
        ChatClient::new(self.config()).unwrap()
    }
}
