//! A stub OpenAI-compatible server for the benchmarks that talk to a model (only those that
//! link tokio include it).

/// Starts [`serve`] on a free loopback port of `rt`; returns its base URL
/// (`http://127.0.0.1:PORT/v1`).
pub fn start(
    rt: &tokio::runtime::Runtime,
    latency: std::time::Duration,
    respond: fn(&serde_json::Value) -> String,
) -> String {
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    rt.spawn(serve(listener, latency, respond));
    base_url
}

/// A stub OpenAI-compatible server on `listener` (keep-alive HTTP/1.1, any number of
/// connections): every reply waits `latency`, and its content is `respond(request body)`.
pub async fn serve(
    listener: tokio::net::TcpListener,
    latency: std::time::Duration,
    respond: fn(&serde_json::Value) -> String,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    loop {
        let Ok((mut sock, _)) = listener.accept().await else {
            return;
        };
        tokio::spawn(async move {
            let mut buf = Vec::new();
            loop {
                let mut chunk = [0u8; 16 * 1024];
                let head_end = loop {
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                while buf.len() < head_end + len {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let body: serde_json::Value =
                    serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or_default();
                buf.drain(..head_end + len);
                let action = respond(&body);
                tokio::time::sleep(latency).await;
                let reply = serde_json::json!({
                    "id": "stub", "object": "chat.completion", "model": "stub",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": action}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 8, "total_tokens": 108}
                })
                .to_string();
                let resp = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{reply}",
                    reply.len()
                );
                if sock.write_all(resp.as_bytes()).await.is_err() {
                    return;
                }
            }
        });
    }
}
