//! A scripted OpenAI-compatible model server on 127.0.0.1, speaking raw HTTP/1.1 on its own
//! threads, so that tests (async or not, in-process clients or a spawned `traparena`) can send
//! well-formed, malformed, truncated, slow or no responses, and see every request.
//!
//! ```
//! use traparena_testkit::stub::{Reply, StubServer};
//!
//! // Every request gets the next reply of the script.
//! let stub = StubServer::start(vec![Reply::text("Hi!", 12, 3)]);
//! assert!(stub.base_url().starts_with("http://127.0.0.1:"));
//! assert_eq!(stub.request_count(), 0);
//!
//! // A vLLM-like server: `/v1/models` is answered, chat completions come from the closure.
//! let stub = StubServer::vllm(|_request| Reply::text("ok", 1, 1));
//! # drop(stub);
//!
//! // A llama-cpp-python-like server: a `json_schema` response format is refused with its
//! // HTTP 500, everything else comes from the closure.
//! let stub = StubServer::llama_cpp_python(&["text", "json_object"], |_request| {
//!     Reply::text("{}", 1, 1)
//! });
//! # drop(stub);
//! ```

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The model the vLLM-like server ([`StubServer::vllm`]) serves.
pub const STUB_MODEL: &str = "stub-model";
/// Its context window, as `max_model_len` of `/v1/models`.
pub const STUB_CONTEXT: u32 = 32_768;

/// What the stub does with one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A complete response with this status, extra headers and body.
    Full {
        /// The status code.
        status: u16,
        /// Headers besides `Content-Length` and `Connection`.
        headers: Vec<(String, String)>,
        /// The body.
        body: String,
    },
    /// `Content-Length: declared` but only `body` is sent, then the connection closes.
    Truncated {
        /// The length announced.
        declared: usize,
        /// What is sent.
        body: String,
    },
    /// Never answers (the connection stays open until the client gives up or the stub stops).
    Hang,
    /// Waits, then does the inner reply.
    Delayed(Duration, Box<Reply>),
}

impl Reply {
    /// A JSON response.
    pub fn json(status: u16, body: Value) -> Reply {
        Reply::Full {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.to_string(),
        }
    }

    /// A response with this body as it is, and no content type.
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

    /// A FastAPI/pydantic `literal_error`, as llama-cpp-python answers a request field whose
    /// value is not one of `allowed`: `{"detail":[{"type":"literal_error","loc":["body",
    /// ...loc],"msg":"Input should be 'a' or 'b'","input":..,"ctx":{"expected":"'a' or 'b'"}}]}`,
    /// byte for byte (llama-cpp-python sends it with status 500; plain FastAPI with 422).
    pub fn literal_error(status: u16, loc: &[&str], input: &Value, allowed: &[&str]) -> Reply {
        let quoted: Vec<String> = allowed.iter().map(|a| format!("'{a}'")).collect();
        let expected = match quoted.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => quoted.concat(),
        };
        let loc: Vec<&str> = ["body"].into_iter().chain(loc.iter().copied()).collect();
        let string = |s: &str| Value::String(s.to_owned()).to_string();
        let body = format!(
            r#"{{"detail":[{{"type":"literal_error","loc":{},"msg":{},"input":{},"ctx":{{"expected":{}}}}}]}}"#,
            json!(loc),
            string(&format!("Input should be {expected}")),
            input,
            string(&expected),
        );
        Reply::Full {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body,
        }
    }

    /// The same reply with one more header.
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

    /// The same reply after a wait.
    pub fn delayed(self, d: Duration) -> Reply {
        Reply::Delayed(d, Box::new(self))
    }
}

/// A vLLM-like chat completion body around `message`.
pub fn completion_body(message: Value, finish: &str, prompt: u64, completion: u64) -> Value {
    json!({
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 1700000000,
        "model": STUB_MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": null}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion},
        "system_fingerprint": null,
        "prompt_logprobs": null
    })
}

/// A finished answer `reply` (text) to `request`, with usage sized as a server would count
/// it (about four bytes a token: the request body for the prompt, the reply for the
/// completion) and the request's model: usage that depends only on what was asked.
pub fn sized_answer(request: &Value, reply: &str) -> Value {
    let prompt = request.to_string().len() as u64 / 4;
    let completion = reply.len() as u64 / 4 + 1;
    let mut body = completion_body(
        json!({"role": "assistant", "content": reply}),
        "stop",
        prompt,
        completion,
    );
    body["model"] = request["model"].clone();
    body
}

/// A request as the stub received it.
#[derive(Debug, Clone)]
pub struct Received {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path (`/v1/chat/completions`).
    pub path: String,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Null` without one, or when it is not JSON).
    pub body: Value,
}

impl Received {
    /// A header's value (the name compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether this is a chat completion request.
    pub fn is_chat(&self) -> bool {
        self.method == "POST" && self.path == "/v1/chat/completions"
    }
}

type Responder = Box<dyn FnMut(&Received) -> Reply + Send>;

struct State {
    script: Mutex<VecDeque<Reply>>,
    responder: Mutex<Option<Responder>>,
    received: Mutex<Vec<Received>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    stop: AtomicBool,
    connections: Mutex<Vec<(TcpStream, JoinHandle<()>)>>,
    panics: Mutex<Vec<String>>,
}

/// Locks a mutex even when a panicking thread poisoned it (the stub records panics itself).
/// The stub server. Stops when dropped (or [`StubServer::stop`]ped): every connection is
/// closed and its port refuses connections. A responder that panicked makes the drop panic
/// too, unless the test is already panicking.
pub struct StubServer {
    /// Where it listens.
    pub addr: SocketAddr,
    state: Arc<State>,
    accept: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for StubServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StubServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl StubServer {
    /// A stub that answers every request, whatever its path, with the next reply of `script`
    /// (and more pushed with [`StubServer::push`]); once the script is used up it answers 500
    /// "stub: script exhausted".
    pub fn start(script: Vec<Reply>) -> StubServer {
        StubServer::launch(script, None)
    }

    /// A stub that answers every request with `respond(request)`.
    pub fn serve(respond: impl FnMut(&Received) -> Reply + Send + 'static) -> StubServer {
        StubServer::launch(Vec::new(), Some(Box::new(respond)))
    }

    /// A stub that behaves like vLLM: `GET /v1/models` lists [`STUB_MODEL`] with
    /// `max_model_len` [`STUB_CONTEXT`], `POST /v1/chat/completions` is answered with
    /// `respond(request)`, and anything else is 404 `{"detail": "Not Found"}`.
    pub fn vllm(mut respond: impl FnMut(&Received) -> Reply + Send + 'static) -> StubServer {
        StubServer::serve(move |r| {
            if r.method == "GET" && r.path == "/v1/models" {
                Reply::json(
                    200,
                    json!({"object": "list", "data": [{
                        "id": STUB_MODEL, "object": "model", "owned_by": "vllm",
                        "max_model_len": STUB_CONTEXT
                    }]}),
                )
            } else if r.is_chat() {
                respond(r)
            } else {
                Reply::json(404, json!({"detail": "Not Found"}))
            }
        })
    }

    /// A stub that behaves like Anthropic's API: `POST /v1/messages` without an
    /// `anthropic-version` header is refused (400, Anthropic's error body), with one it is
    /// answered with `respond(request)`; anything else is 404 in Anthropic's error shape.
    pub fn anthropic(mut respond: impl FnMut(&Received) -> Reply + Send + 'static) -> StubServer {
        let error = |status: u16, kind: &str, message: &str| {
            Reply::json(
                status,
                json!({"type": "error", "error": {"type": kind, "message": message}}),
            )
        };
        StubServer::serve(move |r| {
            if r.method != "POST" || r.path != "/v1/messages" {
                error(404, "not_found_error", "Not found")
            } else if r.header("anthropic-version").is_none() {
                error(
                    400,
                    "invalid_request_error",
                    "anthropic-version: header is required",
                )
            } else {
                respond(r)
            }
        })
    }

    /// A stub that answers OpenAI Responses requests (`POST /v1/responses`) with
    /// `respond(request)`, and anything else with OpenAI's 404 error body.
    pub fn openai_responses(
        mut respond: impl FnMut(&Received) -> Reply + Send + 'static,
    ) -> StubServer {
        StubServer::serve(move |r| {
            if r.method == "POST" && r.path == "/v1/responses" {
                respond(r)
            } else {
                Reply::json(
                    404,
                    json!({"error": {"message": format!("Invalid URL ({} {})", r.method, r.path),
                        "type": "invalid_request_error", "param": null, "code": null}}),
                )
            }
        })
    }

    /// A stub that behaves like llama-cpp-python's server (`python -m llama_cpp.server`):
    /// `GET /v1/models` lists [`STUB_MODEL`] with no context window, a chat completion whose
    /// `response_format.type` is not one of `formats` is refused with HTTP 500 and the
    /// validation error llama-cpp-python sends ([`Reply::literal_error`]; the real server takes
    /// `text` and `json_object`), other chat completions are answered with `respond(request)`,
    /// and anything else is 404 `{"detail": "Not Found"}`.
    pub fn llama_cpp_python(
        formats: &[&str],
        mut respond: impl FnMut(&Received) -> Reply + Send + 'static,
    ) -> StubServer {
        let formats: Vec<String> = formats.iter().map(|f| (*f).to_owned()).collect();
        StubServer::serve(move |r| {
            if r.method == "GET" && r.path == "/v1/models" {
                return Reply::json(
                    200,
                    json!({"object": "list", "data": [{
                        "id": STUB_MODEL, "object": "model", "owned_by": "me", "permissions": []
                    }]}),
                );
            }
            if !r.is_chat() {
                return Reply::json(404, json!({"detail": "Not Found"}));
            }
            if let Some(t) = r.body.pointer("/response_format/type")
                && !t.as_str().is_some_and(|t| formats.iter().any(|f| f == t))
            {
                let allowed: Vec<&str> = formats.iter().map(String::as_str).collect();
                return Reply::literal_error(500, &["response_format", "type"], t, &allowed);
            }
            respond(r)
        })
    }

    fn launch(script: Vec<Reply>, responder: Option<Responder>) -> StubServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().expect("a bound address");
        let state = Arc::new(State {
            script: Mutex::new(script.into()),
            responder: Mutex::new(responder),
            received: Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            connections: Mutex::new(Vec::new()),
            panics: Mutex::new(Vec::new()),
        });
        let s = state.clone();
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let Ok(handle) = conn.try_clone() else {
                    continue;
                };
                let s2 = s.clone();
                let thread = std::thread::spawn(move || serve(conn, &s2));
                s.connections.lock().push((handle, thread));
            }
        });
        StubServer {
            addr,
            state,
            accept: Some(accept),
        }
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Adds a reply to the end of the script.
    pub fn push(&self, reply: Reply) {
        self.state.script.lock().push_back(reply);
    }

    /// Every request received, in order.
    pub fn received(&self) -> Vec<Received> {
        self.state.received.lock().clone()
    }

    /// The bodies of the chat completion requests received, in order.
    pub fn chat_requests(&self) -> Vec<Value> {
        self.state
            .received
            .lock()
            .iter()
            .filter(|r| r.is_chat())
            .map(|r| r.body.clone())
            .collect()
    }

    /// The bodies of the `POST` requests to `path` (`/v1/messages`), in order.
    pub fn bodies(&self, path: &str) -> Vec<Value> {
        self.state
            .received
            .lock()
            .iter()
            .filter(|r| r.method == "POST" && r.path == path)
            .map(|r| r.body.clone())
            .collect()
    }

    /// How many requests were received.
    pub fn request_count(&self) -> usize {
        self.state.received.lock().len()
    }

    /// The most requests that were being answered at once.
    pub fn max_in_flight(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }

    /// Stops the server: open connections are closed, and the port refuses connections
    /// afterwards. Panics if a responder panicked, unless the thread is already panicking.
    pub fn stop(&mut self) {
        let Some(accept) = self.accept.take() else {
            return;
        };
        self.state.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop, which then sees `stop`.
        let _ = TcpStream::connect(self.addr);
        let _ = accept.join();
        let connections: Vec<_> = self.state.connections.lock().drain(..).collect();
        for (stream, _) in &connections {
            let _ = stream.shutdown(Shutdown::Both);
        }
        for (_, thread) in connections {
            let _ = thread.join();
        }
        let panics = self.state.panics.lock().clone();
        if !panics.is_empty() && !std::thread::panicking() {
            panic!(
                "the stub server's responder panicked: {}",
                panics.join("; ")
            );
        }
    }
}

impl Drop for StubServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn serve(mut stream: TcpStream, state: &State) {
    stream.set_read_timeout(Some(Duration::from_secs(30))).ok();
    let Some(request) = read_request(&mut stream) else {
        return;
    };
    state.received.lock().push(request.clone());
    let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    state.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let reply = answer(state, &request);
    respond(&mut stream, reply, state);
}

/// The reply to `request`: the responder's, else the script's next.
fn answer(state: &State, request: &Received) -> Reply {
    let mut responder = state.responder.lock();
    if let Some(respond) = responder.as_mut() {
        let run = std::panic::AssertUnwindSafe(|| respond(request));
        return match std::panic::catch_unwind(run) {
            Ok(reply) => reply,
            Err(p) => {
                let why = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "a panic".to_owned());
                state.panics.lock().push(why);
                Reply::json(
                    500,
                    json!({"error": {"message": "stub: the responder panicked"}}),
                )
            }
        };
    }
    drop(responder);
    state.script.lock().pop_front().unwrap_or_else(|| {
        Reply::json(500, json!({"error": {"message": "stub: script exhausted"}}))
    })
}

/// Does `reply`; the request stops counting as in flight just before the answer is written
/// (so a client that reacts to the answer at once is never counted twice).
fn respond(stream: &mut TcpStream, mut reply: Reply, state: &State) {
    while let Reply::Delayed(d, inner) = reply {
        let until = Instant::now() + d;
        while Instant::now() < until && !state.stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(5).min(until - Instant::now()));
        }
        reply = *inner;
    }
    state.in_flight.fetch_sub(1, Ordering::SeqCst);
    let (head, body) = match reply {
        Reply::Delayed(..) => unreachable!("unwrapped above"),
        Reply::Hang => {
            // Hold the connection until the client drops it (or the stub stops).
            let _ = stream.set_read_timeout(None);
            let mut buf = [0u8; 1];
            while let Ok(1..) = stream.read(&mut buf) {}
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
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
    let _ = stream.flush();
    let _ = stream.shutdown(Shutdown::Write);
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Whatever",
    }
}

/// Reads one request: the head up to the blank line, then `Content-Length` bytes of body.
fn read_request(stream: &mut TcpStream) -> Option<Received> {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).ok()? == 0 {
        return None;
    }
    let mut first = request_line.trim_end().split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((n, v)) = line.split_once(':') {
            headers.push((n.trim().to_owned(), v.trim().to_owned()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body).ok()?;
    Some(Received {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}
