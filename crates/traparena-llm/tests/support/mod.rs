//! A scriptable OpenAI-compatible stub server on 127.0.0.1, speaking raw HTTP/1.1, so tests
//! can send malformed, truncated, slow or no responses.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;
use traparena_llm::{ChatClient, EndpointConfig};

/// Runs a test body with a hard deadline, so that no test can hang.
pub async fn bounded<F: Future>(body: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), body)
        .await
        .expect("test exceeded its 60 s deadline")
}

/// What the stub does with one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A complete response with this status, extra headers and body.
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// `Content-Length: declared` but only `body` is sent, then the connection closes.
    Truncated { declared: usize, body: String },
    /// Never answers (the connection stays open until the client gives up).
    Hang,
    /// Waits, then does the inner reply.
    Delayed(Duration, Box<Reply>),
}

impl Reply {
    pub fn json(status: u16, body: Value) -> Reply {
        Reply::Full {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.to_string(),
        }
    }

    pub fn raw(status: u16, body: &str) -> Reply {
        Reply::Full {
            status,
            headers: vec![],
            body: body.to_owned(),
        }
    }

    /// A chat completion saying `text`, with the given usage.
    pub fn text(text: &str, prompt: u64, completion: u64) -> Reply {
        Reply::json(
            200,
            completion_body(
                json!({"role": "assistant", "content": text}),
                "stop",
                prompt,
                completion,
            ),
        )
    }

    pub fn with_header(self, name: &str, value: &str) -> Reply {
        match self {
            Reply::Full {
                status,
                mut headers,
                body,
            } => {
                headers.push((name.into(), value.into()));
                Reply::Full {
                    status,
                    headers,
                    body,
                }
            }
            other => other,
        }
    }

    pub fn delayed(self, d: Duration) -> Reply {
        Reply::Delayed(d, Box::new(self))
    }
}

/// A vLLM-like completion body around `message`.
pub fn completion_body(message: Value, finish: &str, prompt: u64, completion: u64) -> Value {
    json!({
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "stub-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": null}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion},
        "system_fingerprint": null,
        "prompt_logprobs": null
    })
}

/// A request as the stub received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    script: Mutex<VecDeque<Reply>>,
    received: Mutex<Vec<Received>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    tasks: Mutex<Vec<AbortHandle>>,
}

/// The stub server; stops (aborting every connection) when dropped.
pub struct Stub {
    pub addr: SocketAddr,
    state: Arc<State>,
}

impl Stub {
    /// Starts a stub that answers requests with `script` in order; once the script is used up
    /// it answers 500 "stub: script exhausted".
    pub async fn start(script: Vec<Reply>) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State {
            script: Mutex::new(script.into()),
            ..State::default()
        });
        let s = state.clone();
        let accept = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let s2 = s.clone();
                let conn = tokio::spawn(async move { serve(stream, s2).await });
                s.tasks.lock().unwrap().push(conn.abort_handle());
            }
        });
        state.tasks.lock().unwrap().push(accept.abort_handle());
        Stub { addr, state }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn push(&self, reply: Reply) {
        self.state.script.lock().unwrap().push_back(reply);
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.received.lock().unwrap().clone()
    }

    pub fn request_count(&self) -> usize {
        self.state.received.lock().unwrap().len()
    }

    pub fn max_in_flight(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }

    /// A config for this stub with fast retries and a fixed jitter seed.
    pub fn config(&self) -> EndpointConfig {
        let mut c = EndpointConfig::new(self.base_url(), "test-model");
        c.timeout = Duration::from_secs(5);
        c.max_retries = 2;
        c.backoff_base = Duration::from_millis(10);
        c.backoff_max = Duration::from_millis(40);
        c.retry_after_max = Duration::from_secs(2);
        c.jitter_seed = 42;
        c
    }

    pub fn client(&self) -> ChatClient {
        ChatClient::new(self.config()).unwrap()
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        for t in self.state.tasks.lock().unwrap().drain(..) {
            t.abort();
        }
    }
}

async fn serve(mut stream: TcpStream, state: Arc<State>) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    state.received.lock().unwrap().push(request);
    let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    state.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let reply = state.script.lock().unwrap().pop_front().unwrap_or_else(|| {
        Reply::json(500, json!({"error": {"message": "stub: script exhausted"}}))
    });
    respond(&mut stream, reply, &state).await;
}

/// Does `reply`; the request stops counting as in flight just before the answer is written
/// (so a client that reacts to the answer at once is never counted twice).
async fn respond(stream: &mut TcpStream, mut reply: Reply, state: &State) {
    while let Reply::Delayed(d, inner) = reply {
        tokio::time::sleep(d).await;
        reply = *inner;
    }
    state.in_flight.fetch_sub(1, Ordering::SeqCst);
    let (head, body) = match reply {
        Reply::Delayed(..) => unreachable!("unwrapped above"),
        Reply::Hang => {
            // Hold the connection until the client drops it (or the stub stops).
            let mut buf = [0u8; 1];
            while let Ok(1..) = stream.read(&mut buf).await {}
            return;
        }
        Reply::Full {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} {}\r\nContent-Length: {}\r\nConnection: close\r\n",
                reason(status),
                body.len()
            );
            for (n, v) in headers {
                head.push_str(&format!("{n}: {v}\r\n"));
            }
            head.push_str("\r\n");
            (head, body)
        }
        Reply::Truncated { declared, body } => (
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                 Content-Length: {declared}\r\nConnection: close\r\n\r\n"
            ),
            body,
        ),
    };
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(body.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Whatever",
    }
}

/// Reads one request: the head up to the blank line, then `Content-Length` bytes of body.
async fn read_request(stream: &mut TcpStream) -> Option<Received> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or(Value::Null);
    Some(Received {
        method,
        path,
        headers,
        body,
    })
}
