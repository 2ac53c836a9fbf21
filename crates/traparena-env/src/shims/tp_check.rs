// TrapArena's Rust check library, built by tp_build.sh into the same crate as a HumanEvalFix
// test program. `tp_check(n, || { assert!(...); })` is check n of the test: it fails when an
// assertion in it panics, errs on any other panic. `tp_finish()`, the last statement of `main`,
// writes the report (checks run, failed, errored, the outcome of each, and each failed check's
// line and panic message) to the report
// descriptor, duplicated under a number of the library's own at the first check and closed
// under its well-known one: output the code under test prints, an early
// `std::process::exit`, an abort or a panic outside a check never produce a report.
//
// Import probe mode (TRAPARENA_PROBE_FROM=k): checks before index k are passed over, every
// other check writes one JSON line {"case": i, "ok": ..., "why": ...} (0-based) as soon as it
// ends, and a check still running after TRAPARENA_PROBE_TIMEOUT_MS ends the program.

#[allow(dead_code)]
mod tp_check_library {
    use std::collections::BTreeMap;
    use std::io::Write;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Mutex, Once};
    use std::time::{Duration, Instant};

    pub struct State {
        pub report: Option<std::fs::File>,
        pub probe: Option<usize>,
        pub timeout: Duration,
        pub outcome: BTreeMap<usize, u8>,
        /// Per failed check: where it is and what its panic said.
        pub why: BTreeMap<usize, String>,
    }

    /// At most this many failed checks are described in the report, each in at most this many
    /// bytes.
    pub const MAX_LISTED: usize = 10;
    pub const MAX_MESSAGE: usize = 500;

    /// `s` as a JSON string, quotes included.
    pub fn json(s: &str) -> String {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    pub static STATE: Mutex<Option<State>> = Mutex::new(None);
    static START: Once = Once::new();
    /// The running check + 1 (0: none), and when it started, for the probe's watchdog.
    pub static CURRENT: AtomicUsize = AtomicUsize::new(0);
    pub static STARTED: Mutex<Option<Instant>> = Mutex::new(None);

    fn open() -> Option<std::fs::File> {
        use std::os::unix::io::FromRawFd;
        let given: i32 = std::env::var("TRAPARENA_REPORT_FD")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(3);
        std::env::remove_var("TRAPARENA_REPORT_FD");
        // SAFETY: the descriptor the harness opened for this program; owned from here on.
        let original = unsafe { std::fs::File::from_raw_fd(given) };
        // A copy above the low numbers (a program's first files take those), then the
        // original closed.
        let mut held = Vec::new();
        let mut copy = original.try_clone().ok();
        while let Some(c) = copy.take() {
            use std::os::unix::io::AsRawFd;
            if c.as_raw_fd() >= 16 {
                copy = Some(c);
                break;
            }
            copy = c.try_clone().ok();
            held.push(c);
        }
        drop(held);
        drop(original);
        copy
    }

    pub fn start() {
        START.call_once(|| {
            let probe = std::env::var("TRAPARENA_PROBE_FROM").ok().and_then(|v| v.parse().ok());
            let ms: u64 = std::env::var("TRAPARENA_PROBE_TIMEOUT_MS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            *STATE.lock().unwrap() = Some(State {
                report: open(),
                probe,
                timeout: Duration::from_millis(ms),
                outcome: BTreeMap::new(),
                why: BTreeMap::new(),
            });
            if probe.is_some() && ms > 0 {
                std::thread::spawn(move || loop {
                    std::thread::sleep(Duration::from_millis(20));
                    let current = CURRENT.load(Ordering::SeqCst);
                    let started = *STARTED.lock().unwrap();
                    if let (true, Some(at)) = (current > 0, started) {
                        if at.elapsed() > Duration::from_millis(ms) {
                            write_line(&format!(
                                "{{\"case\": {}, \"ok\": false, \"why\": \"timed out\"}}\n",
                                current - 1
                            ));
                            std::process::exit(0);
                        }
                    }
                });
            }
        });
    }

    pub fn write_line(s: &str) {
        if let Ok(mut g) = STATE.try_lock() {
            if let Some(f) = g.as_mut().and_then(|s| s.report.as_mut()) {
                let _ = f.write_all(s.as_bytes());
            }
        }
    }
}

/// Opens the report before `main`: no code of the program runs first.
#[used]
#[link_section = ".init_array"]
static TP_START: extern "C" fn() = {
    extern "C" fn tp_start() {
        tp_check_library::start();
    }
    tp_start
};

/// Runs check `n` (1-based).
#[allow(dead_code)]
#[track_caller]
fn tp_check<F: FnOnce()>(n: usize, f: F) {
    let at = std::panic::Location::caller();
    use std::sync::atomic::Ordering;
    tp_check_library::start();
    let i = n - 1;
    let probe = tp_check_library::STATE
        .lock()
        .unwrap()
        .as_ref()
        .and_then(|s| s.probe);
    if probe.map_or(false, |from| i < from) {
        return;
    }
    *tp_check_library::STARTED.lock().unwrap() = Some(std::time::Instant::now());
    tp_check_library::CURRENT.store(n, Ordering::SeqCst);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    tp_check_library::CURRENT.store(0, Ordering::SeqCst);
    let mut said = String::new();
    let (code, why): (u8, String) = match result {
        Ok(()) => (0, String::new()),
        Err(payload) => {
            let msg: String = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            said = msg.clone();
            if msg.starts_with("assertion failed") || msg.contains("left == right") || msg.contains("left != right") {
                (1, "the assertion fails".to_owned())
            } else {
                (2, format!("panics: {}", msg.chars().take(200).collect::<String>()).replace('"', "'").replace('\\', "/"))
            }
        }
    };
    if probe.is_some() {
        tp_check_library::write_line(&format!(
            "{{\"case\": {i}, \"ok\": {}, \"why\": \"{why}\"}}\n",
            code == 0
        ));
    }
    if code != 0 {
        eprintln!("check {n}: {why}");
    }
    let mut g = tp_check_library::STATE.lock().unwrap();
    if let Some(s) = g.as_mut() {
        if code != 0 && !s.why.contains_key(&n) {
            let file = at.file().rsplit('/').next().unwrap_or_default();
            let mut m = format!("{file}:{}: {}", at.line(), if said.is_empty() { &why } else { &said });
            if m.len() > tp_check_library::MAX_MESSAGE {
                let mut cut = tp_check_library::MAX_MESSAGE - 3;
                while !m.is_char_boundary(cut) {
                    cut -= 1;
                }
                m.truncate(cut);
                m.push_str("...");
            }
            s.why.insert(n, m);
        }
        let e = s.outcome.entry(n).or_insert(code);
        *e = (*e).max(code);
    }
}

/// Writes the report and ends the program: status 0 when every check passed.
#[allow(dead_code)]
fn tp_finish() -> ! {
    use std::io::Write;
    tp_check_library::start();
    let _ = std::io::stdout().flush();
    let mut g = tp_check_library::STATE.lock().unwrap();
    let s = g.as_mut().expect("started");
    let run = s.outcome.len();
    let failed = s.outcome.values().filter(|&&c| c == 1).count();
    let errored = s.outcome.values().filter(|&&c| c == 2).count();
    let outcomes: Vec<String> = s
        .outcome
        .iter()
        .map(|(n, c)| {
            let name = match c {
                0 => "passed",
                1 => "failed",
                _ => "error",
            };
            format!("\"check {n}\": \"{name}\"")
        })
        .collect();
    let failures: Vec<String> = s
        .outcome
        .iter()
        .filter(|(_, c)| **c != 0)
        .take(tp_check_library::MAX_LISTED)
        .map(|(n, _)| {
            let why = s.why.get(n).map(String::as_str).unwrap_or_default();
            format!("{{\"name\": \"check {n}\", \"message\": {}}}", tp_check_library::json(why))
        })
        .collect();
    if s.probe.is_none() {
        if let Some(f) = s.report.as_mut() {
            let _ = write!(
                f,
                "{{\"runner\": \"rust\", \"tests_run\": {run}, \"failed\": {failed}, \"errored\": {errored}, \"skipped\": 0, \"outcomes\": {{{}}}, \"failures\": [{}]}}",
                outcomes.join(", "),
                failures.join(", ")
            );
        }
    }
    std::process::exit(if failed == 0 && errored == 0 && run > 0 { 0 } else { 1 })
}
