//! The model proxy an external agent talks to: a server on the host's loopback that speaks
//! OpenAI Chat Completions, Anthropic Messages and OpenAI Responses, hands every request to the
//! episode as a chat request ([`Exchange`]) and answers with what the episode replies, in the
//! agent's format, streamed when the agent asked for a stream. The formats themselves are
//! `traparena_model::wire`'s ([`WireFormat`]); this module is only the HTTP around them.

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
use traparena_model::wire::{ReadRequest, WireApi, WireFormat};
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
    let format = WireApi::ALL
        .into_iter()
        .map(WireApi::format)
        .find(|f| path.ends_with(&format!("/{}", f.path())));
    let Some(format) = format.filter(|_| req.method() == Method::POST) else {
        return Ok(error_response(
            WireApi::ChatCompletions.format(),
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
                format,
                400,
                &format!("unreadable request body: {e}"),
            ));
        }
    };
    let mut read = match format.read_request(&body) {
        Ok(r) => r,
        Err(e) => return Ok(error_response(format, 400, &e.to_string())),
    };
    let (reply_tx, reply_rx) = oneshot::channel();
    // The conversation goes to the episode; what the answer needs (stream, model, custom
    // tools) stays here.
    let exchange = Exchange {
        request: std::mem::take(&mut read.request),
        reply: reply_tx,
    };
    if tx.send(exchange).await.is_err() {
        return Ok(error_response(format, 503, "the episode is over"));
    }
    Ok(match reply_rx.await {
        Ok(Reply::Completion(response)) => answer(format, &read, *response, &model),
        Ok(Reply::Error(status, message)) => error_response(format, status, &message),
        Err(_) => error_response(format, 503, "the episode is over"),
    })
}

/// The completion in the format the agent asked in, whole or streamed.
fn answer(
    format: &dyn WireFormat,
    read: &ReadRequest,
    mut r: ChatResponse,
    model: &str,
) -> Response<Full<Bytes>> {
    r.adjustments.clear();
    // The name the agent asked for goes back (agents check it against their own model list).
    let named = read.model.as_deref().unwrap_or(model);
    let custom = &read.custom_tools;
    if read.stream {
        sse(format.stream(&r, named, custom))
    } else {
        json_response(StatusCode::OK, &format.answer(&r, named, custom))
    }
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

fn error_response(format: &dyn WireFormat, status: u16, message: &str) -> Response<Full<Bytes>> {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    json_response(code, &format.error_body(code.as_u16(), message))
}

fn sse(text: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(text)));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body_text(r: Response<Full<Bytes>>) -> String {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let bytes = rt.block_on(async { r.into_body().collect().await.unwrap().to_bytes() });
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[test]
    fn an_answer_is_streamed_as_asked_under_the_name_asked_for() {
        let read = |stream| ReadRequest {
            request: ChatRequest::default(),
            stream,
            model: Some("claude-x".into()),
            custom_tools: Vec::new(),
        };
        let mut r = ChatResponse::from_text("up", "hello").with_usage(3, 1);
        r.adjustments.push("a note for the harness".into());
        let format = WireApi::AnthropicMessages.format();
        let streamed = answer(format, &read(true), r.clone(), "proxy-model");
        assert_eq!(
            streamed.headers()[hyper::header::CONTENT_TYPE],
            "text/event-stream"
        );
        assert_eq!(body_text(streamed), format.stream(&r, "claude-x", &[]));
        let whole = answer(format, &read(false), r.clone(), "proxy-model");
        assert_eq!(
            whole.headers()[hyper::header::CONTENT_TYPE],
            "application/json"
        );
        let v: Value = serde_json::from_str(&body_text(whole)).unwrap();
        assert_eq!(v, format.answer(&r, "claude-x", &[]));
        // The harness's notes never reach the agent.
        let chat = answer(WireApi::ChatCompletions.format(), &read(false), r, "m");
        assert!(!body_text(chat).contains("a note for the harness"));
    }

    #[test]
    fn errors_go_back_in_the_agents_format_with_their_status() {
        for api in WireApi::ALL {
            let r = error_response(api.format(), 400, "bad");
            assert_eq!(r.status(), StatusCode::BAD_REQUEST);
            let v: Value = serde_json::from_str(&body_text(r)).unwrap();
            assert_eq!(v, api.format().error_body(400, "bad"), "{api:?}");
        }
        let r = error_response(WireApi::ChatCompletions.format(), 1000, "odd");
        assert_eq!(r.status(), StatusCode::BAD_GATEWAY);
        assert_eq!(
            body_text(r),
            json!({"error": {"message": "odd", "type": "server_error", "code": 502}}).to_string()
        );
    }
}
