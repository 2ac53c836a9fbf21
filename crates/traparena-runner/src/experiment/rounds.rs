//! What runs in which order for one task: the baseline, the forks of its episodes, and each
//! condition's rounds with the curator's notes between them.

use super::*;

pub(super) async fn baseline(s: Arc<Shared>, ti: usize) -> Result<(), RunError> {
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
pub(super) async fn forks(s: Arc<Shared>, ti: usize) -> Result<(), RunError> {
    let target = s.spec.targets[ti].name.clone();
    let forked: Vec<usize> = (0..s.spec.conditions.len())
        .filter(|&ci| s.spec.conditions[ci].fork.is_some())
        .collect();
    if forked.is_empty() || s.limit_hit() {
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
        .filter(|k| s.opts.shard.is_none_or(|sh| shard_owns(&sh, k)))
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
        let d = s.done.lock();
        jobs.iter().filter(|j| d.contains(&j.1)).count() as u64
    };
    {
        let mut rep = s.report.lock();
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
pub(super) struct ForkPlan {
    pub(super) parent: EpisodeKey,
    pub(super) prefix: Vec<traparena_task::Step>,
    pub(super) points: Vec<String>,
    pub(super) speak: crate::fork::Speak,
}

pub(super) async fn condition_rounds(s: Arc<Shared>, ti: usize, ci: usize) -> Result<(), RunError> {
    let target = s.spec.targets[ti].clone();
    let cond = s.spec.conditions[ci].clone();
    let dir = s.results.path().to_owned();
    let mut curator: Option<Box<dyn Curator>> = None;
    let mut notes = Notes::empty(s.spec.note_limits);
    let curator_setup = s.components.curators[ci].clone();
    for round in 0..s.spec.rounds {
        // A reached spending limit starts no more rounds (nor the curator step before one).
        if s.limit_hit() {
            return Ok(());
        }
        if let (Some(setup), true) = (&curator_setup, round > 0) {
            match ResultsDir::read_notes(&dir, &target.name, &cond.name, round)? {
                Some(n) => notes = n,
                None if s.opts.shard.is_some() => {
                    let msg = format!(
                        "{}/{}: round {round} waits for curator notes (merge the shards and run the curator step)",
                        target.name, cond.name
                    );
                    s.progress.note(&msg);
                    s.report.lock().waiting_for_notes.push(msg);
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
                    let spent = c.usage().since(&before);
                    s.spend(&spent);
                    // The tokens first: notes on disk always have theirs beside them.
                    ResultsDir::write_curator_usage(&dir, &target.name, &cond.name, round, spent)?;
                    ResultsDir::write_notes(&dir, &target.name, &cond.name, round, &notes)?;
                    s.report.lock().curated += 1;
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

pub(super) fn round_complete(s: &Shared, target: &str, condition: &str, round: u32) -> bool {
    let done = s.done.lock();
    s.tasks.iter().all(|(task, _)| {
        (0..s.spec.samples_per_round)
            .all(|sample| done.contains(&key(target, condition, &task.spec.id, round, sample)))
    })
}

/// E_r: every delivered message of a round and what the target did next.
pub(super) fn evidence(
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
