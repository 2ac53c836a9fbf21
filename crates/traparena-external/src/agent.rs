//! [`ExternalAgent`]: a black-box coding agent behind the injecting proxy.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sha2::{Digest, Sha256};
use traparena_agent::{Agent, AgentError, AgentView, Turn, TurnKind};
use traparena_model::{ChatModel, ChatRequest, Message, MessageRole, ModelError, Prices};
use traparena_task::{Action, AgentCommand, AgentExit, Moment, MomentKind, Observation, Usage};

use crate::profile::{Placeholders, Profile, fill};
use crate::proxy::{Exchange, Proxy, Reply};
use crate::steps::{Stated, observation_of, observation_slot, stated, with_call_ids};

/// What is appended to an observation before a collaborator message: the label the built-in
/// model-backed agent uses, so both kinds of target read the same words.
pub const COLLABORATOR_LABEL: &str = "\n\n[Message from a collaborator]\n";

/// A black-box agent process whose model calls pass through TrapArena's proxy.
///
/// The episode starts the process from [`Agent::command`]; every completion request of the
/// process reaches [`Agent::act`], which forwards it to the target model and answers the
/// process. A step is one exchange: the model's response (the action as the model stated it,
/// [`Turn::raw`]) and the observation the agent reports back in its next request (the
/// messages after that response, [`TurnKind::Reported`]). A collaborator message delivered
/// after step *k* is appended to step *k*'s observation in every later request, in the place
/// the agent's own history holds it: the agent never stored it, so it is applied again each
/// time. Nothing else of a request is changed.
pub struct ExternalAgent {
    model: Arc<dyn ChatModel>,
    profile: Arc<Profile>,
    prefix: PathBuf,
    timeout: Duration,
    proxy: Option<Proxy>,
    pending: Option<Exchange>,
    /// The response text handed back at each step (index 0 = step 1), to find the step in later
    /// requests.
    responses: Vec<Stated>,
    /// The collaborator message delivered after each step.
    delivered: BTreeMap<u32, String>,
    /// The response of the step in progress, until its observation arrives.
    unanswered: Option<Unanswered>,
    /// For a fork: the parent's recorded responses, and how many steps they answer.
    replay: Option<(Arc<dyn ChatModel>, u32)>,
    /// Side requests answered since the last step was made: their tokens and a note each.
    side: (Usage, Vec<String>),
    /// The target model's prices, for the cost of its calls.
    prices: Option<Prices>,
}

impl std::fmt::Debug for ExternalAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalAgent")
            .field("profile", &self.profile.name)
            .field("model", &self.model.model())
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
struct Unanswered {
    moment: Option<Moment>,
    raw: String,
    reasoning: Option<String>,
    usage: Usage,
    notes: Vec<String>,
}

impl ExternalAgent {
    /// The agent of `profile`, installed at `prefix`, talking to `model` through the proxy;
    /// `timeout` bounds its process (the profile's `timeout_s` unless set).
    pub fn new(
        model: Arc<dyn ChatModel>,
        profile: Arc<Profile>,
        prefix: PathBuf,
        timeout: Option<Duration>,
    ) -> ExternalAgent {
        let timeout = timeout.unwrap_or(Duration::from_secs(profile.timeout_s));
        ExternalAgent {
            model,
            profile,
            prefix,
            timeout,
            proxy: None,
            pending: None,
            responses: Vec::new(),
            delivered: BTreeMap::new(),
            unanswered: None,
            replay: None,
            side: (Usage::default(), Vec::new()),
            prices: None,
        }
    }

    /// The same agent, its calls priced at `prices` (a cost the provider reports in a
    /// response is taken instead).
    pub fn with_prices(mut self, prices: Option<Prices>) -> ExternalAgent {
        self.prices = prices;
        self
    }

    /// The same agent as a fork of a recorded episode: its first `steps` exchanges are
    /// answered by `model` (the parent's recorded responses, replayed), later ones by the
    /// agent's own model. The agent's program must send the parent's requests again for
    /// that: a request that is not recorded is an infrastructure error naming the step.
    pub fn with_prefix(mut self, model: Arc<dyn ChatModel>, steps: u32) -> ExternalAgent {
        self.replay = Some((model, steps));
        self
    }

    /// The next request of the agent that is a step; side requests before it are answered
    /// (by the model that answers step `step`) and counted in [`ExternalAgent::side`].
    async fn next_exchange(&mut self, step: u32) -> Result<Exchange, AgentError> {
        loop {
            let proxy = self.proxy.as_mut().ok_or_else(|| {
                AgentError::Infrastructure(
                    "the external agent was asked to act before its process was started".into(),
                )
            })?;
            let exchange = proxy.next().await.ok_or_else(|| {
                AgentError::Infrastructure("the model proxy of the external agent stopped".into())
            })?;
            if !self.is_side(&exchange.request) {
                return Ok(exchange);
            }
            let model = self.model_for(step);
            let Exchange { request, reply } = exchange;
            match model.chat(&request).await {
                Ok(response) => {
                    let t = response.token_usage();
                    let (usage, notes) = &mut self.side;
                    *usage += t.task_usage(self.prices.as_ref());
                    notes.push(format!(
                        "a side request of the agent (not a step) was answered: {} prompt and {} completion tokens",
                        t.prompt_tokens, t.completion_tokens
                    ));
                    let _ = reply.send(Reply::Completion(Box::new(response)));
                }
                Err(e) => {
                    // A failed side request is the agent's to handle, as with a real server.
                    self.side
                        .1
                        .push(format!("a side request of the agent failed: {e}"));
                    let _ = reply.send(Reply::Error(502, format!("the target model failed: {e}")));
                }
            }
        }
    }

    /// Whether `request` is a side request under the profile's rule.
    fn is_side(&self, request: &ChatRequest) -> bool {
        let Some(rule) = &self.profile.side_requests else {
            return false;
        };
        let system = request
            .messages
            .iter()
            .find(|m| m.role == MessageRole::System)
            .and_then(|m| m.content.as_deref())
            .unwrap_or("");
        (!rule.without_tools || request.tools.is_empty())
            && rule
                .system_starts_with
                .as_deref()
                .is_none_or(|p| system.starts_with(p))
    }

    /// The model that answers step `step` (1-based): the parent's recording within a fork's
    /// prefix, else the agent's own.
    fn model_for(&self, step: u32) -> Arc<dyn ChatModel> {
        match &self.replay {
            Some((m, k)) if step <= *k => m.clone(),
            _ => self.model.clone(),
        }
    }

    /// The tokens and notes of the side requests since the last step, handed over once.
    fn take_side(&mut self) -> (Usage, Vec<String>) {
        std::mem::take(&mut self.side)
    }

    /// Appends every delivered message to its step's observation in `messages`; one note per
    /// message that could not be placed.
    fn inject(&self, messages: &mut [Message]) -> Vec<String> {
        let mut notes = Vec::new();
        for (&step, text) in &self.delivered {
            let Some(stated) = self.responses.get(step as usize - 1) else {
                continue;
            };
            match observation_slot(messages, step as usize, stated) {
                Some(i) => {
                    let content = messages[i].content.get_or_insert_with(String::new);
                    content.push_str(COLLABORATOR_LABEL);
                    content.push_str(text);
                }
                None => notes.push(format!(
                    "the collaborator message of step {step} could not be placed: the agent's request no longer holds that step's observation"
                )),
            }
        }
        notes
    }

    /// The value the profile's end file holds at its pointer (mini-swe-agent's `exit_status`:
    /// `Submitted`, `LimitsExceeded`, ...), when there is one.
    fn status(&self, exit: &AgentExit) -> Option<serde_json::Value> {
        let end = &self.profile.end;
        let (file, pointer) = (end.file.as_ref()?, end.pointer.as_ref()?);
        let text = std::fs::read_to_string(exit.home.join(file)).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        v.pointer(pointer).cloned()
    }

    /// Whether the process ended as the profile's submitting agent does; `status` is what
    /// [`ExternalAgent::status`] read.
    fn submitted(
        &self,
        exit: &AgentExit,
        last_response: &str,
        status: Option<&serde_json::Value>,
    ) -> bool {
        let end = &self.profile.end;
        if exit.killed || exit.timed_out {
            return false;
        }
        if let Some(code) = end.exit_code
            && exit.exit_code != Some(code)
        {
            return false;
        }
        if let Some(needle) = &end.response_contains
            && !last_response.contains(needle.as_str())
        {
            return false;
        }
        if let Some(needle) = &end.stdout_contains
            && !exit.stdout.contains(needle.as_str())
        {
            return false;
        }
        if let Some(want) = &end.equals
            && status != Some(want)
        {
            return false;
        }
        true
    }
}

#[async_trait]
impl Agent for ExternalAgent {
    fn name(&self) -> String {
        format!("external:{}:{}", self.profile.name, self.model.model())
    }

    fn prompt_hash(&self) -> Option<String> {
        let profile = serde_json::to_string(&*self.profile).unwrap_or_default();
        let mut h = Sha256::new();
        h.update(profile.as_bytes());
        h.update(COLLABORATOR_LABEL.as_bytes());
        Some(format!("{:x}", h.finalize())[..16].to_owned())
    }

    async fn command(&mut self, view: &AgentView<'_>) -> Result<Option<AgentCommand>, AgentError> {
        let read_only_paths =
            crate::install::read_only_paths(&self.profile.name, &self.prefix, view.runs_in_image)
                .map_err(|e| AgentError::Infrastructure(e.to_string()))?;
        let proxy = Proxy::start(self.model.model().to_owned())
            .await
            .map_err(|e| {
                AgentError::Infrastructure(format!("cannot start the model proxy: {e}"))
            })?;
        let base_url = format!("http://127.0.0.1:{}/v1", proxy.port());
        let ph = Placeholders {
            prefix: &self.prefix,
            base_url: &base_url,
            model: self.model.model(),
            budget: view.budget,
            task: view.description,
        };
        let command = AgentCommand {
            argv: self.profile.command.iter().map(|a| fill(a, &ph)).collect(),
            env: self
                .profile
                .env
                .iter()
                .map(|(k, v)| (k.clone(), fill(v, &ph)))
                .collect(),
            files: self
                .profile
                .files
                .iter()
                .map(|(k, v)| (k.clone(), fill(v, &ph).into_bytes()))
                .collect(),
            read_only_paths,
            proxy_port: Some(proxy.port()),
            timeout: self.timeout,
            exclude: self.profile.exclude.clone(),
            address_space_bytes: self.profile.address_space_mb.map(|mb| mb << 20),
        };
        self.proxy = Some(proxy);
        Ok(Some(command))
    }

    async fn act(&mut self, view: &AgentView<'_>) -> Result<Turn, AgentError> {
        for s in view.history {
            if let Some(m) = &s.message {
                self.delivered.insert(s.index, m.text.clone());
            }
        }
        let step = view.steps_taken + 1;
        let exchange = match self.pending.take() {
            Some(e) => e,
            None => self.next_exchange(step).await?,
        };
        let Exchange { mut request, reply } = exchange;
        let mut notes = self.inject(&mut request.messages);
        let replayed = self
            .replay
            .as_ref()
            .is_some_and(|(_, k)| view.steps_taken < *k);
        let model = self.model_for(step);
        let mut answer = model.chat(&request).await;
        // Agents ask for as much as their own model allows (Claude Code: 32,000 tokens and
        // more); a server with a smaller context refuses that. Asked again once without it,
        // the server answers with what is left of its context. (A recording, or a fork's
        // prefix, may hold such a second request: a request it lacks is looked up without
        // `max_tokens` too.)
        let not_recorded = |e: &ModelError| matches!(e, ModelError::NotRecorded { .. });
        if let Err(e) = &answer
            && (e.is_context_overflow() || replayed || not_recorded(e))
            && let Some(asked) = request.max_tokens.take()
        {
            let again = model.chat(&request).await;
            if again.is_ok() || e.is_context_overflow() {
                notes.push(format!(
                    "max_tokens {asked} did not fit the server's context: asked again without max_tokens"
                ));
                answer = again;
            }
        }
        let response = match answer {
            Ok(r) => r,
            Err(e) if replayed => {
                let _ = reply.send(Reply::Error(502, format!("the fork's prefix failed: {e}")));
                return Err(AgentError::Infrastructure(format!(
                    "step {step} of the fork's prefix was not replayed from its parent's recording: {e}"
                )));
            }
            Err(e) => {
                let _ = reply.send(Reply::Error(502, format!("the target model failed: {e}")));
                return Err(AgentError::Model(Box::new(e)));
            }
        };
        let response = with_call_ids(response, step);
        let moment = crate::moments::moment_of(&self.profile.moments, &response);
        let (raw, stated, reasoning) = stated(&response);
        let t = response.token_usage();
        let (side, side_notes) = self.take_side();
        notes.extend(side_notes);
        let mut usage = t.task_usage(self.prices.as_ref());
        usage += side;
        self.responses.push(stated);
        self.unanswered = Some(Unanswered {
            moment,
            raw,
            reasoning,
            usage,
            notes,
        });
        // The agent may have gone in the meantime; its end is the episode's business.
        let _ = reply.send(Reply::Completion(Box::new(response)));
        let next = self.next_exchange(step + 1).await?;
        let mut observation = Observation::ok(observation_of(&next.request.messages));
        self.pending = Some(next);
        let mut u = self.unanswered.take().expect("set above");
        if u.moment
            .as_ref()
            .is_some_and(|m| m.kind == MomentKind::TestRun)
        {
            observation.tests_passed = crate::moments::tests_passed(&observation.output);
        }
        let (side, side_notes) = self.take_side();
        u.usage += side;
        u.notes.extend(side_notes);
        Ok(Turn {
            kind: TurnKind::Reported {
                observation,
                action: None,
            },
            raw: Some(u.raw),
            usage: u.usage,
            reasoning: u.reasoning,
            notes: u.notes,
            moment: u.moment,
        })
    }

    fn volatile_output(&self) -> Vec<String> {
        self.profile.volatile_output.clone()
    }

    async fn process_ended(&mut self, exit: &AgentExit) -> Result<Option<Turn>, AgentError> {
        self.proxy = None;
        let Some(mut u) = self.unanswered.take() else {
            return Ok(None);
        };
        let (side, side_notes) = self.take_side();
        u.usage += side;
        u.notes.extend(side_notes);
        let status = self.status(exit);
        let submitted = self.submitted(exit, &u.raw, status.as_ref());
        let status = match status {
            Some(serde_json::Value::String(s)) => format!("; its own status: {s}"),
            Some(v) => format!("; its own status: {v}"),
            None => String::new(),
        };
        Ok(Some(Turn {
            kind: TurnKind::Reported {
                observation: Observation::ok(format!(
                    "(the agent's process ended: {}{status})",
                    exit.describe()
                )),
                action: submitted.then_some(Action::Submit),
            },
            raw: Some(u.raw),
            usage: u.usage,
            reasoning: u.reasoning,
            notes: u.notes,
            moment: u.moment,
        }))
    }
}
