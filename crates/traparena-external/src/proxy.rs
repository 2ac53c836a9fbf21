//! The model proxy an external agent talks to: a server on the host's loopback that speaks
//! OpenAI Chat Completions, Anthropic Messages and OpenAI Responses, hands every request to the
//! episode as a chat request ([`Exchange`]) and answers with what the episode replies, in the
//! agent's format, streamed when the agent asked for a stream.

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use traparena_model::wire::{self, ReadRequest, WireApi};
use traparena_model::{ChatRequest, ChatResponse};

/// Largest request body the proxy reads (a long conversation is a few MB).
const MAX_BODY: usize = 64 << 20;

/// One completion request of the agent, waiting for its answer.
#[derive(Debug)]
pub(crate) struct Exchange {
    /// The request as the agent sent it, without `model` and the stream options.
    pub request: ChatRequest,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Reply>,
}

/// The proxy's answer to one request.
#[derive(Debug)]
pub(crate) enum Reply {
    /// The completion to hand back.
    Completion(Box<ChatResponse>),
    /// An error status with a message (OpenAI's error body).
    Error(u16, String),
}

/// The running proxy: bound to `127.0.0.1`, serving until dropped.
#[derive(Debug)]
pub(crate) struct Proxy {
    addr: SocketAddr,
    exchanges: mpsc::Receiver<Exchange>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Proxy {
    /// Binds a free loopback port and serves; `model` is the name `/v1/models` lists.
    pub async fn start(model: String) -> std::io::Result<Proxy> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (tx, rx) = mpsc::channel(16);
        let server = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    // Out of descriptors, say: wait rather than spin on the failing accept.
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                };
                let (tx, model) = (tx.clone(), model.clone());
                connections.spawn(async move {
                    let service = service_fn(move |req| handle(req, tx.clone(), model.clone()));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
                // Finished connections are reaped as new ones come.
                while connections.try_join_next().is_some() {}
            }
        });
        Ok(Proxy {
            addr,
            exchanges: rx,
            server,
        })
    }

    /// The port on `127.0.0.1`.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The next completion request (`None` never happens while the proxy runs).
    pub async fn next(&mut self) -> Option<Exchange> {
        self.exchanges.recv().await
    }
}

async fn handle(
    req: Request<Incoming>,
    tx: mpsc::Sender<Exchange>,
    model: String,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_owned();
    if req.method() == Method::GET && path.ends_with("/models") {
        let body = json!({"object": "list", "data": [{"id": model, "object": "model", "owned_by": "traparena"}]});
        return Ok(json_response(StatusCode::OK, &body));
    }
    let api = [
        WireApi::ChatCompletions,
        WireApi::AnthropicMessages,
        WireApi::OpenaiResponses,
    ]
    .into_iter()
    .find(|a| path.ends_with(&format!("/{}", a.path())));
    let Some(api) = api.filter(|_| req.method() == Method::POST) else {
        return Ok(error_response(
            WireApi::ChatCompletions,
            404,
            &format!(
                "the TrapArena proxy serves POST /v1/chat/completions, /v1/messages and /v1/responses, and GET /v1/models, not {} {path}",
                req.method()
            ),
        ));
    };
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return Ok(error_response(
                api,
                400,
                &format!("unreadable request body: {e}"),
            ));
        }
    };
    let read = match api {
        WireApi::AnthropicMessages => wire::anthropic::read_request(&body),
        WireApi::OpenaiResponses => wire::responses::read_request(&body),
        _ => read_request(&body),
    };
    let mut read = match read {
        Ok(r) => r,
        Err(message) => return Ok(error_response(api, 400, &message)),
    };
    let (reply_tx, reply_rx) = oneshot::channel();
    // The conversation goes to the episode; what the answer needs (stream, model, custom
    // tools) stays here.
    let exchange = Exchange {
        request: std::mem::take(&mut read.request),
        reply: reply_tx,
    };
    if tx.send(exchange).await.is_err() {
        return Ok(error_response(api, 503, "the episode is over"));
    }
    Ok(match reply_rx.await {
        Ok(Reply::Completion(response)) => answer(api, &read, *response, &model),
        Ok(Reply::Error(status, message)) => error_response(api, status, &message),
        Err(_) => error_response(api, 503, "the episode is over"),
    })
}

/// The completion in the format the agent asked in, whole or streamed.
fn answer(
    api: WireApi,
    read: &ReadRequest,
    mut r: ChatResponse,
    model: &str,
) -> Response<Full<Bytes>> {
    r.adjustments.clear();
    // The name the agent asked for goes back (agents check it against their own model list).
    let named = read.model.as_deref().unwrap_or(model);
    let custom = &read.custom_tools;
    match (api, read.stream) {
        (WireApi::AnthropicMessages, true) => sse(wire::anthropic::stream(&r, named)),
        (WireApi::AnthropicMessages, false) => {
            json_response(StatusCode::OK, &wire::anthropic::response(&r, named))
        }
        (WireApi::OpenaiResponses, true) => sse(wire::responses::stream(&r, named, custom)),
        (WireApi::OpenaiResponses, false) => json_response(
            StatusCode::OK,
            &wire::responses::response(&r, named, custom),
        ),
        (_, true) => sse_response(&r),
        (_, false) => json_response(
            StatusCode::OK,
            &serde_json::to_value(&r).unwrap_or(Value::Null),
        ),
    }
}

/// Reads a Chat Completions body: the request without `model`, `stream` and
/// `stream_options`, content-part arrays of text joined into one text.
pub(crate) fn read_request(body: &[u8]) -> Result<ReadRequest, String> {
    let mut v: Value =
        serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    let Some(obj) = v.as_object_mut() else {
        return Err("the body is not a JSON object".into());
    };
    obj.remove("model");
    let stream = obj
        .remove("stream")
        .and_then(|s| s.as_bool())
        .unwrap_or(false);
    obj.remove("stream_options");
    let Some(messages) = obj.get_mut("messages").and_then(Value::as_array_mut) else {
        return Err("the body has no `messages` list".into());
    };
    for (i, m) in messages.iter_mut().enumerate() {
        let Some(content) = m.get_mut("content") else {
            continue;
        };
        if let Value::Array(parts) = content {
            let mut text = String::new();
            for p in parts.iter() {
                match (p.get("type").and_then(Value::as_str), p.get("text")) {
                    (Some("text") | None, Some(Value::String(t))) => text.push_str(t),
                    _ => {
                        return Err(format!(
                            "messages[{i}]: only text content is passed on (a part of type {} is not)",
                            p.get("type").unwrap_or(&Value::Null)
                        ));
                    }
                }
            }
            *content = Value::String(text);
        }
    }
    let request: ChatRequest = serde_path_to_error::deserialize(v).map_err(|e| {
        format!(
            "not a chat completions request: {}: {}",
            e.path(),
            e.inner()
        )
    })?;
    Ok(ReadRequest {
        request,
        stream,
        model: None,
        custom_tools: Vec::new(),
    })
}

fn json_response(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

fn error_response(api: WireApi, status: u16, message: &str) -> Response<Full<Bytes>> {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    let body = match api {
        WireApi::AnthropicMessages => wire::anthropic::error(code.as_u16(), message),
        WireApi::OpenaiResponses => wire::responses::error(code.as_u16(), message),
        _ => {
            let kind = if code.is_client_error() {
                "invalid_request_error"
            } else {
                "server_error"
            };
            json!({"error": {"message": message, "type": kind, "code": code.as_u16()}})
        }
    };
    json_response(code, &body)
}

fn sse(text: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(text)));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    r
}

/// A completion as the chunks a streaming server sends: the whole message in one delta, the
/// finish reason, the usage, then `[DONE]`.
fn sse_response(response: &ChatResponse) -> Response<Full<Bytes>> {
    let mut out = String::new();
    let id = if response.id.is_empty() {
        "traparena-proxy"
    } else {
        &response.id
    };
    let created = response.extra.get("created").cloned().unwrap_or(json!(0));
    let chunk = |choices: Value, usage: Option<Value>| {
        let mut c = json!({
            "id": id, "object": "chat.completion.chunk", "created": created,
            "model": response.model, "choices": choices,
        });
        if let Some(u) = usage {
            c["usage"] = u;
        }
        format!("data: {c}\n\n")
    };
    for choice in &response.choices {
        let m = &choice.message;
        let mut delta = json!({"role": "assistant"});
        if let Some(t) = &m.content {
            delta["content"] = json!(t);
        }
        if let Some(r) = &m.reasoning_content {
            delta["reasoning_content"] = json!(r);
        }
        if !m.tool_calls.is_empty() {
            let calls: Vec<Value> = m
                .tool_calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    json!({"index": i, "id": c.id, "type": "function",
                        "function": {"name": c.function.name, "arguments": c.function.arguments}})
                })
                .collect();
            delta["tool_calls"] = json!(calls);
        }
        out.push_str(&chunk(
            json!([{"index": choice.index, "delta": delta, "finish_reason": null}]),
            None,
        ));
        out.push_str(&chunk(
            json!([{"index": choice.index, "delta": {}, "finish_reason": choice.finish_reason}]),
            None,
        ));
    }
    if let Some(u) = &response.usage {
        out.push_str(&chunk(json!([]), serde_json::to_value(u).ok()));
    }
    out.push_str("data: [DONE]\n\n");
    sse(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_lose_the_model_and_stream_options_and_keep_the_rest() {
        let body = json!({
            "model": "openai/x", "stream": true, "stream_options": {"include_usage": true},
            "temperature": 0.0, "stop": ["</s>"],
            "messages": [
                {"role": "system", "content": "s"},
                {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
            ]
        });
        let ReadRequest {
            request: req,
            stream,
            ..
        } = read_request(body.to_string().as_bytes()).unwrap();
        assert!(stream);
        assert_eq!(req.messages[1].content.as_deref(), Some("ab"));
        assert_eq!(req.temperature, Some(0.0));
        assert_eq!(req.extra.get("stop"), Some(&json!(["</s>"])));
        assert!(!req.extra.contains_key("model") && !req.extra.contains_key("stream_options"));
    }

    #[test]
    fn odd_requests_are_refused_with_a_reason() {
        let cases: &[(&[u8], &str)] = &[
            (b"not json", "not JSON"),
            (b"[1]", "not a JSON object"),
            (b"{}", "no `messages` list"),
            (
                br#"{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]}"#,
                "only text content",
            ),
            (
                br#"{"messages": [{"role": "wizard", "content": "x"}]}"#,
                "not a chat completions request",
            ),
        ];
        for (body, needle) in cases {
            let e = read_request(body).unwrap_err();
            assert!(e.contains(needle), "{e}");
        }
    }

    #[test]
    fn a_streamed_completion_holds_the_whole_message_and_ends_with_done() {
        let r = ChatResponse::from_text("m", "hello").with_usage(3, 1);
        let resp = sse_response(&r);
        let body = resp.into_body();
        let text = futures_lite_collect(body);
        let datas: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .collect();
        assert_eq!(datas.last(), Some(&"[DONE]"));
        let first: Value = serde_json::from_str(datas[0]).unwrap();
        assert_eq!(first["choices"][0]["delta"]["content"], "hello");
        let usage: Value = serde_json::from_str(datas[datas.len() - 2]).unwrap();
        assert_eq!(usage["usage"]["prompt_tokens"], 3);
    }

    fn futures_lite_collect(body: Full<Bytes>) -> String {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let bytes = rt.block_on(async { body.collect().await.unwrap().to_bytes() });
        String::from_utf8(bytes.to_vec()).unwrap()
    }
}
