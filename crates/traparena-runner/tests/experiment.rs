//! Experiments through the runner's API: a cancelled run resumed, a torn last line, shards
//! merged with the curator step between rounds, infrastructure errors, and kinds research code
//! registers (with the access they declare recorded).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use serde::Deserialize;
use tokio::sync::Notify;
use traparena_agent::{AgentError, Agents};
use traparena_attack::{Access, Advice, AttackContext, AttackError, Attacker, Attackers, Role};
use traparena_env::{Sandbox, SandboxConfig};
use traparena_runner::{
    ExperimentOptions, ExperimentReport, ExperimentSpec, Progress, Registry, ResolvedSpec,
    ResultLine, Shard, Silent, merge_results, run_experiment,
};
use traparena_task::{
    Claims, ComponentSpec, ConfigContext, EpisodeContext, Factory, ModelUse, NoArgs,
};
use traparena_testkit::cli::copy_dir;
use traparena_testkit::folder::results_summary;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// A spec over three bundled tasks: two scripted targets, a scripted condition that also forks
/// the baseline at three points, an urging one and (when `curated`) a curated offline
/// condition, two rounds.
fn spec(curated: bool) -> ExperimentSpec {
    let mut conditions = vec![
        serde_json::json!({"name": "scripted", "attacker": "scripted",
            "fork": {"from": "baseline", "at": [1, "after_first_test_run", "before_submit"]}}),
        serde_json::json!({"name": "urge", "attacker": {"kind": "scripted", "args": {"persona": "urge_submit"}}}),
    ];
    if curated {
        conditions.push(
            serde_json::json!({"name": "offline_curated", "attacker": "offline", "curator": "tally"}),
        );
    }
    serde_json::from_value(serde_json::json!({
        "seed": 11,
        "tasks": ["tasks/clamp_overt", "tasks/invoice_coupon", "tasks/page_count"],
        "targets": [{"name": "credulous", "agent": "credulous"}, {"name": "hardcoder", "agent": "hardcoder"}],
        "conditions": conditions,
        "rounds": 2,
        "baseline_samples": 2,
        "budget": 20
    }))
    .unwrap()
}

fn resolve(registry: &Registry, spec: &ExperimentSpec) -> ResolvedSpec {
    registry
        .resolve(spec, &ConfigContext::new(examples()))
        .unwrap()
}

fn sandbox() -> Sandbox {
    Sandbox::new(SandboxConfig::default()).unwrap()
}

fn options(out: &Path) -> ExperimentOptions {
    ExperimentOptions {
        concurrency: 3,
        ..ExperimentOptions::new(out)
    }
}

async fn run(
    resolved: &ResolvedSpec,
    opts: &ExperimentOptions,
) -> Result<ExperimentReport, traparena_runner::RunError> {
    run_experiment(resolved, &sandbox(), opts, Arc::new(Silent)).await
}

/// Counts finished episodes and wakes a waiter at `at`.
struct StopAt {
    at: usize,
    done: AtomicUsize,
    reached: Notify,
}

impl Progress for StopAt {
    fn finished(&self, _: &ResultLine) {
        if self.done.fetch_add(1, Ordering::SeqCst) + 1 == self.at {
            self.reached.notify_one();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_dropped_midway_then_resumed_equals_an_uninterrupted_run() {
    let tmp = tempfile::tempdir().unwrap();
    let resolved = resolve(&Registry::builtin(), &spec(true));
    let whole = tmp.path().join("whole");
    let r = run(&resolved, &options(&whole)).await.unwrap();
    assert!(
        r.forks >= 2 * 3 * 2 * 2,
        "forks of every baseline episode: {r:?}"
    );
    assert_eq!(
        r.planned,
        2 * 3 * 2 + 2 * 3 * 3 * 2 + r.forks,
        "baseline + 3 conditions x 2 rounds + the forks"
    );
    assert_eq!((r.ran, r.infra_errors), (r.planned, 0));
    assert!(r.curated > 0, "the curator ran between rounds");
    let expected = results_summary(&whole);
    assert!(!expected.1.is_empty(), "the curator wrote notes");

    // The future is dropped after 12 episodes, the way Ctrl-C drops it in the command.
    let cut = tmp.path().join("cut");
    let stop = Arc::new(StopAt {
        at: 12,
        done: AtomicUsize::new(0),
        reached: Notify::new(),
    });
    // On a runtime of its own, dropped afterwards as the command's exit drops it: that waits
    // for the writes already handed to blocking threads, so the folder is counted only once
    // nothing more can land in it.
    let (sb, cut_opts) = (sandbox(), options(&cut));
    let cut_resolved = resolved.clone();
    tokio::task::spawn_blocking(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            tokio::select! {
                r = run_experiment(&cut_resolved, &sb, &cut_opts, stop.clone()) => panic!("finished before the cut: {r:?}"),
                _ = stop.reached.notified() => {}
            }
        });
        drop(rt);
    })
    .await
    .unwrap();
    let partial = results_summary(&cut).0.len();
    assert!(partial >= 12 && partial < expected.0.len(), "{partial}");
    let again = ExperimentOptions {
        resume: true,
        ..options(&cut)
    };
    let r = run(&resolved, &again).await.unwrap();
    assert_eq!(r.already_done as usize, partial);
    assert_eq!(results_summary(&cut), expected);
}

/// A run killed inside the curator step leaves the round's tokens (or half of their atomic
/// write) without the round's notes: the resume redoes the step, rewrites both, and the folder
/// equals an uninterrupted run's, tokens included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_inside_the_curator_step_resumes_with_every_round_s_tokens() {
    let tmp = tempfile::tempdir().unwrap();
    let resolved = resolve(&Registry::builtin(), &spec(true));
    let whole = tmp.path().join("whole");
    run(&resolved, &options(&whole)).await.unwrap();
    let expected = results_summary(&whole);
    let usage = |dir: &Path| {
        traparena_results::read_curator_usage(dir, "credulous", "offline_curated").unwrap()
    };
    let total = usage(&whole).expect("the curator's tokens");
    for torn_write in [false, true] {
        let cut = tmp.path().join(format!("cut-{torn_write}"));
        copy_dir(&whole, &cut);
        // Killed after the curator's tokens for round 1 were written, before its notes (or,
        // with `torn_write`, inside the write of the tokens): round 1 has not run.
        let notes = traparena_results::notes_path(&cut, "credulous", "offline_curated", 1);
        std::fs::remove_file(&notes).unwrap();
        let spent = traparena_results::curator_usage_path(&cut, "credulous", "offline_curated", 1);
        if torn_write {
            std::fs::remove_file(&spent).unwrap();
            std::fs::write(spent.with_extension("json.tmp"), "").unwrap();
        }
        let episodes = cut.join(traparena_results::EPISODES_FILE);
        let kept: String = std::fs::read_to_string(&episodes)
            .unwrap()
            .lines()
            .filter(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                !(v["target"] == "credulous"
                    && v["condition"] == "offline_curated"
                    && v["round"] == 1)
            })
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&episodes, kept).unwrap();
        let again = ExperimentOptions {
            resume: true,
            ..options(&cut)
        };
        let r = run(&resolved, &again).await.unwrap();
        assert_eq!((r.curated, r.infra_errors), (1, 0), "{r:?}");
        assert_eq!(results_summary(&cut), expected, "torn write: {torn_write}");
        assert_eq!(usage(&cut), Some(total));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_torn_last_line_is_redone_not_duplicated_and_a_changed_spec_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let resolved = resolve(&Registry::builtin(), &spec(false));
    let whole = tmp.path().join("whole");
    run(&resolved, &options(&whole)).await.unwrap();
    let expected = results_summary(&whole);
    let torn = tmp.path().join("torn");
    std::fs::create_dir_all(&torn).unwrap();
    for f in ["spec.json", "manifest.json", "trajectories.jsonl"] {
        std::fs::copy(whole.join(f), torn.join(f)).unwrap();
    }
    let text = std::fs::read_to_string(whole.join("episodes.jsonl")).unwrap();
    let keep: Vec<&str> = text.lines().take(5).collect();
    let half = &text.lines().nth(5).unwrap()[..40];
    std::fs::write(
        torn.join("episodes.jsonl"),
        format!("{}\n{half}", keep.join("\n")),
    )
    .unwrap();
    let resume = ExperimentOptions {
        resume: true,
        ..options(&torn)
    };
    let r = run(&resolved, &resume).await.unwrap();
    assert_eq!(r.already_done, 5);
    assert_eq!(results_summary(&torn), expected);

    let mut other = spec(false);
    other.budget = 21;
    let e = run(&resolve(&Registry::builtin(), &other), &resume)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("spec differs"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shards_merged_with_the_curator_step_between_rounds_equal_the_unsharded_run() {
    let tmp = tempfile::tempdir().unwrap();
    let resolved = resolve(&Registry::builtin(), &spec(true));
    let whole = tmp.path().join("whole");
    run(&resolved, &options(&whole)).await.unwrap();
    let expected = results_summary(&whole);
    let shards: Vec<PathBuf> = (0..3).map(|i| tmp.path().join(format!("s{i}"))).collect();
    let mut merged = PathBuf::new();
    for pass in 0..3 {
        for (i, dir) in shards.iter().enumerate() {
            let opts = ExperimentOptions {
                resume: pass > 0,
                shard: Some(Shard {
                    index: i as u32,
                    count: 3,
                }),
                ..options(dir)
            };
            run(&resolved, &opts).await.unwrap();
        }
        merged = tmp.path().join(format!("merged{pass}"));
        merge_results(&shards, &merged).unwrap();
        let curate = ExperimentOptions {
            resume: true,
            curate_only: true,
            ..options(&merged)
        };
        run(&resolved, &curate).await.unwrap();
        for dir in &shards {
            if merged.join("notes").is_dir() {
                copy_dir(&merged.join("notes"), &dir.join("notes"));
            }
        }
    }
    assert_eq!(results_summary(&merged), expected);
    let e = merge_results(
        &[shards[0].clone(), shards[0].clone()],
        &tmp.path().join("dup"),
    )
    .unwrap_err();
    assert!(e.to_string().contains("is also in"), "{e}");
}

/// Blames the first function it sees and says whether it was given the reference.
struct Peeker {
    access: Access,
}

#[async_trait]
impl Attacker for Peeker {
    fn name(&self) -> String {
        "peeker".into()
    }
    async fn advise(&mut self, ctx: &AttackContext<'_>) -> Result<Option<Advice>, AttackError> {
        let saw = ctx.reference.is_some();
        if saw != (self.access == Access::Reference) {
            return Err(AttackError::Invalid(format!(
                "declared {:?} but was given the reference: {saw}",
                self.access
            )));
        }
        Ok(ctx.symbols.first().map(|place| Advice {
            text: format!("Look at {place}."),
            claims: Claims {
                blame: vec![place.clone()],
                ..Claims::default()
            },
        }))
    }
    fn access(&self) -> Access {
        self.access
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PeekerArgs {
    sees_reference: bool,
}

struct PeekerKind;

impl Factory for PeekerKind {
    type Role = Attackers;
    type Args = PeekerArgs;
    fn build(
        &self,
        args: &PeekerArgs,
        _: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Attacker>, AttackError> {
        Ok(Box::new(Peeker {
            access: if args.sees_reference {
                Access::Reference
            } else {
                Access::Blind
            },
        }))
    }
}

/// An agent kind whose every build fails: each episode is an infrastructure error.
struct Broken;

impl Factory for Broken {
    type Role = Agents;
    type Args = NoArgs;
    fn build(
        &self,
        _: &NoArgs,
        ep: &EpisodeContext<'_>,
    ) -> Result<Box<dyn traparena_agent::Agent>, AgentError> {
        Err(AgentError::Unsupported(format!(
            "no agent for {} today",
            ep.task.spec.id
        )))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registered_kinds_run_and_their_declared_access_is_what_they_get_and_what_is_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let mut registry = Registry::builtin();
    registry.attackers.register("peeker", PeekerKind);
    registry.agents.register("broken", Broken);
    let spec: ExperimentSpec = serde_json::from_value(serde_json::json!({
        "tasks": ["tasks/clamp_overt", "tasks/page_count"],
        "targets": [{"name": "credulous", "agent": "credulous"}, {"name": "broken", "agent": "broken"}],
        "conditions": [
            {"name": "peek", "attacker": {"kind": "peeker", "args": {"sees_reference": true}}},
            {"name": "blind", "attacker": {"kind": "peeker", "args": {"sees_reference": false}}}
        ],
        "rounds": 1,
        "baseline_samples": 1,
        "budget": 20
    }))
    .unwrap();
    let out = tmp.path().join("out");
    let r = run(&resolve(&registry, &spec), &options(&out))
        .await
        .unwrap();
    assert_eq!((r.ran, r.infra_errors), (12, 6));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(out.join("episodes.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for l in &lines {
        let (target, condition) = (
            l["target"].as_str().unwrap(),
            l["condition"].as_str().unwrap(),
        );
        if target == "broken" {
            assert!(
                l["infra_error"].as_str().unwrap().contains("no agent for"),
                "{l}"
            );
            continue;
        }
        assert!(l["infra_error"].is_null(), "{l}");
        let info = &l["condition_info"];
        match condition {
            "baseline" => assert_eq!(info["attacker"], "none", "{l}"),
            "peek" => {
                assert_eq!(info["attacker"], "peeker");
                assert_eq!(info["access"], "reference", "{l}");
                assert!(l["messages_delivered"].as_u64().unwrap() > 0, "{l}");
            }
            "blind" => assert_eq!(info["access"], "blind", "{l}"),
            other => panic!("unexpected condition {other}"),
        }
    }
    // The attacker's own check that what it was given matches its declaration never failed.
    let traj = std::fs::read_to_string(out.join("trajectories.jsonl")).unwrap();
    assert!(
        !traj.contains("declared"),
        "an attacker got other access than it declared"
    );

    // Unknown kinds list the registered ones; bad arguments name the field.
    let mut bad = spec.clone();
    bad.conditions[0].attacker = traparena_task::ComponentSpec::new("peeker")
        .with_args(serde_json::json!({"sees_reference": "yes"}));
    let e = registry
        .resolve(&bad, &ConfigContext::new(examples()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("conditions[0].attacker.args.sees_reference"),
        "{e}"
    );
    let e = Registry::builtin()
        .resolve(&spec, &ConfigContext::new(examples()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("targets[1].agent.kind") && e.contains("credulous, gold, hardcoder, replay"),
        "{e}"
    );
}

/// A registered kind that declares itself a control: it says only what is true (where the
/// reference repair is).
struct Confirmer;

#[async_trait]
impl Attacker for Confirmer {
    fn name(&self) -> String {
        "confirmer".into()
    }
    async fn advise(&mut self, ctx: &AttackContext<'_>) -> Result<Option<Advice>, AttackError> {
        Ok(ctx
            .reference
            .and_then(|r| r.locations.first())
            .map(|l| Advice {
                text: format!("The fix belongs in {l}."),
                claims: Claims::default(),
            }))
    }
    fn access(&self) -> Access {
        Access::Reference
    }
    fn role(&self) -> Role {
        Role::TruthfulControl
    }
}

struct ConfirmerKind;

impl Factory for ConfirmerKind {
    type Role = Attackers;
    type Args = NoArgs;
    fn build(&self, _: &NoArgs, _: &EpisodeContext<'_>) -> Result<Box<dyn Attacker>, AttackError> {
        Ok(Box::new(Confirmer))
    }
}

/// The same attacker, from a kind that declares a model (as a model-backed plug-in would).
struct ModelledConfirmerKind;

impl Factory for ModelledConfirmerKind {
    type Role = Attackers;
    type Args = NoArgs;
    fn build(&self, _: &NoArgs, _: &EpisodeContext<'_>) -> Result<Box<dyn Attacker>, AttackError> {
        Ok(Box::new(Confirmer))
    }
    fn model(&self) -> ModelUse {
        ModelUse::Sampled
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_kind_declared_a_control_is_recorded_and_reported_as_one() {
    let tmp = tempfile::tempdir().unwrap();
    let mut registry = Registry::builtin();
    registry.attackers.register("confirmer", ConfirmerKind);
    registry
        .attackers
        .register("modelled", ModelledConfirmerKind);
    let modelled = ComponentSpec::new("modelled");
    assert_eq!(registry.attackers.model(&modelled), Some(ModelUse::Sampled));
    assert_eq!(
        registry.attackers.model(&ComponentSpec::new("confirmer")),
        Some(ModelUse::None)
    );
    assert_eq!(registry.attackers.model(&ComponentSpec::new("nope")), None);
    let spec: ExperimentSpec = serde_json::from_value(serde_json::json!({
        "tasks": ["tasks/clamp_overt"],
        "targets": [{"name": "credulous", "agent": "credulous"}],
        "conditions": [
            {"name": "confirm", "attacker": "confirmer"},
            {"name": "scripted", "attacker": "scripted"},
            {"name": "modelled", "attacker": "modelled"}
        ],
        "rounds": 1,
        "baseline_samples": 1,
        "budget": 20
    }))
    .unwrap();
    let out = tmp.path().join("out");
    let r = run(&resolve(&registry, &spec), &options(&out))
        .await
        .unwrap();
    assert_eq!(r.infra_errors, 0);
    for l in std::fs::read_to_string(out.join("episodes.jsonl"))
        .unwrap()
        .lines()
    {
        let l: serde_json::Value = serde_json::from_str(l).unwrap();
        let role = &l["condition_info"]["role"];
        let uses_model = &l["condition_info"]["uses_model"];
        match l["condition"].as_str().unwrap() {
            "confirm" | "modelled" => assert_eq!(role, "truthful_control", "{l}"),
            "scripted" => assert_eq!(role, "attack", "{l}"),
            _ => assert!(role.is_null(), "{l}"),
        }
        // Written only for a kind that declares a model.
        match l["condition"].as_str().unwrap() {
            "modelled" => assert_eq!(uses_model, true, "{l}"),
            _ => assert!(uses_model.is_null(), "{l}"),
        }
    }
    // The report puts it under Controls, by its declaration, not by its name.
    use traparena::report::{ConditionKind, ReportOptions, ResultsFolder, build_report};
    let report = build_report(
        &ResultsFolder::load(&out).unwrap(),
        &ReportOptions::default(),
    );
    let controls: Vec<(&str, ConditionKind)> = report
        .controls
        .iter()
        .map(|c| (c.condition.as_str(), c.kind))
        .collect();
    assert_eq!(
        controls,
        [
            ("confirm", ConditionKind::TruthfulControl),
            ("modelled", ConditionKind::TruthfulControl)
        ]
    );
    // What each condition's attacker declared about its model, read by the report.
    let models: Vec<(&str, Option<bool>)> = report
        .source
        .conditions
        .iter()
        .map(|c| (c.condition.as_str(), c.uses_model))
        .collect();
    assert_eq!(
        models,
        [
            ("baseline", None),
            ("confirm", Some(false)),
            ("modelled", Some(true)),
            ("scripted", Some(false))
        ]
    );
}
