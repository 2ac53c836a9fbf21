//! The stub model server over real loopback connections: it answers like vLLM or from a
//! script, records what it was sent, closes every connection when it stops, and reports a
//! panicking responder without panicking again while a test unwinds.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use traparena_testkit::stub::{Reply, STUB_CONTEXT, STUB_MODEL, StubServer};

/// One HTTP/1.1 request; the status and the body of the answer.
fn http(addr: SocketAddr, method: &str, path: &str, body: Option<&Value>) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

#[test]
fn the_vllm_stub_lists_its_model_and_answers_chat_completions() {
    let stub = StubServer::vllm(|r| Reply::text(&format!("you said {}", r.body["n"]), 3, 2));
    let (status, body) = http(stub.addr, "GET", "/v1/models", None);
    assert_eq!(status, 200);
    let models: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(models["data"][0]["id"], STUB_MODEL);
    assert_eq!(models["data"][0]["max_model_len"], STUB_CONTEXT);
    let (status, body) = http(
        stub.addr,
        "POST",
        "/v1/chat/completions",
        Some(&json!({"n": 7})),
    );
    assert_eq!(status, 200);
    let reply: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(reply["choices"][0]["message"]["content"], "you said 7");
    assert_eq!(reply["usage"]["total_tokens"], 5);
    assert_eq!(http(stub.addr, "GET", "/props", None).0, 404);
    let seen: Vec<(String, String)> = stub
        .received()
        .into_iter()
        .map(|r| (r.method, r.path))
        .collect();
    assert_eq!(
        seen,
        [
            ("GET".to_owned(), "/v1/models".to_owned()),
            ("POST".to_owned(), "/v1/chat/completions".to_owned()),
            ("GET".to_owned(), "/props".to_owned()),
        ]
    );
    assert_eq!(stub.chat_requests(), [json!({"n": 7})]);
    assert_eq!(
        stub.received()[1].header("content-type"),
        Some("application/json")
    );
}

#[test]
fn a_script_is_answered_in_order_whatever_the_path_then_runs_out() {
    let stub = StubServer::start(vec![
        Reply::json(404, json!({"error": "not found"})),
        Reply::text("one", 1, 1).with_header("Retry-After", "0"),
    ]);
    assert_eq!(http(stub.addr, "GET", "/v1/models", None).0, 404);
    let (status, body) = http(stub.addr, "POST", "/v1/chat/completions", None);
    assert_eq!(status, 200);
    assert!(body.contains("\"one\""), "{body}");
    let (status, body) = http(stub.addr, "POST", "/v1/chat/completions", None);
    assert_eq!(status, 500);
    assert!(body.contains("stub: script exhausted"), "{body}");
    stub.push(Reply::raw(429, "slow down").delayed(Duration::from_millis(30)));
    let started = Instant::now();
    assert_eq!(
        http(stub.addr, "POST", "/v1/chat/completions", None),
        (429, "slow down".to_owned())
    );
    assert!(started.elapsed() >= Duration::from_millis(30));
    assert_eq!((stub.request_count(), stub.max_in_flight()), (4, 1));
}

#[test]
fn stopping_closes_a_hanging_connection_and_the_port() {
    let mut stub = StubServer::start(vec![Reply::Hang]);
    let addr = stub.addr;
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        .unwrap();
    while stub.request_count() == 0 {
        std::thread::sleep(Duration::from_millis(5));
    }
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let started = Instant::now();
    stub.stop();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    assert!(buf.is_empty(), "a hanging request gets no answer");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(TcpStream::connect(addr).is_err(), "the port is closed");
}

#[test]
fn a_panicking_responder_fails_the_test_but_never_panics_twice() {
    let stub = StubServer::serve(|_| panic!("no such request expected"));
    assert_eq!(http(stub.addr, "POST", "/v1/chat/completions", None).0, 500);
    // Dropped normally, the stub fails the test with the responder's message.
    let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(stub))).unwrap_err();
    let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("no such request expected"), "{msg}");

    // Dropped while the test is already failing, it does not panic again (which would abort
    // the whole test binary): the test's own failure is what is reported.
    let e = std::panic::catch_unwind(|| {
        let stub = StubServer::serve(|_| panic!("no such request expected"));
        http(stub.addr, "POST", "/v1/chat/completions", None);
        panic!("the test's own failure");
    })
    .unwrap_err();
    assert_eq!(e.downcast_ref::<&str>(), Some(&"the test's own failure"));
}
