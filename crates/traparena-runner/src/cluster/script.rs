//! The shell commands of a study's jobs, whatever the scheduler: each shard's and each merge
//! step's, with the markers they leave in `OUT/state` when they end.
//!
//! The schedulers differ in how a job is tried again ([`Retries`]), and so in which failure
//! a marker records: under Slurm every attempt starts afresh and records how it ended; under
//! Kubernetes only the last attempt's failure is recorded, since the jobs after it wait on the
//! markers ([`gate`]) and must not give up while a retry is still to come.

use std::path::Path;

use super::{JobSettings, Layout, Plan, Work};

/// The exit status of a job that did not run because a job before it failed for good.
pub const UPSTREAM_FAILED: i32 = 86;

/// How the scheduler tries a job again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retries {
    /// Only when asked (a requeue, a resubmission): each attempt clears the markers, and
    /// records how it ended. The chain itself is the scheduler's (`afterok`).
    Slurm,
    /// Up to `limit` more times after a failure (`backoffLimitPerIndex`), counted in
    /// `$TRAPARENA_ATTEMPT`: a failure is recorded only when no retry is left. A job whose
    /// marker says it ended well exits at once, so that the manifests can be applied again.
    Kubernetes {
        /// Retries of each index.
        limit: u32,
    },
}

impl Retries {
    /// What the log's first line says about the job and its attempt.
    fn whereabouts(self) -> &'static str {
        match self {
            Retries::Slurm => {
                "job ${SLURM_JOB_ID:-?} on $(hostname), attempt ${SLURM_RESTART_COUNT:-0}"
            }
            Retries::Kubernetes { .. } => "pod $(hostname), attempt ${TRAPARENA_ATTEMPT:-0}",
        }
    }

    /// The start of a job whose markers are `$state/NAME.ok` and `.failed` (`name` may hold
    /// `$i`), with a shell function `fail RC` that records a failure (when it is final) and
    /// exits.
    fn start(self, name: &str) -> String {
        match self {
            Retries::Slurm => format!(
                "rm -f \"$state/{name}.ok\" \"$state/{name}.failed\"\n\
                 fail() {{ echo \"$1\" > \"$state/{name}.failed\"; exit \"$1\"; }}\n"
            ),
            Retries::Kubernetes { limit } => format!(
                "if [ -e \"$state/{name}.ok\" ]; then echo \"traparena: {name} already done\"; exit 0; fi\n\
                 rm -f \"$state/{name}.failed\"\n\
                 fail() {{\n  if [ \"$1\" -eq {UPSTREAM_FAILED} ] || [ \"${{TRAPARENA_ATTEMPT:-0}}\" -ge {limit} ]; then\n    \
                 echo \"$1\" > \"$state/{name}.failed\"\n  fi\n  exit \"$1\"\n}}\n"
            ),
        }
    }
}

/// Quotes `s` for a POSIX shell.
pub(crate) fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-=:,+@%".contains(&b))
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Quotes a path for a POSIX shell.
pub(crate) fn quote_path(p: &Path) -> String {
    quote(&p.to_string_lossy())
}

fn experiment_line(settings: &JobSettings, spec: &Path, out: &str, extra: &str) -> String {
    let mut line = format!(
        "{} experiment {} --out {out} --resume{extra}",
        quote_path(&settings.traparena),
        quote_path(spec)
    );
    for a in &settings.extra_args {
        line.push(' ');
        line.push_str(&quote(a));
    }
    line
}

/// The command of shard `"$i"` of `n`.
fn shard_line(settings: &JobSettings, layout: &Layout, n: u32) -> String {
    match &settings.work {
        Work::Experiment { spec } => experiment_line(
            settings,
            spec,
            &format!("{}/\"$i\"", quote_path(&layout.out.join("shards"))),
            &format!(" --shard \"$i/{n}\""),
        ),
        Work::Import { args, .. } => {
            let mut line = format!("{} import", quote_path(&settings.traparena));
            for a in args.iter().chain(&settings.extra_args) {
                line.push(' ');
                line.push_str(&quote(a));
            }
            line.push_str(&format!(" --shard \"$i/{n}\""));
            line
        }
    }
}

/// The comment that says what a shard of pass `p` does.
pub(crate) fn shard_comment(plan: &Plan, settings: &JobSettings, p: u32, index: &str) -> String {
    let n = plan.shards.get();
    match &settings.work {
        Work::Experiment { .. } => format!(
            "# Pass {} of {} of a TrapArena study: shard {index} of {n} runs every episode\n\
             # of its share that the notes at hand allow. --resume keeps what an earlier attempt wrote\n\
             # (a retry, a resubmission), so no episode runs twice.\n",
            p + 1,
            plan.passes
        ),
        Work::Import { .. } => format!(
            "# A TrapArena import in {n} shards: shard {index} imports its block of the records\n\
             # into the shared task folder. A new attempt imports the block again, replacing its\n\
             # own task folders.\n"
        ),
    }
}

/// Shard `$i` of pass `p` (`index` is the shell expression of its index), after its comment.
pub(crate) fn shard_body(
    plan: &Plan,
    layout: &Layout,
    settings: &JobSettings,
    p: u32,
    index: &str,
    retries: Retries,
) -> String {
    let n = plan.shards.get();
    let state = quote_path(&layout.state(p));
    let (pn, passes) = (p + 1, plan.passes);
    let mut s = format!(
        "set -u\ni=\"{index}\"\nstate={state}\nmkdir -p \"$state\"\n{}\
         echo \"traparena: pass {pn} of {passes}, shard $i/{n}, {}\"\n",
        retries.start("shard-$i"),
        retries.whereabouts()
    );
    if let (Retries::Kubernetes { .. }, Some(prev)) = (retries, p.checked_sub(1)) {
        s.push_str(&gate(&layout.state(prev), &["merge"]));
    }
    s.push_str(&shard_line(settings, layout, n));
    s.push_str(
        "\nrc=$?\nif [ \"$rc\" -eq 0 ]; then : > \"$state/shard-$i.ok\"; else fail \"$rc\"; fi\n",
    );
    s
}

/// Waits until every job `names` of the markers' folder `dir` has ended well; when one has
/// failed for good, fails at once with [`UPSTREAM_FAILED`].
fn gate(dir: &Path, names: &[&str]) -> String {
    let dir = quote_path(dir);
    let mut g = String::from("# Wait for the jobs this one depends on.\n");
    for name in names {
        g.push_str(&format!(
            "until [ -e {dir}/{name}.ok ]; do\n  if [ -e {dir}/{name}.failed ]; then\n    \
             echo \"traparena: {name} of the step before failed; nothing runs on partial results\"\n    \
             fail {UPSTREAM_FAILED}\n  fi\n  sleep 10\ndone\n"
        ));
    }
    g
}

/// The merge step of pass `p`: joins the shards (and for a curated study runs the curator step
/// and hands the notes back), then leaves its marker.
pub(crate) fn merge_body(
    plan: &Plan,
    layout: &Layout,
    settings: &JobSettings,
    p: u32,
    retries: Retries,
) -> String {
    let n = plan.shards.get();
    let traparena = quote_path(&settings.traparena);
    let mut m = format!(
        "# Pass {} of {}: {}.\nset -u\nstate={}\nmkdir -p \"$state\"\n{}",
        p + 1,
        plan.passes,
        match (&settings.work, plan.curated) {
            (Work::Import { .. }, _) => "joins the shards' import reports",
            (_, true) =>
                "merges the shards, runs the curator step on the merged results and hands the notes back to every shard",
            (_, false) => "merges the shards",
        },
        quote_path(&layout.state(p)),
        retries.start("merge"),
    );
    if let Retries::Kubernetes { .. } = retries {
        let names: Vec<String> = (0..n).map(|i| format!("shard-{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        m.push_str(&gate(&layout.state(p), &names));
    }
    let spec = match &settings.work {
        Work::Import { tasks, .. } => {
            m.push_str(&format!(
                "{traparena} import merge {} || fail $?\n",
                quote_path(tasks)
            ));
            m.push_str(": > \"$state/merge.ok\"\n");
            return m;
        }
        Work::Experiment { spec } => spec,
    };
    let mq = quote_path(&layout.merged(plan, p));
    let shards: Vec<String> = (0..n).map(|i| quote_path(&layout.shard(i))).collect();
    m.push_str(&format!(
        "# The merged folder is made again from the shards on every attempt.\nrm -rf {mq}\n\
         {traparena} merge {} --out {mq} || fail $?\n",
        shards.join(" ")
    ));
    if plan.curated {
        m.push_str(&experiment_line(settings, spec, &mq, " --curate-only"));
        m.push_str(" || fail $?\n");
        m.push_str(&format!(
            "if [ -d {mq}/notes ]; then\n  for d in {}; do\n    rm -rf \"$d/notes\" && cp -r {mq}/notes \"$d/notes\" || fail 1\n  done\nfi\n",
            shards.join(" ")
        ));
    }
    m.push_str(": > \"$state/merge.ok\"\n");
    m
}
