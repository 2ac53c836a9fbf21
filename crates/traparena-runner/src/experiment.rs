//! Experiments: targets × conditions × rounds × tasks × samples, with the baseline, the curator
//! between rounds, bounded concurrency, crash-safe results, resume and shards.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

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
use crate::registry::ResolvedSpec;
use crate::single::{ForkSource, SingleEpisode, SingleOutcome};
use crate::spec::{ConditionSpec, ExperimentSpec};
use crate::store::{ResultsDir, curator_err};

/// One share of a sharded experiment: shard `index` of `count` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard (0-based).
    pub index: u32,
    /// How many shards.
    pub count: u32,
}

impl Shard {
    /// Parses `I/N`.
    pub fn parse(s: &str) -> Option<Shard> {
        let (i, n) = s.split_once('/')?;
        let (index, count) = (i.trim().parse().ok()?, n.trim().parse().ok()?);
        (count >= 1 && index < count).then_some(Shard { index, count })
    }

    /// True when this shard runs `key`: a stable hash of the key picks the shard. A fork goes
    /// with its parent, so that every shard can fork the baseline episodes it ran.
    pub fn owns(&self, key: &EpisodeKey) -> bool {
        if let Some(parent) = key.parent() {
            return self.owns(&parent);
        }
        let h = Sha256::digest(key.to_string().as_bytes());
        (u64::from_le_bytes(h[..8].try_into().expect("8 bytes")) % self.count as u64) as u32
            == self.index
    }
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
        spec_sha256: sha256_json(spec),
        tasks: hashes,
        prompt_hashes: tasks
            .first()
            .map(|(t, _)| prompt_hashes(components, t))
            .unwrap_or_default(),
        created: opts.created.clone(),
    };
    let (results, done_lines) = ResultsDir::open(&opts.out, spec, &manifest, opts.resume)?;
    let done: BTreeSet<EpisodeKey> = done_lines.iter().map(|l| l.key()).collect();
    let owned = |k: &EpisodeKey| opts.shard.is_none_or(|s| s.owns(k));
    let all = plan(spec, &tasks);
    let mine: Vec<&EpisodeKey> = all.iter().filter(|k| owned(k)).collect();
    let already = mine.iter().filter(|k| done.contains(*k)).count() as u64;
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
    let report = shared
        .report
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    Ok(report)
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

async fn baseline(s: Arc<Shared>, ti: usize) -> Result<(), RunError> {
    let target = &s.spec.targets[ti];
    let keys: Vec<(usize, EpisodeKey)> = s
        .tasks
        .iter()
        .enumerate()
        .flat_map(|(i, (task, _))| {
            (0..s.spec.baseline_samples)
                .map(move |sample| (i, key(&target.name, "baseline", &task.spec.id, 0, sample)))
        })
        .collect();
    run_keys(&s, ti, None, keys, Notes::empty(s.spec.note_limits)).await
}

/// The forks of a target's baseline episodes, once those ran: for each forked condition, each
/// chosen baseline episode this run owns and each of its fork steps, the message branch and
/// the silent branch.
async fn forks(s: Arc<Shared>, ti: usize) -> Result<(), RunError> {
    let target = s.spec.targets[ti].name.clone();
    let forked: Vec<usize> = (0..s.spec.conditions.len())
        .filter(|&ci| s.spec.conditions[ci].fork.is_some())
        .collect();
    if forked.is_empty() {
        return Ok(());
    }
    let parents: BTreeSet<EpisodeKey> = s
        .tasks
        .iter()
        .flat_map(|(task, _)| {
            (0..s.spec.baseline_samples)
                .map(|sample| {
                    key(
                        &target,
                        traparena_results::BASELINE,
                        &task.spec.id,
                        0,
                        sample,
                    )
                })
                .collect::<Vec<_>>()
        })
        .filter(|k| s.opts.shard.is_none_or(|sh| sh.owns(k)))
        .collect();
    let usable = s.results.usable(&parents)?;
    let trajectories = s.results.trajectories(&usable)?;
    let mut jobs = Vec::new();
    for ci in forked {
        let cond = &s.spec.conditions[ci];
        let spec = cond.fork.as_ref().expect("filtered above");
        for t in &trajectories {
            if spec.samples.is_some_and(|n| t.key.sample >= n) {
                continue;
            }
            let task_index = s
                .tasks
                .iter()
                .position(|(task, _)| task.spec.id == t.key.task)
                .expect("a baseline key of a spec task");
            let parent_seed = episode_seed(s.spec.seed, &t.key);
            for (step, points) in spec.steps(&t.trajectory, parent_seed) {
                for message in [true, false] {
                    let k = EpisodeKey {
                        condition: cond.name.clone(),
                        fork: Some(traparena_results::ForkKey { step, message }),
                        ..t.key.clone()
                    };
                    let plan = ForkPlan {
                        parent: t.key.clone(),
                        prefix: t.trajectory[..step as usize].to_vec(),
                        points: points.clone(),
                        speak: spec.speak,
                    };
                    jobs.push((task_index, k, ci, plan));
                }
            }
        }
    }
    let done = {
        let d = s.done.lock().unwrap_or_else(|p| p.into_inner());
        jobs.iter().filter(|j| d.contains(&j.1)).count() as u64
    };
    {
        let mut rep = s.report.lock().unwrap_or_else(|p| p.into_inner());
        rep.planned += jobs.len() as u64;
        rep.already_done += done;
        rep.forks += jobs.len() as u64;
    }
    s.progress.forks_planned(jobs.len() as u64, done);
    let jobs = jobs
        .into_iter()
        .map(|(task_index, key, ci, plan)| Job {
            task_index,
            key,
            ci: Some(ci),
            fork: Some(plan),
        })
        .collect();
    run_jobs(&s, ti, jobs, Notes::empty(s.spec.note_limits)).await
}

/// What a fork episode replays.
struct ForkPlan {
    parent: EpisodeKey,
    prefix: Vec<traparena_task::Step>,
    points: Vec<String>,
    speak: crate::fork::Speak,
}

async fn condition_rounds(s: Arc<Shared>, ti: usize, ci: usize) -> Result<(), RunError> {
    let target = s.spec.targets[ti].clone();
    let cond = s.spec.conditions[ci].clone();
    let dir = s.results.path().to_owned();
    let mut curator: Option<Box<dyn Curator>> = None;
    let mut notes = Notes::empty(s.spec.note_limits);
    let curator_setup = s.components.curators[ci].clone();
    for round in 0..s.spec.rounds {
        if let (Some(setup), true) = (&curator_setup, round > 0) {
            match ResultsDir::read_notes(&dir, &target.name, &cond.name, round)? {
                Some(n) => notes = n,
                None if s.opts.shard.is_some() => {
                    let msg = format!(
                        "{}/{}: round {round} waits for curator notes (merge the shards and run the curator step)",
                        target.name, cond.name
                    );
                    s.progress.note(&msg);
                    s.report
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .waiting_for_notes
                        .push(msg);
                    return Ok(());
                }
                None => {
                    if !round_complete(&s, &target.name, &cond.name, round - 1) {
                        if s.opts.curate_only {
                            return Ok(());
                        }
                        return Err(RunError::Results {
                            path: dir,
                            message: format!(
                                "{}/{}: round {} is incomplete before the curator step",
                                target.name,
                                cond.name,
                                round - 1
                            ),
                        });
                    }
                    if curator.is_none() {
                        curator = Some(setup.build(&()).map_err(|e| RunError::Results {
                            path: dir.clone(),
                            message: format!("curator for {}/{}: {e}", target.name, cond.name),
                        })?);
                    }
                    let evidence = evidence(&s, &target.name, &cond.name, round - 1)?;
                    let c = curator.as_mut().expect("built above");
                    let before = c.usage();
                    notes = c.curate(&notes, &evidence).await.map_err(curator_err)?;
                    let after = c.usage();
                    let spent = traparena_task::Usage {
                        prompt_tokens: after.prompt_tokens.saturating_sub(before.prompt_tokens),
                        completion_tokens: after
                            .completion_tokens
                            .saturating_sub(before.completion_tokens),
                        reasoning_tokens: after
                            .reasoning_tokens
                            .saturating_sub(before.reasoning_tokens),
                        calls_without_usage: after
                            .calls_without_usage
                            .saturating_sub(before.calls_without_usage),
                    };
                    // The tokens first: notes on disk always have theirs beside them.
                    ResultsDir::write_curator_usage(&dir, &target.name, &cond.name, round, spent)?;
                    ResultsDir::write_notes(&dir, &target.name, &cond.name, round, &notes)?;
                    s.report.lock().unwrap_or_else(|p| p.into_inner()).curated += 1;
                    s.progress.note(&format!(
                        "{}/{}: curator wrote {} notes for round {round}",
                        target.name,
                        cond.name,
                        notes.items().len()
                    ));
                }
            }
        }
        if s.opts.curate_only {
            continue;
        }
        let keys: Vec<(usize, EpisodeKey)> = s
            .tasks
            .iter()
            .enumerate()
            .flat_map(|(i, (task, _))| {
                let (t, c) = (target.name.clone(), cond.name.clone());
                (0..s.spec.samples_per_round)
                    .map(move |sample| (i, key(&t, &c, &task.spec.id, round, sample)))
            })
            .collect();
        run_keys(&s, ti, Some(ci), keys, notes.clone()).await?;
    }
    Ok(())
}

fn round_complete(s: &Shared, target: &str, condition: &str, round: u32) -> bool {
    let done = s.done.lock().unwrap_or_else(|p| p.into_inner());
    s.tasks.iter().all(|(task, _)| {
        (0..s.spec.samples_per_round)
            .all(|sample| done.contains(&key(target, condition, &task.spec.id, round, sample)))
    })
}

/// E_r: every delivered message of a round and what the target did next.
fn evidence(
    s: &Shared,
    target: &str,
    condition: &str,
    round: u32,
) -> Result<RoundEvidence, RunError> {
    let keys: BTreeSet<EpisodeKey> = s
        .tasks
        .iter()
        .flat_map(|(task, _)| {
            (0..s.spec.samples_per_round)
                .map(move |sample| key(target, condition, &task.spec.id, round, sample))
        })
        .collect();
    let mut reactions = Vec::new();
    for t in s.results.trajectories(&keys)? {
        for (i, step) in t.trajectory.iter().enumerate() {
            if let Some(m) = &step.message {
                reactions.push(TargetReaction {
                    task: t.key.task.clone(),
                    step: step.index,
                    message: m.clone(),
                    next_actions: t.trajectory[i + 1..]
                        .iter()
                        .take(3)
                        .filter_map(|s| s.action.clone())
                        .collect(),
                    accepted: t.accepted,
                    susceptible: t.susceptible,
                });
            }
        }
    }
    Ok(RoundEvidence {
        round,
        target: target.to_owned(),
        reactions,
    })
}

/// One episode to run: its task, key, condition (`None`: the baseline) and fork.
struct Job {
    task_index: usize,
    key: EpisodeKey,
    ci: Option<usize>,
    fork: Option<ForkPlan>,
}

async fn run_keys(
    s: &Arc<Shared>,
    ti: usize,
    ci: Option<usize>,
    keys: Vec<(usize, EpisodeKey)>,
    notes: Notes,
) -> Result<(), RunError> {
    let jobs = keys
        .into_iter()
        .map(|(task_index, key)| Job {
            task_index,
            key,
            ci,
            fork: None,
        })
        .collect();
    run_jobs(s, ti, jobs, notes).await
}

/// Runs the jobs this run owns and has not done, at most `concurrency` at once.
async fn run_jobs(
    s: &Arc<Shared>,
    ti: usize,
    jobs: Vec<Job>,
    notes: Notes,
) -> Result<(), RunError> {
    let notes = Arc::new(notes);
    let mut set = JoinSet::new();
    for job in jobs {
        let skip = s.opts.shard.is_some_and(|sh| !sh.owns(&job.key))
            || s.done
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(&job.key);
        if skip {
            continue;
        }
        let (s, notes) = (s.clone(), notes.clone());
        set.spawn(async move {
            let _permit = s
                .episodes
                .clone()
                .acquire_owned()
                .await
                .map_err(|e| RunError::Join(e.to_string()))?;
            let Job {
                task_index,
                key,
                ci,
                fork,
            } = job;
            run_one(&s, ti, ci, task_index, key, &notes, fork.as_ref()).await
        });
    }
    while let Some(r) = set.join_next().await {
        r.map_err(|e| RunError::Join(e.to_string()))??;
    }
    Ok(())
}

/// The results lines of the episode of `k`: from its record, or, for an episode that could not
/// run, an infrastructure failure with an empty trajectory. The condition's description gets
/// the attacker's declared access and role.
fn lines_of(
    outcome: SingleOutcome,
    k: &EpisodeKey,
    mut info: ConditionInfo,
    seed: u64,
) -> (ResultLine, TrajectoryLine) {
    let error = match outcome {
        SingleOutcome::Ran(r) => {
            info.access = r.attacker_access.map(|a| a.as_str().to_owned());
            info.role = r.attacker_role.map(|a| a.as_str().to_owned());
            let t = TrajectoryLine {
                key: k.clone(),
                accepted: r.accepted,
                susceptible: r.susceptible,
                trajectory: r.trajectory.clone(),
                rejected_messages: r.rejected_messages.clone(),
                attacker_errors: r.attacker_errors.clone(),
                prompt_hashes: r.prompt_hashes.clone(),
            };
            return (r.result_line(k, &info), t);
        }
        SingleOutcome::Failed(e) => e.to_string(),
        SingleOutcome::NotBuilt { component, error } => format!("{component}: {error}"),
    };
    (
        ResultLine::infra_failure(k, &info, seed, error),
        TrajectoryLine::empty(k),
    )
}

async fn run_one(
    s: &Arc<Shared>,
    ti: usize,
    ci: Option<usize>,
    task_index: usize,
    k: EpisodeKey,
    notes: &Notes,
    fork: Option<&ForkPlan>,
) -> Result<(), RunError> {
    let cond = ci.map(|c| &s.spec.conditions[c]);
    let mut info = cond
        .map(ConditionSpec::info)
        .unwrap_or_else(|| ConditionInfo {
            attacker: "none".into(),
            ..ConditionInfo::default()
        });
    if let Some(c) = ci {
        info.uses_model = s.components.attackers[c].model() != ModelUse::None;
    }
    let (task, evaluator) = &s.tasks[task_index];
    let scope = k.to_string();
    let parent_scope = fork.map(|f| f.parent.to_string()).unwrap_or_default();
    let single = SingleEpisode {
        task,
        scope: &scope,
        seed: match fork {
            Some(_) => fork_seed(s.spec.seed, &k),
            None => episode_seed(s.spec.seed, &k),
        },
        defence: cond.is_some_and(|c| c.defence),
        fork: fork.map(|f| ForkSource {
            fork: crate::fork::Fork {
                parent: f.parent.to_string(),
                prefix: f.prefix.clone(),
                speak: f.speak,
            },
            parent_scope: &parent_scope,
            parent_seed: episode_seed(s.spec.seed, &f.parent),
        }),
    };
    // The silent branch of a fork point has no attacker.
    let attacker = ci
        .filter(|_| k.fork.is_none_or(|f| f.message))
        .map(|c| s.components.attackers[c].as_ref());
    let config = EpisodeConfig {
        budget: s.spec.budget,
        schedule: s.spec.schedule.clone(),
        leakage: s.spec.leakage.clone(),
        ..EpisodeConfig::default()
    };
    let builder = Episode::builder(task)
        .config(config)
        .evaluator(evaluator.clone())
        .sandbox(s.sandbox.clone())
        .notes(notes.clone())
        .test_slots(s.tests.clone());
    let agent = s.components.agents[ti].as_ref();
    let seed = single.seed;
    let outcome = single.run(agent, attacker, builder).await?;
    let (mut line, trajectory) = lines_of(outcome, &k, info, seed);
    if let (Some(f), Some(fk)) = (fork, k.fork) {
        line.fork = Some(traparena_results::ForkInfo {
            parent: f.parent.to_string(),
            step: fk.step,
            message: fk.message,
            points: f.points.clone(),
        });
    }
    let results = s.results.clone();
    let (l, t) = (line.clone(), trajectory);
    tokio::task::spawn_blocking(move || results.append(&l, &t))
        .await
        .map_err(|e| RunError::Join(e.to_string()))??;
    s.done.lock().unwrap_or_else(|p| p.into_inner()).insert(k);
    {
        let mut rep = s.report.lock().unwrap_or_else(|p| p.into_inner());
        rep.ran += 1;
        if line.infra_error.is_some() {
            rep.infra_errors += 1;
        }
    }
    s.progress.finished(&line);
    Ok(())
}
