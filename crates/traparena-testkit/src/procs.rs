//! The machine's processes, for tests that check that nothing a sandboxed run started outlives
//! it.

use std::time::{Duration, Instant};

/// How many processes on this machine have a command line holding `marker` (arguments are
/// separated by NUL bytes in it, as in `/proc/PID/cmdline`).
pub fn processes_with(marker: &str) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|cmd| String::from_utf8_lossy(cmd).contains(marker))
        .count()
}

/// [`processes_with`] once those being killed are gone (waiting up to 5 s for them).
pub fn survivors(marker: &str) -> usize {
    let deadline = Instant::now() + Duration::from_secs(5);
    while processes_with(marker) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    processes_with(marker)
}
