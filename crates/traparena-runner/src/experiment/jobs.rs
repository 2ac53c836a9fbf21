//! Running planned episodes: bounded concurrency, one results line (and trajectory) per
//! episode, written crash-safely.

use super::*;

/// One episode to run: its task, key, condition (`None`: the baseline) and fork.
pub(super) struct Job {
    pub(super) task_index: usize,
    pub(super) key: EpisodeKey,
    pub(super) ci: Option<usize>,
    pub(super) fork: Option<ForkPlan>,
}

pub(super) async fn run_keys(
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
pub(super) async fn run_jobs(
    s: &Arc<Shared>,
    ti: usize,
    jobs: Vec<Job>,
    notes: Notes,
) -> Result<(), RunError> {
    let notes = Arc::new(notes);
    let mut set = JoinSet::new();
    for job in jobs {
        let skip = s.opts.shard.is_some_and(|sh| !shard_owns(&sh, &job.key))
            || s.done.lock().contains(&job.key);
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
            // A reached spending limit starts no more episodes; those in flight finish.
            if s.limit_hit() {
                return Ok(());
            }
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
pub(super) fn lines_of(
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
                logs: r.logs.clone(),
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

pub(super) async fn run_one(
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
    s.done.lock().insert(k);
    s.spend(&line.usage);
    s.spend(&line.attacker_usage);
    {
        let mut rep = s.report.lock();
        rep.ran += 1;
        if line.infra_error.is_some() {
            rep.infra_errors += 1;
        }
    }
    s.progress.finished(&line);
    Ok(())
}
