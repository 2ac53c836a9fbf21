//! Drawing the lines: each episode's outcome from the model (skill, difficulty, delivery,
//! following a claim), the fork pairs of baseline episodes, and the rest of a line written
//! from an outcome, all from seeded SplitMix64 streams.

use super::*;

impl SyntheticConfig {
    /// The lines of the ordinary (not forked) episodes. A forked condition's draw from a
    /// stream of their own.
    pub(super) fn ordinary_lines(&self) -> impl Iterator<Item = ResultLine> + '_ {
        let mut rng = SplitMix64(self.seed ^ 0x7261_7061_7265_6e61);
        let mut forked_rng = SplitMix64(self.seed ^ 0x666f_726b_6564_0001);
        let mut keys = Vec::new();
        for (ti, target) in self.targets.iter().enumerate() {
            let target = target.name.as_str();
            for (ci, c) in self.conditions.iter().enumerate() {
                let baseline = c.name == BASELINE;
                let (rounds, samples) = if baseline {
                    (1, self.baseline_samples)
                } else {
                    (self.rounds, self.samples_per_round)
                };
                for round in 0..rounds {
                    for task in 0..self.tasks {
                        for sample in 0..samples {
                            keys.push((ti, target, ci, round, task, sample));
                        }
                    }
                }
            }
        }
        keys.into_iter()
            .map(move |(ti, target, ci, round, task, sample)| {
                let c = &self.conditions[ci];
                let rng = if c.fork.is_some() {
                    &mut forked_rng
                } else {
                    &mut rng
                };
                self.line(rng, &self.targets[ti], target, c, round, task, sample)
            })
    }

    /// The forks of every usable baseline episode of the first samples, for every forked
    /// condition.
    pub(super) fn fork_lines(&self) -> Vec<ResultLine> {
        let parents: BTreeMap<(String, String, u32), ResultLine> = self
            .ordinary_lines()
            .filter(|l| l.condition == BASELINE && l.infra_error.is_none())
            .map(|l| ((l.target.clone(), l.task.clone(), l.sample), l))
            .collect();
        let mut rng = SplitMix64(self.seed ^ 0x666f_726b_7300_0002);
        let mut out = Vec::new();
        for t in &self.targets {
            for c in &self.conditions {
                let Some(fork) = &c.fork else { continue };
                for task in 0..self.tasks {
                    for sample in 0..fork.samples.min(self.baseline_samples) {
                        let Some(parent) =
                            parents.get(&(t.name.clone(), format!("task-{task:03}"), sample))
                        else {
                            continue;
                        };
                        let mut steps: BTreeMap<u32, (Vec<String>, f64)> = BTreeMap::new();
                        for (point, follow) in &fork.at {
                            if let Some(k) = point.resolve(parent) {
                                let (labels, f) = steps.entry(k).or_insert((Vec::new(), 0.0));
                                if !labels.contains(&point.label()) {
                                    labels.push(point.label());
                                }
                                *f = f.max(*follow);
                            }
                        }
                        for (step, (points, follow)) in steps {
                            let at = ForkAt {
                                parent,
                                step,
                                points,
                                follow,
                            };
                            out.extend(self.fork_pair(&mut rng, t, c, fork, task, &at));
                        }
                    }
                }
            }
        }
        out
    }

    /// The two branches of one fork point: message first, then silent.
    pub(super) fn fork_pair(
        &self,
        rng: &mut SplitMix64,
        t: &SyntheticTarget,
        c: &SyntheticCondition,
        fork: &SyntheticFork,
        task: usize,
        at: &ForkAt<'_>,
    ) -> [ResultLine; 2] {
        let parent = at.parent;
        let seed = rng.next();
        let p = self.acceptance(t, c, task);
        let silent_accepted = if !t.uses_model() || rng.unit() < fork.reproduce {
            parent.accepted
        } else {
            rng.unit() < p
        };
        let delivered = rng.unit() < c.delivery;
        let messages = if delivered {
            1 + (rng.next() % 2) as u32
        } else {
            0
        };
        let susceptible = delivered.then(|| rng.unit() < at.follow);
        let message_accepted = silent_accepted && susceptible != Some(true);
        let infra = [
            rng.unit() < self.infra_error_rate,
            rng.unit() < self.infra_error_rate,
        ];
        let parent_key = EpisodeKey {
            target: parent.target.clone(),
            condition: BASELINE.to_owned(),
            task: parent.task.clone(),
            round: 0,
            sample: parent.sample,
            fork: None,
        };
        let branch = |rng: &mut SplitMix64, message: bool, infra: bool| {
            let key = EpisodeKey {
                condition: c.name.clone(),
                fork: Some(ForkKey {
                    step: at.step,
                    message,
                }),
                ..parent_key.clone()
            };
            let mut line = if infra {
                ResultLine::infra_failure(
                    &key,
                    &c.info,
                    seed,
                    "model server unreachable after 5 attempts".into(),
                )
            } else if message {
                let outcome = Outcome {
                    accepted: message_accepted,
                    susceptible,
                    messages,
                };
                self.finish_line(rng, t, c, &key, seed, task, outcome, (at.step + 1, 20))
            } else {
                let outcome = Outcome {
                    accepted: silent_accepted,
                    susceptible: None,
                    messages: 0,
                };
                let mut l =
                    self.finish_line(rng, t, c, &key, seed, task, outcome, (at.step + 1, 20));
                l.attacker = "none".to_owned();
                l.attacker_usage = Usage::default();
                l
            };
            line.fork = Some(ForkInfo {
                parent: parent_key.to_string(),
                step: at.step,
                message,
                points: at.points.clone(),
            });
            line
        };
        [branch(rng, true, infra[0]), branch(rng, false, infra[1])]
    }

    /// The task's difficulty in `[0, 1)`.
    pub(super) fn difficulty(&self, task: usize) -> f64 {
        SplitMix64(self.seed ^ (task as u64).wrapping_mul(0x9e37_79b9)).unit()
    }

    /// The acceptance probability of `t` on `task` in `c` when no claim is followed.
    pub(super) fn acceptance(
        &self,
        t: &SyntheticTarget,
        c: &SyntheticCondition,
        task: usize,
    ) -> f64 {
        (t.skill + 0.5 * (self.difficulty(task) - 0.5) + c.help).clamp(0.05, 0.95)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn line(
        &self,
        rng: &mut SplitMix64,
        t: &SyntheticTarget,
        target: &str,
        c: &SyntheticCondition,
        round: u32,
        task: usize,
        sample: u32,
    ) -> ResultLine {
        let key = EpisodeKey {
            target: target.to_owned(),
            condition: c.name.clone(),
            task: format!("task-{task:03}"),
            round,
            sample,
            fork: None,
        };
        let seed = rng.next();
        if rng.unit() < self.infra_error_rate {
            return ResultLine::infra_failure(
                &key,
                &c.info,
                seed,
                "model server unreachable after 5 attempts".into(),
            );
        }
        let p = self.acceptance(t, c, task);
        let baseline = c.name == BASELINE;
        let delivered = !baseline && rng.unit() < c.delivery;
        let messages = if delivered {
            1 + (rng.next() % 3) as u32
        } else {
            0
        };
        let follow = (c.follow + c.learning * f64::from(round)).clamp(0.0, 0.95);
        let susceptible = delivered.then(|| rng.unit() < follow);
        let accepted = susceptible != Some(true) && rng.unit() < p;
        let outcome = Outcome {
            accepted,
            susceptible,
            messages,
        };
        self.finish_line(rng, t, c, &key, seed, task, outcome, (5, 35))
    }

    /// The line of an episode whose outcome is drawn: its failure mode, verdict, tokens and
    /// `steps.0 + (a draw below steps.1)` steps.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish_line(
        &self,
        rng: &mut SplitMix64,
        t: &SyntheticTarget,
        c: &SyntheticCondition,
        key: &EpisodeKey,
        seed: u64,
        task: usize,
        outcome: Outcome,
        steps: (u32, u64),
    ) -> ResultLine {
        let Outcome {
            accepted,
            susceptible,
            messages,
        } = outcome;
        let mode = if accepted {
            None
        } else if susceptible == Some(true) {
            Some(pick(
                rng,
                &[
                    (FailureMode::WrongLocation, 0.7),
                    (FailureMode::Superficial, 0.2),
                    (FailureMode::NoEdit, 0.1),
                ],
            ))
        } else {
            Some(pick(
                rng,
                &[
                    (FailureMode::FalseFix, 0.35),
                    (FailureMode::WrongLocation, 0.25),
                    (FailureMode::NoSubmit, 0.15),
                    (FailureMode::Superficial, 0.15),
                    (FailureMode::NoEdit, 0.1),
                ],
            ))
        };
        let flags = if mode == Some(FailureMode::Superficial) {
            vec![Flag {
                name: FlagName::BroadExcept,
                file: "src/module.py".into(),
                line: 12,
            }]
        } else {
            Vec::new()
        };
        let tokens = 1500.0
            * (1.0 + 0.6 * self.difficulty(task))
            * c.token_factor
            * if susceptible == Some(true) { 1.2 } else { 1.0 }
            * (0.8 + 0.4 * rng.unit());
        let patch = self.patch(key);
        ResultLine {
            target: key.target.clone(),
            condition: key.condition.clone(),
            task: key.task.clone(),
            round: key.round,
            sample: key.sample,
            condition_info: c.info.clone(),
            infra_error: None,
            agent: t.agent.clone(),
            attacker: attacker_name(&c.info),
            accepted,
            verdict: Some(Verdict {
                hidden_tests_pass: accepted || mode == Some(FailureMode::Superficial),
                touches_reference: accepted || mode == Some(FailureMode::FalseFix),
                flags,
                accepted,
                failure_mode: mode,
            }),
            failure_mode: mode,
            messages_delivered: messages,
            susceptible,
            steps: steps.0 + (rng.next() % steps.1) as u32,
            submitted: mode != Some(FailureMode::NoSubmit),
            usage: if t.uses_model() {
                Usage {
                    prompt_tokens: (tokens * 9.0) as u64,
                    completion_tokens: tokens as u64,
                    ..Usage::default()
                }
            } else {
                Usage::default()
            },
            attacker_usage: if attacker_uses_model(&c.info.attacker) {
                Usage {
                    prompt_tokens: 2200 * u64::from(messages),
                    completion_tokens: 140 * u64::from(messages),
                    ..Usage::default()
                }
            } else {
                Usage::default()
            },
            attacker_errors: 0,
            seed,
            harness_version: None,
            patch,
            fork: None,
        }
    }

    pub(super) fn patch(&self, key: &EpisodeKey) -> String {
        let mut p = format!(
            "diff --git a/src/module.py b/src/module.py\n--- a/src/module.py\n+++ \
             b/src/module.py\n@@ -10,{0} +10,{0} @@ def handle_{1}(value):\n",
            self.patch_lines,
            key.task.replace('-', "_")
        );
        for i in 0..self.patch_lines {
            p.push_str(&format!(
                "-    total = compute(value, {i})  # \"old\" line\n+    total = compute(value, \
                 {i} + 1)  # round {}\n",
                key.round
            ));
        }
        p
    }
}

/// A drawn outcome: what [`SyntheticConfig::finish_line`] writes the rest of a line from.
#[derive(Debug, Clone, Copy)]
pub(super) struct Outcome {
    accepted: bool,
    susceptible: Option<bool>,
    messages: u32,
}

/// One fork point of one parent.
#[derive(Debug)]
pub(super) struct ForkAt<'a> {
    parent: &'a ResultLine,
    step: u32,
    points: Vec<String>,
    follow: f64,
}

pub(super) fn pick(rng: &mut SplitMix64, weighted: &[(FailureMode, f64)]) -> FailureMode {
    let total: f64 = weighted.iter().map(|w| w.1).sum();
    let mut u = rng.unit() * total;
    for (m, w) in weighted {
        if u < *w {
            return *m;
        }
        u -= w;
    }
    weighted[weighted.len() - 1].0
}

/// SplitMix64: a tiny, fast, seeded generator, good enough for synthetic data (never used for
/// the report's statistics, which draw from ChaCha8).
#[derive(Debug, Clone)]
pub(super) struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}
