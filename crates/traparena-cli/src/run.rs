//! `traparena run`: one episode of an agent on a task, with or without an attacker, printed and
//! optionally written as an episode record.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use traparena::EpisodeRecord;
use traparena::agent::AgentSetup;
use traparena::attack::AttackerSetup;
use traparena::runner::EpisodeSummary;
use traparena::runner::{ForkSource, SingleEpisode, SingleOutcome};
use traparena::task::{ComponentSpec, Task};

use crate::{INTERNAL, OK, SandboxOpts, bad_input, config_context, sandbox};

/// What `run` does beyond naming its components.
pub(crate) struct RunOptions {
    pub(crate) budget: u32,
    pub(crate) seed: u64,
    pub(crate) out: Option<PathBuf>,
    pub(crate) json: bool,
    pub(crate) defence: bool,
    pub(crate) fork: Option<ForkArgs>,
}

/// `run --fork RECORD --fork-at K`.
pub(crate) struct ForkArgs {
    pub(crate) record: PathBuf,
    pub(crate) at: u32,
    pub(crate) speak: traparena::Speak,
}

/// The recorded episode a `run --fork` replays, checked against the task and the fork step.
fn fork_parent(task: &Task, f: &ForkArgs) -> Result<EpisodeRecord, String> {
    let at = |e: &dyn std::fmt::Display| format!("--fork {}: {e}", f.record.display());
    let record = EpisodeRecord::read(&f.record).map_err(|e| match e {
        traparena::runner::RunError::Results { message, .. } => at(&message),
        e => at(&e),
    })?;
    if record.task != task.spec.id {
        return Err(at(&format!(
            "a record of task {:?}, not of {:?}",
            record.task, task.spec.id
        )));
    }
    if record.infra_error.is_some() {
        return Err(at(&"the recorded episode was an infrastructure error"));
    }
    let steps = record.trajectory.len() as u32;
    if f.at == 0 || f.at >= steps {
        return Err(at(&format!(
            "--fork-at {} is not a step to fork at: the record has {steps} steps (fork at 1 to {})",
            f.at,
            steps.saturating_sub(1)
        )));
    }
    if let Some(s) = record.trajectory[..f.at as usize]
        .iter()
        .find(|s| s.message.is_some())
    {
        return Err(at(&format!(
            "step {} of the record carries a collaborator message; fork before it",
            s.index
        )));
    }
    Ok(record)
}

/// The run's agent and, unless it has none, attacker.
type Components = (Arc<AgentSetup>, Option<Arc<AttackerSetup>>);

/// The run's agent and attacker, configured through the registry and prepared (the lines their
/// preparation tells are printed); `Err` is bad input.
fn components(
    rt: &tokio::runtime::Runtime,
    agent: &ComponentSpec,
    attacker: Option<&ComponentSpec>,
    forked: bool,
) -> Result<Components, String> {
    let registry = traparena::registry();
    let mut cx = config_context(Path::new("."));
    cx.forked = forked;
    let agent = registry
        .agents
        .configure(agent, &cx)
        .map_err(|e| e.to_string())?;
    let attacker = attacker
        .map(|s| registry.attackers.configure(s, &cx))
        .transpose()
        .map_err(|e| match e {
            // `none` is the command's own word for no attacker.
            traparena::task::TaskError::UnknownKind { .. } => format!("{e}; or none"),
            e => e.to_string(),
        })?;
    let lines: Vec<String> = rt.block_on(async {
        let mut lines = agent.prepare().await.map_err(|e| e.to_string())?;
        if let Some(a) = &attacker {
            lines.extend(a.prepare().await.map_err(|e| e.to_string())?);
        }
        Ok::<_, String>(lines)
    })?;
    lines.iter().for_each(|l| eprintln!("traparena: {l}"));
    Ok((agent, attacker))
}

pub(crate) fn run_episode_cmd(
    sandbox_arg: &SandboxOpts,
    task_dir: &Path,
    agent_spec: ComponentSpec,
    attacker_spec: Option<ComponentSpec>,
    opts: &RunOptions,
) -> Result<u8, Box<dyn std::error::Error>> {
    let task = match Task::load(task_dir) {
        Ok(t) => t,
        Err(e) => return bad_input(&e.to_string()),
    };
    if opts.budget == 0 {
        return bad_input("--budget must be at least 1");
    }
    let parent = match opts.fork.as_ref().map(|f| fork_parent(&task, f)) {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => return bad_input(&e),
    };
    // The record's path is checked before the episode runs, so that a refusal loses nothing.
    if let Some(dir) = &opts.out {
        let name = traparena::runner::record_file_name(
            &task.spec.id,
            &agent_spec,
            attacker_spec.as_ref(),
            opts.seed,
            opts.fork.as_ref().map(|f| f.at),
        );
        if let Err(e) = traparena::runner::check_record_path(&dir.join(name)) {
            return bad_input(&crate::words::say(&e));
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (agent, attacker) =
        match components(&rt, &agent_spec, attacker_spec.as_ref(), parent.is_some()) {
            Ok(c) => c,
            Err(e) => return bad_input(&e),
        };
    // Scope of recorded model calls: the task and the seed (the kinds add their role); a
    // fork's own calls are kept apart from its parent's.
    let seed = opts.seed;
    let parent_scope = parent
        .as_ref()
        .map(|p| format!("{}/seed{}", task.spec.id, p.seed))
        .unwrap_or_default();
    let scope = match &opts.fork {
        Some(f) if parent.is_some() => format!("{}/seed{seed}/fork{}", task.spec.id, f.at),
        _ => format!("{}/seed{seed}", task.spec.id),
    };
    let single = SingleEpisode {
        task: &task,
        scope: &scope,
        seed,
        defence: opts.defence,
        fork: parent
            .as_ref()
            .zip(opts.fork.as_ref())
            .map(|(p, f)| ForkSource {
                fork: traparena::Fork {
                    parent: f.record.display().to_string(),
                    prefix: p.trajectory[..f.at as usize].to_vec(),
                    speak: f.speak,
                },
                parent_scope: &parent_scope,
                parent_seed: p.seed,
            }),
    };
    let builder = traparena::Episode::builder(&task)
        .budget(opts.budget)
        .sandbox(sandbox(sandbox_arg)?);
    let attacker_setup = attacker.as_deref();
    let record = match rt.block_on(single.run(agent.as_ref(), attacker_setup, builder))? {
        SingleOutcome::Ran(record) => record,
        SingleOutcome::Failed(e) => return Err(e.into()),
        SingleOutcome::NotBuilt { component, error } => {
            let what = match component {
                "agent" => format!("agent {}", agent_spec.label()),
                other => other.to_owned(),
            };
            return bad_input(&format!("{what}: {error}"));
        }
    };
    if let Some(dir) = &opts.out {
        let path = record.write_to(dir, &agent_spec, attacker_spec.as_ref())?;
        eprintln!("traparena: episode record written to {}", path.display());
    }
    print_record(&record, opts)
}

/// Prints the episode's outcome; the exit status says whether it could be run.
fn print_record(
    record: &EpisodeRecord,
    opts: &RunOptions,
) -> Result<u8, Box<dyn std::error::Error>> {
    let mut o = std::io::stdout().lock();
    let summary = record.summary();
    // An infrastructure error is no outcome: no verdict is shown for it, and the exit status
    // says the episode could not be run.
    if let Some(why) = &summary.infra_error {
        if opts.json {
            let mut doc = serde_json::to_value(&summary)?;
            for k in ["verdict", "failure_mode", "accepted", "susceptible"] {
                doc[k] = serde_json::Value::Null;
            }
            writeln!(o, "{}", serde_json::to_string_pretty(&doc)?)?;
        } else {
            writeln!(
                o,
                "{} | agent {} | attacker {}: not run to the end: infrastructure error: {why}",
                summary.task, summary.agent, summary.attacker
            )?;
            writeln!(o, "  steps {} of {} before it", summary.steps, opts.budget)?;
        }
        return Ok(INTERNAL);
    }
    if opts.json {
        writeln!(o, "{}", serde_json::to_string_pretty(&summary)?)?;
    } else {
        print_outcome(&mut o, record, &summary, opts.budget)?;
    }
    Ok(OK)
}

/// The text `run` prints for an episode that ran to its end.
fn print_outcome(
    o: &mut impl Write,
    record: &EpisodeRecord,
    summary: &EpisodeSummary,
    budget: u32,
) -> std::io::Result<()> {
    let outcome = match summary.failure_mode {
        None => "accepted".to_owned(),
        Some(m) => format!("rejected ({m})"),
    };
    writeln!(
        o,
        "{} | agent {} | attacker {}: {outcome}",
        summary.task, summary.agent, summary.attacker
    )?;
    writeln!(
        o,
        "  steps {} of {budget}, submitted {}, messages delivered {}, susceptible {}",
        summary.steps,
        summary.submitted,
        summary.messages_delivered,
        summary
            .susceptible
            .map_or("n/a".to_owned(), |s| s.to_string())
    )?;
    let v = &summary.verdict;
    let flags: Vec<String> = v
        .flags
        .iter()
        .map(|f| format!("{} ({}:{})", f.name, f.file, f.line))
        .collect();
    writeln!(
        o,
        "  hidden tests pass {}, touches reference {}, flags {}",
        v.hidden_tests_pass,
        v.touches_reference,
        if flags.is_empty() {
            "none".to_owned()
        } else {
            flags.join(", ")
        }
    )?;
    if let Some(f) = &record.fork {
        writeln!(
            o,
            "  a fork of {}: its steps 1 to {} replayed, then live",
            f.parent, f.step
        )?;
    }
    for step in &record.trajectory {
        if let Some(m) = &step.message {
            writeln!(o, "  collaborator after step {}: {}", step.index, m.text)?;
        }
    }
    if let Some(e) = &record.agent_error {
        writeln!(o, "  agent stopped: {e}")?;
    }
    for e in &record.attacker_errors {
        writeln!(o, "  attacker error at step {}: {}", e.step, e.error)?;
    }
    for (who, u) in [
        ("agent", &summary.usage),
        ("attacker", &summary.attacker_usage),
    ] {
        if u.calls_without_usage > 0 {
            writeln!(
                o,
                "  {} model calls of the {who} reported no token usage: its token counts are a lower bound",
                u.calls_without_usage
            )?;
        }
    }
    Ok(())
}
