//! The tests a pytest run is limited to. A spec that names tests (`select`) is judged on those
//! tests alone, so the harness's pytest plugin runs only them, however the command names its
//! targets: a run of whole files (the importer's trial runs, which must survive one name that
//! is no test) then costs what a run of the named tests costs. The names go to the plugin in a
//! file beside the shims (a long selection would not fit an environment variable).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use traparena_task::{Runner, TestSpec};

use crate::base::Mounts;
use crate::error::{EnvError, io};
use crate::sandbox::Sandbox;

/// The variable that gives the plugin the selection file's path.
pub(crate) const SELECT_ENV: &str = "TRAPARENA_PYTEST_SELECT";

/// Tells selection files of runs on one workspace apart.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A selection written for one run, removed when the run is over.
pub(crate) struct SelectionFile {
    host: PathBuf,
    visible: String,
}

impl SelectionFile {
    /// The selection of `tests` written for its run, when it is a pytest run that names tests.
    pub(crate) fn for_run(
        sandbox: &Sandbox,
        mounts: &Mounts,
        tests: &TestSpec,
    ) -> Result<Option<SelectionFile>, EnvError> {
        if tests.runner != Runner::Pytest || tests.select.is_empty() {
            return Ok(None);
        }
        let name = format!(
            "select-{}-{}.json",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let host = mounts.harness.join(&name);
        let json = serde_json::to_vec(&tests.select).expect("names serialise");
        std::fs::write(&host, json).map_err(io("write", &host))?;
        let visible = format!("{}/{name}", sandbox.visible_harness(mounts));
        Ok(Some(SelectionFile { host, visible }))
    }

    /// The variable that points the plugin at this file.
    pub(crate) fn env(&self) -> (String, String) {
        (SELECT_ENV.to_owned(), self.visible.clone())
    }
}

impl Drop for SelectionFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.host);
    }
}
