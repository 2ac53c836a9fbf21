//! The HTML report in a real browser: headless Chromium loads the page, a mouse click on a
//! table header (dispatched through the Chrome DevTools Protocol at the header's on-screen
//! position) sorts the table, and the row order changes; screenshots are saved under
//! `target/tmp/report-browser/`.
//!
//! Needs Debian's `chromium` (`.ci/run` installs it), so it is `#[ignore]`d: run it with
//! `cargo test -p traparena-report --test browser -- --ignored`. Run without chromium, it
//! fails and says how to get it. `TRAPARENA_CHROMIUM` names another browser binary.

// This test code drives real processes and reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use traparena_report::{ReportOptions, report_folder};
use traparena_testkit::synthetic::SyntheticConfig;

const FLAGS: [&str; 9] = [
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
fn chromium() -> PathBuf {
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
struct Cdp {
    ws: Ws,
    next_id: u64,
    session: Option<String>,
    events: Vec<Value>,
}

impl Cdp {
    fn call(&mut self, method: &str, params: Value) -> Value {
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

    fn wait_event(&mut self, method: &str) {
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
        }
        panic!("no {method} event");
    }

    fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expression}: {r}");
        r["result"]["value"].clone()
    }

    fn click(&mut self, x: f64, y: f64) {
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }

    fn screenshot(&mut self, params: Value, path: &Path) {
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
struct Browser(Child);

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

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

fn row_keys(cdp: &mut Cdp) -> Vec<String> {
    let v = cdp.eval(
        "Array.from(document.querySelectorAll('#main-table tbody tr'))\
         .map(r => r.cells[0].textContent + ' / ' + r.cells[1].textContent)",
    );
    serde_json::from_value(v).unwrap()
}

fn delta_values(cdp: &mut Cdp) -> Vec<f64> {
    let v = cdp.eval(
        "Array.from(document.querySelectorAll('#main-table tbody tr'))\
         .map(r => parseFloat(r.cells[5].getAttribute('data-sort')))",
    );
    serde_json::from_value(v).unwrap()
}

#[test]
#[ignore = "needs chromium: apt-get install chromium (CI installs it)"]
fn clicking_a_header_sorts_the_table_in_chromium() {
    let chromium = chromium();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser");
    std::fs::create_dir_all(&out).unwrap();
    let results = tempfile::tempdir().unwrap();
    SyntheticConfig::standard(21)
        .write_folder(results.path())
        .unwrap();
    let report = report_folder(results.path(), &ReportOptions::default()).unwrap();
    let page = out.join("report.html");
    std::fs::write(&page, report.to_html()).unwrap();
    let url = format!("file://{}", page.canonicalize().unwrap().display());

    let profile = tempfile::tempdir().unwrap();
    let (_browser, ws_url) = launch(&chromium, profile.path());
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
        json!({"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": false}),
    );
    cdp.call("Page.enable", json!({}));
    cdp.call("Page.navigate", json!({"url": url}));
    cdp.wait_event("Page.loadEventFired");

    let before = row_keys(&mut cdp);
    assert_eq!(before.len(), report.main.len());
    assert_eq!(before[0], "model-a / adaptive");

    // Where the "Δ pp" header is on screen.
    let pos = cdp.eval(
        "(() => { const th = Array.from(document.querySelectorAll('#main-table th'))\
         .find(h => h.textContent.trim() === 'Δ pp'); \
         const r = th.getBoundingClientRect(); \
         return [r.left + r.width / 2, r.top + r.height / 2]; })()",
    );
    let (x, y) = (pos[0].as_f64().unwrap(), pos[1].as_f64().unwrap());
    assert!(x > 0.0 && y > 0.0 && y < 1000.0, "header off screen: {pos}");

    cdp.click(x, y);
    let after = row_keys(&mut cdp);
    assert_ne!(
        before, after,
        "clicking the header did not reorder the rows"
    );
    let mut same = before.clone();
    same.sort();
    let mut sorted_after = after.clone();
    sorted_after.sort();
    assert_eq!(same, sorted_after, "sorting lost or duplicated rows");
    let deltas = delta_values(&mut cdp);
    assert!(
        deltas.windows(2).all(|w| w[0] <= w[1]),
        "not ascending by Δ: {deltas:?}"
    );
    let sort_state = cdp.eval(
        "Array.from(document.querySelectorAll('#main-table th'))\
         .find(h => h.textContent.trim() === 'Δ pp').getAttribute('aria-sort')",
    );
    assert_eq!(sort_state, json!("ascending"));
    cdp.screenshot(json!({"format": "png"}), &out.join("report-sorted.png"));

    // A second click sorts descending.
    cdp.click(x, y);
    let deltas = delta_values(&mut cdp);
    assert!(
        deltas.windows(2).all(|w| w[0] >= w[1]),
        "not descending by Δ: {deltas:?}"
    );

    // The whole page, charts included.
    let height = cdp.eval("document.documentElement.scrollHeight");
    let height = height.as_f64().unwrap().min(12_000.0);
    cdp.screenshot(
        json!({"format": "png", "captureBeyondViewport": true,
               "clip": {"x": 0, "y": 0, "width": 1400, "height": height, "scale": 1}}),
        &out.join("report-full.png"),
    );
    // Each chart area and a few sections on their own, for a closer look.
    for (selector, name) in [
        ("header", "report-header.png"),
        ("#main .charts", "report-charts.png"),
        ("#controls", "report-controls.png"),
        ("#rounds", "report-rounds.png"),
        ("#tokens", "report-tokens.png"),
        ("#ablation", "report-ablation.png"),
        ("#failures", "report-failures.png"),
    ] {
        let rect = cdp.eval(&format!(
            "(() => {{ const r = document.querySelector('{selector}').getBoundingClientRect(); \
             return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]; }})()"
        ));
        let v: Vec<f64> = serde_json::from_value(rect).unwrap();
        assert!(v[2] > 0.0 && v[3] > 0.0, "{selector} is not shown");
        cdp.screenshot(
            json!({"format": "png", "captureBeyondViewport": true,
                   "clip": {"x": v[0], "y": v[1], "width": v[2], "height": v[3], "scale": 1}}),
            &out.join(name),
        );
    }
    let charts = cdp.eval("document.querySelectorAll('svg').length");
    assert!(charts.as_u64().unwrap() >= 3, "{charts}");

    // The controls have their own table, with no harm marked in it.
    let controls = cdp.eval(
        "Array.from(document.querySelectorAll('#controls-table tbody tr'))\
         .map(r => r.cells[0].textContent + ' / ' + r.cells[1].textContent)",
    );
    let controls: Vec<String> = serde_json::from_value(controls).unwrap();
    assert_eq!(
        controls,
        [
            "model-a / truthful",
            "model-b / truthful",
            "model-c / truthful"
        ]
    );
    let harm = cdp.eval("document.querySelectorAll('#controls .harm, #controls .good').length");
    assert_eq!(harm, json!(0));
    assert!(
        !before.iter().any(|r| r.ends_with("/ truthful")),
        "{before:?}"
    );

    // Susceptibility by round: every attack's line is drawn in every chart, each with its own
    // dash pattern, and no two end labels overlap on screen.
    let lines = cdp.eval(
        "Array.from(document.querySelectorAll('#rounds figure svg')).map(svg => \
         Array.from(svg.querySelectorAll('polyline')).map(p => \
         p.getAttribute('stroke') + '|' + (p.getAttribute('stroke-dasharray') || '')))",
    );
    let lines: Vec<Vec<String>> = serde_json::from_value(lines).unwrap();
    let attacks = report
        .rounds
        .iter()
        .filter(|r| r.target == "model-a")
        .count();
    assert_eq!(lines.len(), report.source.targets.len(), "{lines:?}");
    for chart in &lines {
        assert_eq!(chart.len(), attacks, "{chart:?}");
        let distinct: std::collections::BTreeSet<&String> = chart.iter().collect();
        assert_eq!(
            distinct.len(),
            chart.len(),
            "two lines look alike: {chart:?}"
        );
    }
    let overlaps = cdp.eval(
        "Array.from(document.querySelectorAll('#rounds figure svg')).map(svg => { \
         const b = Array.from(svg.querySelectorAll('text.endlabel'))\
         .map(t => t.getBoundingClientRect()); let n = 0; \
         for (let i = 0; i < b.length; i++) for (let j = i + 1; j < b.length; j++) \
         if (b[i].left < b[j].right && b[j].left < b[i].right && \
             b[i].top < b[j].bottom && b[j].top < b[i].bottom) n++; return n; })",
    );
    let overlaps: Vec<u64> = serde_json::from_value(overlaps).unwrap();
    assert!(
        overlaps.iter().all(|n| *n == 0),
        "end labels overlap: {overlaps:?}"
    );
    let legend = cdp.eval("document.querySelectorAll('#rounds .legend > span').length");
    assert_eq!(legend, json!(attacks));
    let _ = cdp.call("Browser.close", json!({}));
    drop(cdp);

    // Chromium's own --screenshot of the page, as loaded.
    let profile2 = tempfile::tempdir().unwrap();
    let shot = out.join("report-chromium.png");
    let _ = std::fs::remove_file(&shot);
    let status = Command::new(&chromium)
        .args(FLAGS)
        .arg(format!("--user-data-dir={}", profile2.path().display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1400,1800")
        .arg(&url)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(std::fs::read(&shot).unwrap().starts_with(b"\x89PNG"));
    println!("screenshots in {}", out.display());
}
