//! The agent's tools: one [`Action`] in, one authentic [`Observation`] out.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use traparena_task::{Action, AgentCommand, Observation, Task, TestSpec};

use crate::agent::AgentProcess;
use crate::base::Backend;
use crate::error::{EnvError, io};
use crate::origin::{EXCLUDED_ARTEFACTS, OriginTree};
use crate::refused::{Refused, Why};
use crate::running::KillSwitch;
use crate::sandbox::Sandbox;
use crate::testrun::TestRun;
use crate::workspace::Workspace;

/// Size limits of the tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolLimits {
    /// Bytes of tool output an observation keeps; the rest is cut, and the output says so.
    pub observation_bytes: usize,
    /// Largest file `read`, `edit` and `search` will open, in bytes.
    pub read_file_bytes: u64,
    /// Largest content `write` and `edit` will store, in bytes.
    pub write_bytes: usize,
    /// Matches `search` shows.
    pub search_matches: usize,
    /// Entries `list` shows.
    pub list_entries: usize,
}

impl Default for ToolLimits {
    fn default() -> Self {
        ToolLimits {
            observation_bytes: 16 * 1024,
            read_file_bytes: 2 << 20,
            write_bytes: 1 << 20,
            search_matches: 100,
            list_entries: 500,
        }
    }
}

/// The environment an agent acts in: a workspace, the task's public tests and the sandbox.
#[derive(Debug)]
pub struct Environment {
    workspace: Workspace,
    sandbox: Sandbox,
    public_tests: TestSpec,
    timeout_s: u64,
    limits: ToolLimits,
    root: PathBuf,
    submitted: bool,
    last_test: Option<TestRun>,
    /// Whether anything may have changed the workspace: an edit or write, or a test run (tested
    /// code can write files), or an agent process. Nothing else can, so a clean workspace has
    /// an empty diff.
    dirty: bool,
    /// The last agent process started here, to refuse a second one while it runs.
    agent: Option<std::sync::Arc<KillSwitch>>,
}

impl Environment {
    /// A fresh workspace for `task` (a copy of its `repo/`; nothing else of the task). The
    /// original's tree, which the candidate patch is taken against, is read meanwhile on
    /// another thread.
    pub fn new(
        task: &Task,
        sandbox: &Sandbox,
        limits: ToolLimits,
    ) -> Result<Environment, EnvError> {
        Environment::with_origin(task, sandbox, limits, None)
    }

    /// [`new`](Self::new), taking the candidate patch against `origin` when given: the tree
    /// of the task's `repo/` read once ([`OriginTree::read`]) for all of its episodes.
    pub fn with_origin(
        task: &Task,
        sandbox: &Sandbox,
        limits: ToolLimits,
        origin: Option<Arc<OriginTree>>,
    ) -> Result<Environment, EnvError> {
        let sandbox = &sandbox.for_task(task);
        let mut workspace = Workspace::materialize(&task.repo_dir(), sandbox)?;
        match origin {
            Some(o) => workspace.share_origin(o),
            None => workspace.prepare_diff(),
        }
        let root = workspace
            .path()
            .canonicalize()
            .map_err(io("resolve", workspace.path()))?;
        Ok(Environment {
            workspace,
            sandbox: sandbox.clone(),
            public_tests: task.spec.public_tests.clone(),
            timeout_s: task.spec.timeout_s,
            limits,
            root,
            submitted: false,
            last_test: None,
            dirty: false,
            agent: None,
        })
    }

    /// The workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The sandbox backend tested code runs under.
    pub fn backend(&self) -> Backend {
        self.sandbox.backend()
    }

    /// True once the agent submitted.
    pub fn submitted(&self) -> bool {
        self.submitted
    }

    /// The last public test run, when there was one.
    pub fn last_test_run(&self) -> Option<&TestRun> {
        self.last_test.as_ref()
    }

    /// False while no action could have changed the workspace: the candidate patch is then
    /// empty.
    pub fn may_have_changed(&self) -> bool {
        self.dirty
    }

    /// The candidate patch: the diff from `repo/` to the workspace (empty, without running git,
    /// when no action could have changed the workspace).
    pub fn candidate_patch(&mut self) -> Result<String, EnvError> {
        if !self.dirty {
            return Ok(String::new());
        }
        self.workspace.diff()
    }

    /// Starts an external agent as its own process in this environment's sandbox: the same
    /// backend, resource limits (with at least `cmd.timeout` of CPU time), sandbox user, check
    /// of `argv[0]` before the launch and kill of the whole process tree as a test run, with
    /// the workspace as its working folder and standard input from `/dev/null`.
    ///
    /// - Its home folder (`HOME`, [`HOME_PLACEHOLDER`]) is `home` in the scratch folder,
    ///   outside the workspace (`/tmp/home` under bubblewrap and the container backend), owned
    ///   by the sandbox user; `cmd.files` are written there first (a path leaving it is
    ///   [`EnvError::AgentCommand`]). The placeholders in `argv` and `env` become the folders
    ///   as the process sees them (`/workspace` and `/tmp/home` under bubblewrap, the image's
    ///   working directory and `/tmp/home` in a container, the host's paths otherwise);
    ///   `cmd.read_only_paths` are shown read-only for this process, at their own paths.
    /// - Under the container backend the process runs in a container of the task's image of
    ///   its own (started as a workspace's, on this workspace), `exec`'d as the sandbox user
    ///   with the image's `PATH`; the container is removed when the process ends. A read-only
    ///   path that would hide a folder of the image (`/usr`, the working directory) is
    ///   [`EnvError::AgentCommand`].
    /// - Network: with `cmd.proxy_port`, the process reaches `127.0.0.1:<port>` — the model
    ///   proxy on the host — at that same address, and nothing else. Under bubblewrap and the
    ///   builtin backend a forwarder run by `/usr/bin/python3` listens there inside the
    ///   sandbox (bringing loopback up) and forwards to a Unix socket in the harness folder,
    ///   which the harness forwards to the host's port; the builtin backend's Landlock rules
    ///   allow TCP on that port alone. Under the container backend the harness binds that
    ///   address inside the container's network namespace itself and forwards what arrives
    ///   (which takes root: a harness that is not root gets [`EnvError::AgentCommand`], never
    ///   the host's network). Without a port there is no network (as for tests).
    ///   The backend `none` isolates nothing: the process reaches the host's network.
    /// - It edits the workspace directly, so [`Environment::candidate_patch`] diffs it from
    ///   now on, without the files matching `cmd.exclude` ([`Workspace::exclude`]).
    ///
    /// One agent process at a time: a second one while the first still runs is
    /// [`EnvError::AgentCommand`]. A program that cannot start is [`EnvError::Start`]. Run no
    /// public tests through [`Environment::step`] while it runs: they share its sandbox user,
    /// and a test run's cleanup ends that user's processes (backend none) and removes its
    /// files in `/dev/shm` (builtin).
    ///
    /// [`HOME_PLACEHOLDER`]: traparena_task::process::HOME_PLACEHOLDER
    pub fn spawn_agent(&mut self, cmd: &AgentCommand) -> Result<AgentProcess, EnvError> {
        if let Some(switch) = &self.agent
            && !switch.has_ended()
        {
            return Err(EnvError::AgentCommand {
                reason: "an agent process of this environment is still running".into(),
            });
        }
        let process = crate::agent::spawn(&self.sandbox, &mut self.workspace, cmd)?;
        self.agent = Some(process.switch());
        self.dirty = true;
        Ok(process)
    }

    /// Carries out one action. Refused or failing actions are observations with `error` set;
    /// `Err` is only for failures of the harness itself.
    pub fn step(&mut self, action: &Action) -> Result<Observation, EnvError> {
        if matches!(
            action,
            Action::Edit { .. } | Action::Write { .. } | Action::RunPublicTests
        ) {
            self.dirty = true;
        }
        let obs = match action {
            Action::Read {
                path,
                start_line,
                end_line,
            } => self.read(path, *start_line, *end_line)?,
            Action::List { path } => self.list(path.as_deref().unwrap_or(""))?,
            Action::Search { pattern, path } => {
                self.search(pattern, path.as_deref().unwrap_or(""))?
            }
            Action::Edit { path, old, new } => self.edit(path, old, new)?,
            Action::Write { path, content } => self.write(path, content)?,
            Action::RunPublicTests => self.run_public_tests()?,
            Action::Submit => {
                self.submitted = true;
                Observation::ok("Submitted. The episode is over.")
            }
        };
        Ok(self.truncate(obs))
    }

    fn truncate(&self, mut obs: Observation) -> Observation {
        let limit = self.limits.observation_bytes;
        if obs.output.len() > limit {
            let total = obs.output.len();
            let mut cut = limit;
            while !obs.output.is_char_boundary(cut) {
                cut -= 1;
            }
            obs.output.truncate(cut);
            obs.output.push_str(&format!(
                "\n[output truncated: {cut} of {total} bytes shown]"
            ));
            obs.truncated = true;
        }
        obs
    }

    /// Resolves an agent-supplied path inside the workspace, or says why not.
    fn resolve(&self, raw: &str) -> Result<(String, PathBuf), Refused> {
        let refused = |why| Refused {
            raw: raw.to_owned(),
            why,
        };
        if raw.contains('\0') {
            return Err(refused(Why::Nul));
        }
        if raw.starts_with('/') {
            return Err(refused(Why::Absolute { hint: true }));
        }
        let mut parts: Vec<&str> = Vec::new();
        for c in Path::new(raw).components() {
            match c {
                Component::Normal(s) => {
                    let s = s.to_str().ok_or_else(|| refused(Why::NotUtf8))?;
                    if s == ".git" {
                        return Err(refused(Why::Git));
                    }
                    parts.push(s);
                }
                Component::CurDir => {}
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(refused(Why::Escapes));
                    }
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(refused(Why::Absolute { hint: false }));
                }
            }
        }
        let rel = parts.join("/");
        let abs = self.root.join(&rel);
        // Follow links: the deepest existing ancestor must resolve inside the workspace.
        let mut probe = abs.clone();
        loop {
            if std::fs::symlink_metadata(&probe).is_ok() {
                match probe.canonicalize() {
                    Ok(real) if real.starts_with(&self.root) => break,
                    Ok(_) => return Err(refused(Why::LinkOutside)),
                    Err(_) => return Err(refused(Why::DanglingLink)),
                }
            }
            if !probe.pop() {
                break;
            }
        }
        Ok((rel, abs))
    }

    fn read(
        &self,
        raw: &str,
        start: Option<u64>,
        end: Option<u64>,
    ) -> Result<Observation, EnvError> {
        let (rel, abs) = match self.resolve(raw) {
            Ok(p) => p,
            Err(e) => return Ok(Observation::error(e.to_string())),
        };
        let meta = match std::fs::metadata(&abs) {
            Ok(m) => m,
            Err(_) => return Ok(Observation::error(format!("error: {rel}: no such file"))),
        };
        if meta.is_dir() {
            return Ok(Observation::error(format!(
                "error: {rel} is a folder; use list"
            )));
        }
        if !meta.is_file() {
            return Ok(Observation::error(format!(
                "error: {rel} is not a regular file"
            )));
        }
        if meta.len() > self.limits.read_file_bytes {
            return Ok(Observation::error(format!(
                "error: {rel} is {} bytes, over the {}-byte read limit",
                meta.len(),
                self.limits.read_file_bytes
            )));
        }
        let bytes = std::fs::read(&abs).map_err(io("read", &abs))?;
        if bytes.contains(&0) {
            return Ok(Observation::error(format!(
                "error: {rel} is a binary file ({} bytes); not shown",
                bytes.len()
            )));
        }
        let (text, lossy) = match String::from_utf8(bytes) {
            Ok(t) => (t, false),
            Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
        };
        let lines: Vec<&str> = text.lines().collect();
        let n = lines.len() as u64;
        let first = start.unwrap_or(1).max(1);
        let last = end.unwrap_or(n).min(n);
        if n > 0 && first > n {
            return Ok(Observation::error(format!(
                "error: {rel} has {n} lines; start_line {first} is past the end"
            )));
        }
        if last < first && n > 0 {
            return Ok(Observation::error(format!(
                "error: end_line {last} is before start_line {first}"
            )));
        }
        let mut out = format!("{rel} (lines {first}-{last} of {n})\n");
        if lossy {
            out.push_str("[the file is not valid UTF-8; invalid bytes are shown as U+FFFD]\n");
        }
        for (i, line) in lines
            .iter()
            .enumerate()
            .take(last as usize)
            .skip(first as usize - 1)
        {
            out.push_str(&format!("{:>5}  {line}\n", i + 1));
        }
        Ok(Observation::ok(out))
    }

    fn list(&self, raw: &str) -> Result<Observation, EnvError> {
        let (rel, abs) = match self.resolve(raw) {
            Ok(p) => p,
            Err(e) => return Ok(Observation::error(e.to_string())),
        };
        let entries = match std::fs::read_dir(&abs) {
            Ok(e) => e,
            Err(_) if abs.is_file() => {
                return Ok(Observation::error(format!(
                    "error: {rel} is a file; use read"
                )));
            }
            Err(_) => return Ok(Observation::error(format!("error: {rel}: no such folder"))),
        };
        let mut names: Vec<String> = Vec::new();
        for e in entries {
            let e = e.map_err(io("list", &abs))?;
            let name = e.file_name().to_string_lossy().into_owned();
            if name == ".git" || is_artefact(&name) {
                continue;
            }
            let ft = e.file_type().map_err(io("stat", e.path()))?;
            names.push(if ft.is_dir() {
                format!("{name}/")
            } else if ft.is_symlink() {
                let target = std::fs::read_link(e.path())
                    .map(|t| t.display().to_string())
                    .unwrap_or_default();
                format!("{name} -> {target}")
            } else {
                name
            });
        }
        names.sort();
        let shown = if rel.is_empty() { ".".to_owned() } else { rel };
        let mut out = format!("{shown}/ ({} entries)\n", names.len());
        for n in names.iter().take(self.limits.list_entries) {
            out.push_str(n);
            out.push('\n');
        }
        if names.len() > self.limits.list_entries {
            out.push_str(&format!(
                "[{} more entries not shown]\n",
                names.len() - self.limits.list_entries
            ));
        }
        Ok(Observation::ok(out))
    }

    fn search(&self, pattern: &str, raw: &str) -> Result<Observation, EnvError> {
        if pattern.is_empty() {
            return Ok(Observation::error("error: the search pattern is empty"));
        }
        let (rel, abs) = match self.resolve(raw) {
            Ok(p) => p,
            Err(e) => return Ok(Observation::error(e.to_string())),
        };
        if !abs.exists() {
            return Ok(Observation::error(format!(
                "error: {rel}: no such file or folder"
            )));
        }
        let mut hits = Vec::new();
        let mut total = 0usize;
        let walker = walkdir::WalkDir::new(&abs)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| {
                let n = e.file_name().to_string_lossy();
                e.depth() == 0 || !(n == ".git" || is_artefact(&n))
            });
        for entry in walker.flatten() {
            if !entry.file_type().is_file() {
                continue;
            }
            if entry.metadata().map(|m| m.len()).unwrap_or(u64::MAX) > self.limits.read_file_bytes {
                continue;
            }
            let Ok(bytes) = std::fs::read(entry.path()) else {
                continue;
            };
            if bytes.contains(&0) {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            let shown = entry
                .path()
                .strip_prefix(&self.root)
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            for (i, line) in text.lines().enumerate() {
                if line.contains(pattern) {
                    total += 1;
                    if hits.len() < self.limits.search_matches {
                        let line: String = line.chars().take(200).collect();
                        hits.push(format!("{shown}:{}: {line}", i + 1));
                    }
                }
            }
        }
        let mut out = format!("{total} matches for {pattern:?}\n");
        for h in &hits {
            out.push_str(h);
            out.push('\n');
        }
        if total > hits.len() {
            out.push_str(&format!(
                "[{} more matches not shown]\n",
                total - hits.len()
            ));
        }
        Ok(Observation::ok(out))
    }

    fn edit(&mut self, raw: &str, old: &str, new: &str) -> Result<Observation, EnvError> {
        let (rel, abs) = match self.resolve(raw) {
            Ok(p) => p,
            Err(e) => return Ok(Observation::error(e.to_string())),
        };
        if old.is_empty() {
            return Ok(Observation::error(
                "error: `old` is empty; give the exact text to replace",
            ));
        }
        let meta = match std::fs::metadata(&abs) {
            Ok(m) if m.is_file() => m,
            Ok(_) => {
                return Ok(Observation::error(format!(
                    "error: {rel} is not a regular file"
                )));
            }
            Err(_) => return Ok(Observation::error(format!("error: {rel}: no such file"))),
        };
        if meta.len() > self.limits.read_file_bytes {
            return Ok(Observation::error(format!(
                "error: {rel} is over the read limit"
            )));
        }
        let bytes = std::fs::read(&abs).map_err(io("read", &abs))?;
        let Ok(text) = String::from_utf8(bytes) else {
            return Ok(Observation::error(format!(
                "error: {rel} is not UTF-8 text; use write"
            )));
        };
        let count = text.matches(old).count();
        if count != 1 {
            return Ok(Observation::error(if count == 0 {
                format!("error: the text of `old` was not found in {rel}; nothing changed")
            } else {
                format!(
                    "error: the text of `old` occurs {count} times in {rel}; include more context so it occurs once; nothing changed"
                )
            }));
        }
        let updated = text.replacen(old, new, 1);
        if updated.len() > self.limits.write_bytes {
            return Ok(Observation::error(format!(
                "error: the edited file would be {} bytes, over the {}-byte write limit",
                updated.len(),
                self.limits.write_bytes
            )));
        }
        std::fs::write(&abs, &updated).map_err(io("write", &abs))?;
        let line = text[..text.find(old).unwrap_or(0)].matches('\n').count() + 1;
        Ok(Observation::ok(format!(
            "Edited {rel}: replaced 1 occurrence at line {line} ({} lines removed, {} added).",
            old.lines().count().max(1),
            new.lines().count()
        )))
    }

    fn write(&mut self, raw: &str, content: &str) -> Result<Observation, EnvError> {
        let (rel, abs) = match self.resolve(raw) {
            Ok(p) => p,
            Err(e) => return Ok(Observation::error(e.to_string())),
        };
        if rel.is_empty() {
            return Ok(Observation::error("error: write needs a file path"));
        }
        if content.len() > self.limits.write_bytes {
            return Ok(Observation::error(format!(
                "error: the content is {} bytes, over the {}-byte write limit; nothing written",
                content.len(),
                self.limits.write_bytes
            )));
        }
        if abs.is_dir() {
            return Ok(Observation::error(format!("error: {rel} is a folder")));
        }
        let existed = abs.exists();
        self.workspace.create_parents(&abs)?;
        std::fs::write(&abs, content).map_err(io("write", &abs))?;
        if !existed {
            self.workspace.adopt(&abs)?;
        }
        Ok(Observation::ok(format!(
            "{} {rel} ({} bytes).",
            if existed { "Overwrote" } else { "Created" },
            content.len()
        )))
    }

    fn run_public_tests(&mut self) -> Result<Observation, EnvError> {
        let run = self
            .workspace
            .run_tests(&self.sandbox, &self.public_tests, self.timeout_s)?;
        let mut out = run.output.clone();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("[public tests: {}]", run.summary()));
        let mut obs = Observation::ok(out);
        obs.tests = run.counts;
        obs.tests_passed = Some(run.passed());
        self.last_test = Some(run);
        Ok(obs)
    }
}

fn is_artefact(name: &str) -> bool {
    EXCLUDED_ARTEFACTS.iter().any(|pat| {
        let pat = pat.trim_end_matches('/');
        match pat.strip_prefix('*') {
            Some(suffix) => name.ends_with(suffix),
            None => name == pat,
        }
    })
}
