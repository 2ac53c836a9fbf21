//! Children that die with the harness: the parent-death signal, set so that no child outlives
//! a harness killed while the child was being started.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Makes the child of `c` get SIGKILL when the thread that started it ends (the harness
/// thread, or the whole harness when it is killed).
///
/// The signal is set in the child, between the fork and the exec. A harness killed in that
/// window would miss it: the child would go on, an orphan, to run its program. So the child
/// then compares its parent with the harness that forked it, and ends before running anything
/// when the harness is already gone.
pub(crate) fn die_with_harness(c: &mut Command) {
    // The harness's pid as the child will see its parent's (the fork keeps the pid namespace).
    let harness = std::process::id() as libc::pid_t;
    #[allow(unsafe_code)]
    // SAFETY: prctl and getppid are async-signal-safe, and the error is made without allocating.
    unsafe {
        c.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != harness {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}
