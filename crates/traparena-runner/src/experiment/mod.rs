//! Experiments: targets × conditions × rounds × tasks × samples, with the baseline, the curator
//! between rounds, bounded concurrency, crash-safe results, resume and shards.

use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use traparena_attack::{Curator, Notes, RoundEvidence, TargetReaction};
use traparena_env::Sandbox;
use traparena_eval::Evaluator;
use traparena_results::{
    ConditionInfo, EpisodeKey, Manifest, ResultLine, TrajectoryLine, folder_sha256, sha256_json,
};
use traparena_task::{EpisodeContext, ModelUse, Task};

use crate::episode::{Episode, EpisodeConfig, TestSlots};
use crate::error::RunError;
use crate::limits::{Limits, Spent};
use crate::registry::ResolvedSpec;
use crate::single::{ForkSource, SingleEpisode, SingleOutcome};
use crate::spec::{ConditionSpec, ExperimentSpec};
use crate::store::{ResultsDir, curator_err};

mod jobs;
mod rounds;

use jobs::*;
use rounds::*;

pub use traparena_task::Shard;

/// True when `shard` runs the episode `key`: a stable hash of the key picks the shard. A fork
/// goes with its parent, so that every shard can fork the baseline episodes it ran.
pub(crate) fn shard_owns(shard: &Shard, key: &EpisodeKey) -> bool {
    if let Some(parent) = key.parent() {
        return shard_owns(shard, &parent);
    }
    let h = Sha256::digest(key.to_string().as_bytes());
    (u64::from_le_bytes(h[..8].try_into().expect("8 bytes")) % shard.count as u64) as u32
        == shard.index
}

/// How to run an experiment.
#[derive(Debug, Clone)]
pub struct ExperimentOptions {
    /// The results folder.
    pub out: PathBuf,
    /// Continue an interrupted experiment in `out`.
    pub resume: bool,
    /// Run one share only (curated rounds after the first then wait for notes).
    pub shard: Option<Shard>,
    /// Most episodes in flight.
    pub concurrency: usize,
    /// Most test processes at once (default: the number of cores).
    pub test_processes: usize,
    /// Run no episode; only compute the curator notes that finished rounds allow.
    pub curate_only: bool,
    /// When the experiment started (RFC 3339), for the manifest of a new results folder; the
    /// library reads no clock. `None` leaves it out.
    pub created: Option<String>,
    /// Spending limits over the spec's own (each set limit replaces the spec's).
    pub limits: Limits,
}

impl ExperimentOptions {
    /// A fresh run into `out`: no resume, no shard, 4 episodes and 2 test processes at once,
    /// no manifest date.
    pub fn new(out: impl Into<PathBuf>) -> ExperimentOptions {
        ExperimentOptions {
            out: out.into(),
            resume: false,
            shard: None,
            concurrency: 4,
            test_processes: 2,
            curate_only: false,
            created: None,
            limits: Limits::default(),
        }
    }
}

/// Receives progress (the library never prints).
pub trait Progress: Send + Sync {
    /// The plan: episodes in this run, and how many of them were already done.
    fn planned(&self, _total: u64, _done: u64) {}
    /// The forks of a target's baseline episodes were planned once those had run: `added`
    /// more episodes, `done` of which were already done (forks are planned from the
    /// baseline's trajectories, so they are not in the first plan).
    fn forks_planned(&self, _added: u64, _done: u64) {}
    /// An episode finished and was written.
    fn finished(&self, _line: &ResultLine) {}
    /// Something worth saying (a curator step, a shard waiting for notes).
    fn note(&self, _text: &str) {}
}

/// No progress reporting.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;
impl Progress for Silent {}

/// What a run of [`run_experiment`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExperimentReport {
    /// Episodes this run is responsible for (after sharding).
    pub planned: u64,
    /// Of those, already in the results folder when it started.
    pub already_done: u64,
    /// Episodes run and written now.
    pub ran: u64,
    /// Of those, infrastructure errors.
    pub infra_errors: u64,
    /// Curator steps done now.
    pub curated: u64,
    /// Curated sequences that stopped for lack of notes (sharded runs).
    pub waiting_for_notes: Vec<String>,
    /// Fork episodes planned (included in `planned` and `already_done`).
    pub forks: u64,
    /// The spending limit that stopped the run, said in one phrase (`the cost limit of $0.5
    /// ($0.51 spent)`); `None` when no limit was reached. Episodes not started then are
    /// `planned − already_done − ran`; `--resume` with a higher limit runs them.
    pub limit_reached: Option<String>,
    /// What the results folder holds spent at the end (earlier runs' lines included).
    pub spent: Spent,
}

struct Shared {
    spec: ExperimentSpec,
    tasks: Vec<(Task, Arc<Evaluator>)>,
    components: ResolvedSpec,
    sandbox: Sandbox,
    results: Arc<ResultsDir>,
    episodes: Arc<Semaphore>,
    tests: TestSlots,
    progress: Arc<dyn Progress>,
    done: Mutex<BTreeSet<EpisodeKey>>,
    report: Mutex<ExperimentReport>,
    opts: ExperimentOptions,
    limits: Limits,
    spent: Mutex<Spent>,
}

impl Shared {
    /// Counts what a finished episode or curator step spent.
    pub(super) fn spend(&self, u: &traparena_task::Usage) {
        self.spent.lock().add(u);
    }

    /// True when a spending limit is reached, which stops the experiment from starting more
    /// (the first time, the report says which limit).
    pub(super) fn limit_hit(&self) -> bool {
        let spent = *self.spent.lock();
        let Some(why) = self.limits.reached(&spent) else {
            return false;
        };
        let mut rep = self.report.lock();
        if rep.limit_reached.is_none() {
            rep.limit_reached = Some(why);
        }
        true
    }
}

/// The seed of one episode: derived from the experiment's seed and the episode's key, so it does
/// not depend on the order episodes happen to run in.
pub fn episode_seed(seed: u64, key: &EpisodeKey) -> u64 {
    seed_of(seed, &key.to_string())
}

/// The seed of a fork point's continuation, shared by its two branches (derived from the key
/// without the branch, [`EpisodeKey::fork_point`]).
pub fn fork_seed(seed: u64, key: &EpisodeKey) -> u64 {
    seed_of(seed, &key.fork_point())
}

fn seed_of(seed: u64, name: &str) -> u64 {
    let h = Sha256::digest(format!("{seed}:{name}").as_bytes());
    u64::from_le_bytes(h[..8].try_into().expect("8 bytes"))
}

/// Runs (or resumes, or runs a shard of) an experiment. Every finished episode is appended to
/// `episodes.jsonl` before the next is counted; after a crash, `resume` redoes only what was not
/// written. Curated conditions run round by round, the curator rewriting the notes in between.
///
/// `components` is the spec resolved against a [`Registry`](crate::Registry)
/// ([`Registry::resolve`](crate::Registry::resolve)); every component's `prepare` hook runs
/// once first, and what it has to say goes to `progress`.
pub async fn run_experiment(
    components: &ResolvedSpec,
    sandbox: &Sandbox,
    opts: &ExperimentOptions,
    progress: Arc<dyn Progress>,
) -> Result<ExperimentReport, RunError> {
    let spec = &components.spec;
    // Refused before any task is loaded or component prepared: a folder that is not ours.
    ResultsDir::check(&opts.out)?;
    let mut tasks = Vec::new();
    let mut hashes = BTreeMap::new();
    for dir in spec.task_dirs(&components.base_dir)? {
        let task = Task::load(&dir)?;
        if hashes
            .insert(task.spec.id.clone(), folder_sha256(&task.dir)?)
            .is_some()
        {
            return Err(RunError::Results {
                path: dir,
                message: format!(
                    "task id {:?} appears twice in the spec's task sets",
                    task.spec.id
                ),
            });
        }
        let (t, sb) = (task.clone(), sandbox.clone());
        let ev = tokio::task::spawn_blocking(move || Evaluator::new(&t, &sb))
            .await
            .map_err(|e| RunError::Join(e.to_string()))??;
        tasks.push((task, Arc::new(ev)));
    }
    if !opts.curate_only {
        for line in components.prepare().await? {
            progress.note(&line);
        }
    }
    let manifest = Manifest {
        harness_version: crate::HARNESS_VERSION.to_owned(),
        spec_sha256: sha256_json(&spec.identity()),
        tasks: hashes,
        prompt_hashes: tasks
            .first()
            .map(|(t, _)| prompt_hashes(components, t))
            .unwrap_or_default(),
        created: opts.created.clone(),
    };
    let (results, done_lines) = ResultsDir::open(&opts.out, spec, &manifest, opts.resume)?;
    let done: BTreeSet<EpisodeKey> = done_lines.iter().map(|l| l.key()).collect();
    let owned = |k: &EpisodeKey| opts.shard.is_none_or(|s| shard_owns(&s, k));
    let all = plan(spec, &tasks);
    let mine: Vec<&EpisodeKey> = all.iter().filter(|k| owned(k)).collect();
    let already = mine.iter().filter(|k| done.contains(*k)).count() as u64;
    let spent = spent_on_disk(spec, &opts.out, &done_lines)?;
    let shared = Arc::new(Shared {
        spec: spec.clone(),
        tasks,
        components: components.clone(),
        sandbox: sandbox.clone(),
        results: Arc::new(results),
        episodes: Arc::new(Semaphore::new(opts.concurrency.max(1))),
        tests: TestSlots::new(opts.test_processes),
        progress: progress.clone(),
        done: Mutex::new(done),
        report: Mutex::new(ExperimentReport {
            planned: mine.len() as u64,
            already_done: already,
            ..Default::default()
        }),
        opts: opts.clone(),
        limits: opts.limits.or(spec.limits),
        spent: Mutex::new(spent),
    });
    if !opts.curate_only {
        progress.planned(mine.len() as u64, already);
    }
    let mut sequences = JoinSet::new();
    for ti in 0..spec.targets.len() {
        if !opts.curate_only {
            let s = shared.clone();
            sequences.spawn(async move {
                baseline(s.clone(), ti).await?;
                forks(s, ti).await
            });
        }
        for ci in 0..spec.conditions.len() {
            let s = shared.clone();
            sequences.spawn(async move { condition_rounds(s, ti, ci).await });
        }
    }
    while let Some(r) = sequences.join_next().await {
        r.map_err(|e| RunError::Join(e.to_string()))??;
    }
    let mut report = shared.report.lock().clone();
    report.spent = *shared.spent.lock();
    Ok(report)
}

/// What the results folder `out` already holds spent: its lines' target and attacker usage and
/// its curator steps' (a resumed run's limits count them).
fn spent_on_disk(
    spec: &ExperimentSpec,
    out: &std::path::Path,
    lines: &[ResultLine],
) -> Result<Spent, RunError> {
    let mut spent = Spent::default();
    for l in lines {
        spent.add(&l.usage);
        spent.add(&l.attacker_usage);
    }
    for t in &spec.targets {
        for c in &spec.conditions {
            if let Some(u) = traparena_results::read_curator_usage(out, &t.name, &c.name)? {
                spent.add(&u);
            }
        }
    }
    Ok(spent)
}

/// The prompt-template hash of every component that has one, for the manifest: asked of the
/// components built for the first task (`agent:TARGET`, `agent:TARGET+defence`,
/// `attacker:CONDITION`, `curator:CONDITION`).
fn prompt_hashes(c: &ResolvedSpec, task: &Task) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let ep = |defence| EpisodeContext {
        task,
        seed: 0,
        scope: "manifest",
        defence,
        fork: None,
    };
    let any_defence = c.spec.conditions.iter().any(|k| k.defence);
    for (t, a) in c.spec.targets.iter().zip(&c.agents) {
        for defence in [false, true] {
            if defence && !any_defence {
                continue;
            }
            if let Some(h) = a.build(&ep(defence)).ok().and_then(|a| a.prompt_hash()) {
                let suffix = if defence { "+defence" } else { "" };
                out.insert(format!("agent:{}{suffix}", t.name), h);
            }
        }
    }
    for (i, k) in c.spec.conditions.iter().enumerate() {
        if let Some(h) = c.attackers[i]
            .build(&ep(false))
            .ok()
            .and_then(|a| a.prompt_hash())
        {
            out.insert(format!("attacker:{}", k.name), h);
        }
        let curator = c.curators[i].as_ref().and_then(|s| s.build(&()).ok());
        if let Some(h) = curator.and_then(|c| c.prompt_hash()) {
            out.insert(format!("curator:{}", k.name), h);
        }
    }
    out
}

/// Every key of the experiment, in a stable order.
fn plan(spec: &ExperimentSpec, tasks: &[(Task, Arc<Evaluator>)]) -> Vec<EpisodeKey> {
    let mut keys = Vec::new();
    for t in &spec.targets {
        for (task, _) in tasks {
            for sample in 0..spec.baseline_samples {
                keys.push(key(&t.name, "baseline", &task.spec.id, 0, sample));
            }
        }
        for c in &spec.conditions {
            for round in 0..spec.rounds {
                for (task, _) in tasks {
                    for sample in 0..spec.samples_per_round {
                        keys.push(key(&t.name, &c.name, &task.spec.id, round, sample));
                    }
                }
            }
        }
    }
    keys
}

fn key(target: &str, condition: &str, task: &str, round: u32, sample: u32) -> EpisodeKey {
    EpisodeKey {
        target: target.to_owned(),
        condition: condition.to_owned(),
        task: task.to_owned(),
        round,
        sample,
        fork: None,
    }
}
