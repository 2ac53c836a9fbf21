//! Headless Chromium driven through the Chrome DevTools Protocol, for tests of the HTML pages
//! (the report, the episode viewer): [`chromium`] finds the browser, [`Page::open`] starts it
//! on a page, and [`Page`] evaluates script, clicks at a position, waits for a condition,
//! collects console errors and takes screenshots. A minimal WebSocket client (RFC 6455) speaks
//! to the browser; no crate is needed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The browser's flags: headless, no sandbox of its own (tests run as root), nothing fetched.
pub const FLAGS: [&str; 9] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
];

/// The browser: `TRAPARENA_CHROMIUM`, or `chromium` on `PATH`; a test that needs it and finds
/// none fails here, saying how to get it.
pub fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("TRAPARENA_CHROMIUM") {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "TRAPARENA_CHROMIUM={} is not a file",
            p.display()
        );
        return p;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("chromium"))
        .find(|p| p.is_file())
        .expect(
            "this test needs chromium, and none is on PATH: apt-get install chromium \
             (or set TRAPARENA_CHROMIUM to a browser binary)",
        )
}

/// A minimal WebSocket client (RFC 6455): text frames out (masked), frames in.
#[derive(Debug)]
struct Ws {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Ws {
    fn connect(url: &str) -> Ws {
        let rest = url.strip_prefix("ws://").expect("a ws:// URL");
        let (host, path) = rest.split_at(rest.find('/').expect("a path"));
        let stream = TcpStream::connect(host).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let mut writer = stream.try_clone().unwrap();
        write!(
            writer,
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .unwrap();
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.contains(" 101 "), "no WebSocket upgrade: {status}");
        loop {
            let mut l = String::new();
            reader.read_line(&mut l).unwrap();
            if l == "\r\n" || l.is_empty() {
                break;
            }
        }
        Ws { reader, writer }
    }

    fn send_frame(&mut self, opcode: u8, payload: &[u8]) {
        let mut f = vec![0x80 | opcode];
        let n = payload.len();
        if n < 126 {
            f.push(0x80 | n as u8);
        } else if n < 65536 {
            f.push(0x80 | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        } else {
            f.push(0x80 | 127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
        let mask = [0x37, 0xfa, 0x21, 0x3d];
        f.extend_from_slice(&mask);
        f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.writer.write_all(&f).unwrap();
    }

    fn send(&mut self, text: &str) {
        self.send_frame(0x1, text.as_bytes());
    }

    /// The next text message.
    fn recv(&mut self) -> String {
        let mut message = Vec::new();
        loop {
            let mut h = [0u8; 2];
            self.reader.read_exact(&mut h).unwrap();
            let (fin, opcode) = (h[0] & 0x80 != 0, h[0] & 0x0f);
            let masked = h[1] & 0x80 != 0;
            let mut len = u64::from(h[1] & 0x7f);
            if len == 126 {
                let mut b = [0u8; 2];
                self.reader.read_exact(&mut b).unwrap();
                len = u64::from(u16::from_be_bytes(b));
            } else if len == 127 {
                let mut b = [0u8; 8];
                self.reader.read_exact(&mut b).unwrap();
                len = u64::from_be_bytes(b);
            }
            let mut mask = [0u8; 4];
            if masked {
                self.reader.read_exact(&mut mask).unwrap();
            }
            let mut payload = vec![0u8; len as usize];
            self.reader.read_exact(&mut payload).unwrap();
            if masked {
                for (i, b) in payload.iter_mut().enumerate() {
                    *b ^= mask[i % 4];
                }
            }
            match opcode {
                0x8 => panic!("the browser closed the DevTools connection"),
                0x9 => self.send_frame(0xA, &payload),
                0xA => {}
                _ => {
                    message.extend_from_slice(&payload);
                    if fin {
                        return String::from_utf8(message).unwrap();
                    }
                }
            }
        }
    }
}

/// A Chrome DevTools Protocol session on one page (flattened target sessions).
#[derive(Debug)]
pub struct Cdp {
    ws: Ws,
    next_id: u64,
    session: Option<String>,
    events: Vec<Value>,
}

impl Cdp {
    /// Calls `method` and returns its result; an error answer fails the test.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = &self.session {
            msg["sessionId"] = json!(s);
        }
        self.ws.send(&msg.to_string());
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            let v: Value = serde_json::from_str(&self.ws.recv()).unwrap();
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method} failed: {v}");
                return v["result"].clone();
            }
            self.events.push(v);
        }
        panic!("no answer to {method}");
    }

    /// Waits for the next `method` event (one seen already counts).
    pub fn wait_event(&mut self, method: &str) {
        if let Some(i) = self.events.iter().position(|e| e["method"] == method) {
            self.events.remove(i);
            return;
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            let v: Value = serde_json::from_str(&self.ws.recv()).unwrap();
            if v["method"] == method {
                return;
            }
            self.events.push(v);
        }
        panic!("no {method} event");
    }

    /// Evaluates `expression` in the page (promises awaited) and returns its value; an
    /// exception fails the test.
    pub fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expression}: {r}");
        r["result"]["value"].clone()
    }

    /// A left click at a position of the viewport.
    pub fn click(&mut self, x: f64, y: f64) {
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }

    /// A PNG screenshot (`Page.captureScreenshot` with `params`) saved at `path`.
    pub fn screenshot(&mut self, params: Value, path: &Path) {
        let r = self.call("Page.captureScreenshot", params);
        let png = base64_decode(r["data"].as_str().unwrap());
        assert!(png.starts_with(b"\x89PNG"), "not a PNG");
        std::fs::write(path, png).unwrap();
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let bytes: Vec<u8> = s.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for chunk in bytes.chunks(4) {
        let data: Vec<u8> = chunk.iter().copied().filter(|&c| c != b'=').collect();
        let mut acc = 0u32;
        for (i, &c) in data.iter().enumerate() {
            acc |= val(c) << (18 - 6 * i);
        }
        let n = data.len().saturating_sub(1);
        for i in 0..n {
            out.push((acc >> (16 - 8 * i)) as u8);
        }
    }
    out
}

/// The browser process; closed (then killed if need be) on drop.
#[derive(Debug)]
struct Browser(Child);

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the browser with its DevTools on a free port; returns it and the DevTools address.
fn launch(chromium: &Path, profile: &Path) -> (Browser, String) {
    let mut child = Command::new(chromium)
        .args(FLAGS)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--remote-debugging-port=0")
        .arg("--window-size=1400,1000")
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if !sent && let Some(url) = line.strip_prefix("DevTools listening on ") {
                let _ = tx.send(url.trim().to_owned());
                sent = true;
            }
        }
    });
    let browser = Browser(child);
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("chromium did not print its DevTools address");
    (browser, url)
}

/// A page in a headless browser of its own (closed on drop).
#[derive(Debug)]
pub struct Page {
    /// The DevTools session on the page.
    pub cdp: Cdp,
    _browser: Browser,
}

impl Page {
    /// Starts `chromium` with its profile in `profile`, opens a `width` × `height` page at
    /// `url`, and waits for its load event. Console messages and exceptions are recorded from
    /// the start ([`Page::console_errors`]).
    pub fn open(chromium: &Path, profile: &Path, url: &str, width: u32, height: u32) -> Page {
        let (browser, ws_url) = launch(chromium, profile);
        let mut cdp = Cdp {
            ws: Ws::connect(&ws_url),
            next_id: 0,
            session: None,
            events: Vec::new(),
        };
        let target = cdp.call("Target.createTarget", json!({"url": "about:blank"}));
        let attached = cdp.call(
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        cdp.session = Some(attached["sessionId"].as_str().unwrap().to_owned());
        cdp.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            cdp.call(domain, json!({}));
        }
        cdp.call("Page.navigate", json!({"url": url}));
        cdp.wait_event("Page.loadEventFired");
        Page {
            cdp,
            _browser: browser,
        }
    }

    /// Goes to `url` (a new document: waits for its load event).
    pub fn navigate(&mut self, url: &str) {
        self.cdp
            .events
            .retain(|e| e["method"] != "Page.loadEventFired");
        self.cdp.call("Page.navigate", json!({"url": url}));
        self.cdp.wait_event("Page.loadEventFired");
    }

    /// Waits until `expression` is true in the page, at most 30 seconds; fails the test with
    /// `what` otherwise.
    pub fn wait_for(&mut self, expression: &str, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if self.cdp.eval(expression) == json!(true) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let errors = self.console_errors();
        panic!("timed out waiting for {what} ({expression}); console errors: {errors:?}");
    }

    /// Every console error, uncaught exception and failed load the page has reported so far
    /// (pumping the connection once first).
    pub fn console_errors(&mut self) -> Vec<String> {
        self.cdp.eval("0");
        self.cdp
            .events
            .iter()
            .filter_map(|e| match e["method"].as_str()? {
                "Runtime.exceptionThrown" => Some(e["params"]["exceptionDetails"].to_string()),
                "Runtime.consoleAPICalled" if e["params"]["type"] == "error" => {
                    Some(e["params"]["args"].to_string())
                }
                "Log.entryAdded" if e["params"]["entry"]["level"] == "error" => {
                    Some(e["params"]["entry"].to_string())
                }
                _ => None,
            })
            .collect()
    }
}
