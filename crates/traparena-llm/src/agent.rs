//! The `llm` repair agent: any chat model behind a [`ChatModel`], speaking one of three action
//! protocols.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use traparena_agent::{Agent, AgentError, AgentView, Turn};
use traparena_model::{
    ChatModel, ChatRequest, Message, Reply, ResponseFormat, ResponseMessage, ToolCall,
    tool_calls_in_text,
};
use traparena_task::{Action, Step};

use crate::actions::{
    action_forms, action_from_call, action_from_text, action_list, action_names, action_schema,
    action_tools, parse_action,
};
use crate::prompts::{self, Template, clip, fill, one_line};
use crate::usage::task_usage;

/// How the agent asks the model for actions and reads them from its replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// Native tool calls: one tool per action (`read`, `edit`, ...); the first call of a reply
    /// is run, tool results go back as `tool` messages. A reply without a tool call is read
    /// like a plain-text reply.
    Tools,
    /// A JSON action constrained by `response_format` (a JSON schema the server enforces with
    /// a grammar on vLLM and llama.cpp).
    Json,
    /// Free text; the first JSON object of the reply is the action.
    Text,
}

impl Protocol {
    /// The protocol's name (`tools`, `json`, `text`).
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Tools => "tools",
            Protocol::Json => "json",
            Protocol::Text => "text",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Protocol {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "tools" => Ok(Protocol::Tools),
            "json" => Ok(Protocol::Json),
            "text" => Ok(Protocol::Text),
            other => Err(format!(
                "unknown protocol {other:?} (expected tools, json or text)"
            )),
        }
    }
}

/// How much of the trajectory the conversation keeps.
///
/// The conversation holds every step, but only the last `full_steps` in full: older tool
/// outputs are cut to `old_output_chars` characters and older actions are shown with every
/// string cut to 200 characters (a `write` of a whole file becomes its first lines).
/// Collaborator messages are always kept whole. When the conversation is still longer than
/// `max_chars` characters (about a quarter as many tokens), recent steps are shortened like
/// older ones, oldest first; then tool outputs are replaced by a one-line note, oldest first;
/// as a last resort the newest step's output is cut (to no less than 1,000 characters). The
/// defaults keep a 60-step episode within about 12,000 tokens of history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryLimits {
    /// Most recent steps shown in full.
    pub full_steps: usize,
    /// Characters kept of an older step's tool output.
    pub old_output_chars: usize,
    /// Upper bound on the characters of the whole conversation (system prompt included).
    pub max_chars: usize,
}

impl Default for HistoryLimits {
    fn default() -> Self {
        HistoryLimits {
            full_steps: 8,
            old_output_chars: 600,
            max_chars: 48_000,
        }
    }
}

/// Settings of an [`LlmAgent`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmAgentConfig {
    /// The action protocol (default [`Protocol::Json`]).
    pub protocol: Protocol,
    /// Sampling temperature (default 0.7).
    pub temperature: f64,
    /// Maximum response length in tokens (default 16,384; `None` sends no limit).
    pub max_tokens: Option<u32>,
    /// Sampling seed sent with every request, for servers that honour one.
    pub seed: Option<u64>,
    /// Add the defence instruction (verify collaborator claims) to the system prompt.
    pub defence: bool,
    /// How much of the trajectory the conversation keeps.
    pub history: HistoryLimits,
    /// The model's context window in tokens, when known (from the spec, or asked of the
    /// server with [`ChatClient::context_window`](traparena_model::ChatClient::context_window)). Then no
    /// request asks for more than fits: the response limit is lowered to what the prompt
    /// leaves, and the history is compacted when too little is left.
    pub context_window: Option<u32>,
}

impl Default for LlmAgentConfig {
    fn default() -> Self {
        LlmAgentConfig {
            protocol: Protocol::Json,
            temperature: 0.7,
            max_tokens: Some(16_384),
            seed: None,
            defence: false,
            history: HistoryLimits::default(),
            context_window: None,
        }
    }
}

/// Characters per token assumed when fitting a prompt into the context: on the low side of
/// what was measured (Python source 3.8–4.1, `read` output with its line gutter 3.06), so the
/// estimate errs towards more tokens.
pub const CHARS_PER_TOKEN: f64 = 3.0;
/// Tokens kept free of the estimate, for the chat template's own tokens.
const CONTEXT_MARGIN: u32 = 256;
/// The least response length worth asking for; below it the history is compacted.
const MIN_REPLY_TOKENS: u32 = 1024;

/// Estimated prompt tokens of a request: its messages, tools and response schema.
fn estimated_prompt_tokens(request: &ChatRequest) -> u32 {
    let mut chars = 0usize;
    for m in &request.messages {
        chars += m.content.as_deref().map_or(0, |c| c.chars().count()) + 16;
        for c in &m.tool_calls {
            chars += c.function.arguments.chars().count() + c.function.name.len() + 16;
        }
    }
    if !request.tools.is_empty() {
        chars += serde_json::to_string(&request.tools).map_or(0, |t| t.len());
    }
    if let Some(f) = &request.response_format {
        chars += serde_json::to_string(f).map_or(0, |t| t.len());
    }
    (chars as f64 / CHARS_PER_TOKEN).ceil() as u32
}

/// What the agent remembers of one of its replies.
#[derive(Debug, Clone)]
struct PastTurn {
    /// The reply's text.
    content: Option<String>,
    /// The reply's tool calls (ids filled in where the server sent none).
    calls: Vec<ToolCall>,
    /// Why no action could be read, when none could.
    unreadable: Option<String>,
}

/// A repair agent backed by a chat model.
///
/// The conversation is a system prompt (tools, method, protocol, optional defence), the repair
/// description, and then one assistant turn and one observation per step, rebuilt from the
/// trajectory on every call and bounded by [`HistoryLimits`]. Collaborator messages are
/// rendered after the tool output under the label `[Message from a collaborator]`. A reply
/// holding no readable action gives a [`Turn`] without an action (the runner spends the step
/// and answers with a corrective observation, to which the agent adds the reason); only a
/// failed model call is an error ([`AgentError::Model`]).
///
/// ```
/// use std::sync::Arc;
/// use traparena::llm::{LlmAgent, LlmAgentConfig};
/// use traparena::model::{ChatResponse, ScriptedModel};
/// use traparena::{Action, Agent, AgentView};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = Arc::new(ScriptedModel::new(
///     "fake",
///     [ChatResponse::from_text("fake", r#"{"action": "submit"}"#).with_usage(100, 5)],
/// ));
/// let mut agent = LlmAgent::new(model, LlmAgentConfig::default());
/// let view = AgentView { task_id: "t", description: "Fix it.", steps_taken: 0, budget: 5, history: &[] };
/// let turn = agent.act(&view).await.unwrap();
/// assert_eq!(turn.action, Some(Action::Submit));
/// assert_eq!(turn.usage.prompt_tokens, 100);
/// # }
/// ```
pub struct LlmAgent {
    model: Arc<dyn ChatModel>,
    config: LlmAgentConfig,
    turns: BTreeMap<u32, PastTurn>,
    prefix: Option<Prefix>,
}

/// A fork's replayed turns: asked of the parent's recording, with the parent's seed.
struct Prefix {
    model: Arc<dyn ChatModel>,
    steps: u32,
    seed: Option<u64>,
}

impl fmt::Debug for LlmAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmAgent")
            .field("model", &self.model.model())
            .field("config", &self.config)
            .field("turns", &self.turns.len())
            .finish()
    }
}

impl LlmAgent {
    /// An agent asking `model`.
    pub fn new(model: Arc<dyn ChatModel>, config: LlmAgentConfig) -> Self {
        LlmAgent {
            model,
            config,
            turns: BTreeMap::new(),
            prefix: None,
        }
    }

    /// The same agent as a fork of a recorded episode: its first `steps` turns ask `model`
    /// (the parent's recorded responses, replayed) with the parent's `seed` in the request,
    /// exactly as the parent asked; later turns ask the agent's own model with its own seed.
    /// A prefix response that is not recorded is an infrastructure error naming the step.
    pub fn with_prefix(mut self, model: Arc<dyn ChatModel>, steps: u32, seed: Option<u64>) -> Self {
        self.prefix = Some(Prefix { model, steps, seed });
        self
    }

    /// The settings.
    pub fn config(&self) -> &LlmAgentConfig {
        &self.config
    }

    /// The system prompt for an episode with `budget` actions.
    pub fn system_prompt(&self, budget: u32) -> String {
        let forms = fill(
            protocol_template(self.config.protocol).text,
            &[("forms", &action_forms())],
        );
        let defence = if self.config.defence {
            prompts::AGENT_DEFENCE.text
        } else {
            ""
        };
        fill(
            prompts::AGENT_SYSTEM.text,
            &[
                ("budget", &budget.to_string()),
                ("actions", &action_list()),
                ("protocol", &forms),
                ("defence", defence),
            ],
        )
    }

    /// The request the agent sends for `view`: the whole bounded conversation plus the
    /// protocol's tools or response format.
    pub fn request(&self, view: &AgentView<'_>) -> ChatRequest {
        self.request_within(view, self.config.history.max_chars)
    }

    /// The request for this turn, fitted into the context window when it is known: the
    /// response limit lowered to what the prompt leaves, the history compacted (halved, down
    /// to a floor) while less than a useful reply would be left. The notes say what changed.
    fn fitted_request(
        &self,
        view: &AgentView<'_>,
        max_chars: usize,
    ) -> Result<(ChatRequest, Vec<String>), AgentError> {
        let mut request = self.request_within(view, max_chars);
        let Some(window) = self.config.context_window else {
            return Ok((request, Vec::new()));
        };
        let mut notes = Vec::new();
        let mut chars = max_chars;
        loop {
            let prompt = estimated_prompt_tokens(&request);
            let room = window.saturating_sub(prompt + CONTEXT_MARGIN);
            let wanted = self.config.max_tokens.unwrap_or(room);
            if room >= wanted.min(MIN_REPLY_TOKENS) {
                if wanted > room {
                    request.max_tokens = Some(room);
                }
                if chars < max_chars {
                    notes.push(format!(
                        "the history was compacted to {chars} characters to fit the {window}-token context"
                    ));
                }
                return Ok((request, notes));
            }
            if chars <= 2_000 {
                return Err(AgentError::ContextExhausted(format!(
                    "about {prompt} prompt tokens leave {room} of the {window}-token context for the reply, even with the history compacted"
                )));
            }
            chars = (chars / 2).max(2_000);
            request = self.request_within(view, chars);
        }
    }

    fn request_within(&self, view: &AgentView<'_>, max_chars: usize) -> ChatRequest {
        let mut messages = vec![
            Message::system(self.system_prompt(view.budget)),
            Message::user(fill(
                prompts::AGENT_TASK.text,
                &[("description", view.description)],
            )),
        ];
        messages.extend(self.render_history(view, messages_chars(&messages), max_chars));
        let mut request = ChatRequest::new(messages).with_temperature(self.config.temperature);
        if let Some(n) = self.config.max_tokens {
            request = request.with_max_tokens(n);
        }
        if let Some(seed) = self.config.seed {
            request = request.with_seed(seed);
        }
        match self.config.protocol {
            Protocol::Tools => request.with_tools(action_tools()),
            Protocol::Json => {
                request.with_response_format(ResponseFormat::json_schema("action", action_schema()))
            }
            Protocol::Text => request,
        }
    }

    /// The history as chat messages, bounded by the [`HistoryLimits`].
    fn render_history(&self, view: &AgentView<'_>, used: usize, max_chars: usize) -> Vec<Message> {
        let limits = HistoryLimits {
            max_chars,
            ..self.config.history
        };
        let n = view.history.len();
        let mut rendered: Vec<RenderedStep> = view
            .history
            .iter()
            .enumerate()
            .map(|(i, step)| {
                let recent = i + limits.full_steps >= n;
                self.render_step(step, view.budget, recent, limits)
            })
            .collect();
        let total = |r: &[RenderedStep]| used + r.iter().map(RenderedStep::chars).sum::<usize>();
        // Over the bound: recent steps become old ones (compact action, cut output), oldest
        // first; then old outputs are left out, oldest first; then the newest step's action is
        // compacted and its output cut. Collaborator messages stay.
        for i in 0..n.saturating_sub(1) {
            if total(&rendered) <= limits.max_chars {
                break;
            }
            let compact = self.render_step(&view.history[i], view.budget, false, limits);
            rendered[i] = compact;
        }
        for i in 0..n.saturating_sub(1) {
            if total(&rendered) <= limits.max_chars {
                break;
            }
            rendered[i].output = "[output left out to fit the context]".to_owned();
        }
        if total(&rendered) > limits.max_chars
            && let (Some(last), Some(step)) = (rendered.last_mut(), view.history.last())
        {
            let compact = self.render_step(step, view.budget, false, limits);
            last.content = compact.content;
            last.calls = compact.calls;
        }
        let excess = total(&rendered).saturating_sub(limits.max_chars);
        if excess > 0
            && let Some(last) = rendered.last_mut()
        {
            let keep = last.output.chars().count().saturating_sub(excess).max(1000);
            last.output = clip(&last.output, keep);
        }
        rendered
            .into_iter()
            .flat_map(RenderedStep::messages)
            .collect()
    }

    fn render_step(
        &self,
        step: &Step,
        budget: u32,
        recent: bool,
        limits: HistoryLimits,
    ) -> RenderedStep {
        let past = self.turns.get(&step.index);
        let compact_action = step.action.as_ref().map(|a| compact_action_json(a, 200));
        // The assistant turn as the model wrote it (recent steps) or compacted (older ones).
        let (content, calls) = match past {
            Some(p) if !p.calls.is_empty() => {
                let mut calls = p.calls.clone();
                if !recent {
                    if let (Some(first), Some(action)) = (calls.first_mut(), &step.action) {
                        first.function.arguments = compact_arguments(action, 200);
                    }
                    for c in calls.iter_mut().skip(1) {
                        c.function.arguments = one_line(&c.function.arguments, 200);
                    }
                }
                let content = p
                    .content
                    .as_deref()
                    .filter(|c| !c.trim().is_empty())
                    .map(|c| {
                        if recent {
                            c.to_owned()
                        } else {
                            one_line(c, 300)
                        }
                    });
                (content, calls)
            }
            Some(p) => {
                let text = p.content.clone().unwrap_or_default();
                let text = match (recent, &compact_action) {
                    (true, _) => text,
                    (false, Some(a)) => a.clone(),
                    (false, None) => one_line(&text, 300),
                };
                (Some(text), Vec::new())
            }
            None => {
                let text = match (&step.action, &step.raw) {
                    (Some(a), _) if recent => serde_json::to_string(a).unwrap_or_default(),
                    (Some(_), _) => compact_action.clone().unwrap_or_default(),
                    (None, Some(raw)) if recent => raw.clone(),
                    (None, Some(raw)) => one_line(raw, 300),
                    (None, None) => String::new(),
                };
                (Some(text), Vec::new())
            }
        };
        let header = fill(
            prompts::AGENT_OBSERVATION.text,
            &[
                (
                    "kind",
                    if step.observation.error {
                        "Tool error"
                    } else {
                        "Tool output"
                    },
                ),
                ("step", &step.index.to_string()),
                ("budget", &budget.to_string()),
                ("left", &budget.saturating_sub(step.index).to_string()),
            ],
        );
        let output = if recent {
            step.observation.output.clone()
        } else {
            clip(&step.observation.output, limits.old_output_chars)
        };
        let mut tail = String::new();
        if step.action.is_none()
            && let Some(reason) = past.and_then(|p| p.unreadable.as_deref())
        {
            tail.push('\n');
            tail.push_str(&fill(prompts::AGENT_UNREADABLE.text, &[("reason", reason)]));
            tail.push(' ');
            tail.push_str(correction_template(self.config.protocol).text);
        }
        if let Some(m) = &step.message {
            tail.push_str(prompts::AGENT_COLLABORATOR.text);
            tail.push_str(&m.text);
        }
        RenderedStep {
            content,
            calls,
            header,
            output,
            tail,
        }
    }

    /// Reads the action from a reply.
    fn read_reply(
        &self,
        message: &ResponseMessage,
        finish_reason: Option<&str>,
        step: u32,
    ) -> (Option<Action>, Option<String>, Option<String>, PastTurn) {
        // The action is read from the answer only: a think block may hold drafts of actions.
        let reply = Reply::of(message);
        let content = reply.answer.clone();
        let text = content.as_deref().unwrap_or("");
        let mut calls = message.tool_calls.clone();
        // A server without a tool-call parser passes the model's call through as text.
        let in_text = if calls.is_empty() {
            tool_calls_in_text(text, &action_names())
        } else {
            Vec::new()
        };
        if self.config.protocol == Protocol::Tools && calls.is_empty() {
            calls.clone_from(&in_text);
        }
        // Ids the server left empty, or sent twice, are made unique: each is answered once.
        let mut seen = BTreeSet::new();
        for (k, c) in calls.iter_mut().enumerate() {
            if c.id.trim().is_empty() || !seen.insert(c.id.clone()) {
                c.id = format!("call_{step}_{k}");
                seen.insert(c.id.clone());
            }
        }
        let parsed = match (self.config.protocol, calls.first(), in_text.first()) {
            (Protocol::Tools, Some(call), _) => action_from_call(call),
            (_, _, Some(call)) => action_from_call(call),
            (Protocol::Json, _, _) => match serde_json::from_str::<Value>(text.trim()) {
                Ok(v) => parse_action(v),
                Err(_) => action_from_text(text),
            },
            _ => action_from_text(text),
        };
        let parsed = match parsed {
            Err(_) if reply.answer.is_none() && reply.cut_off_in_reasoning => Err(
                "the reply stopped inside its reasoning, before any action: think less, then act"
                    .to_owned(),
            ),
            Err(_) if reply.answer.is_none() && reply.reasoning.is_some() => {
                Err("the reply has reasoning but no action after it".to_owned())
            }
            other => other,
        };
        let raw = if message.tool_calls.is_empty() {
            Some(text.to_owned())
        } else {
            Some(json!({"content": content, "tool_calls": calls}).to_string())
        };
        // Only the tools protocol answers tool calls; elsewhere they are not part of the
        // conversation.
        if self.config.protocol != Protocol::Tools {
            calls.clear();
        }
        let (action, unreadable) = match parsed {
            Ok(a) => (Some(a), None),
            Err(mut reason) => {
                if finish_reason == Some("length") {
                    reason.push_str(" (the reply was cut off at the response length limit)");
                }
                (None, Some(reason))
            }
        };
        (
            action,
            raw,
            reply.reasoning,
            PastTurn {
                content,
                calls,
                unreadable,
            },
        )
    }
}

#[async_trait]
impl Agent for LlmAgent {
    fn name(&self) -> String {
        let mut name = format!("llm:{}", self.model.model());
        if self.config.defence {
            name.push_str("+defence");
        }
        name
    }

    async fn act(&mut self, view: &AgentView<'_>) -> Result<Turn, AgentError> {
        let (mut request, mut notes) = self.fitted_request(view, self.config.history.max_chars)?;
        let step = view.steps_taken + 1;
        if let Some(p) = self.prefix.as_ref().filter(|p| view.steps_taken < p.steps) {
            request.seed = p.seed;
            let response = p.model.chat(&request).await.map_err(|e| {
                AgentError::Infrastructure(format!(
                    "step {step} of the fork's prefix was not replayed from its parent's recording: {e}"
                ))
            })?;
            return Ok(self.turn(response, notes, step));
        }
        let response = match self.model.chat(&request).await {
            Ok(r) => r,
            // The server counts tokens better than the estimate: compact to half and try once
            // more; still too long is the agent's failure, not the infrastructure's.
            Err(e) if e.is_context_overflow() => {
                let half = (messages_chars(&request.messages) / 2).max(1);
                let (retry, more) = self.fitted_request(view, half)?;
                notes.push(format!(
                    "the server refused the request as too long for the context ({e}); the history was compacted to {half} characters and the request sent again"
                ));
                notes.extend(more);
                match self.model.chat(&retry).await {
                    Ok(r) => r,
                    Err(e) if e.is_context_overflow() => {
                        return Err(AgentError::ContextExhausted(format!(
                            "the conversation does not fit the model's context even compacted: {e}"
                        )));
                    }
                    Err(e) => return Err(AgentError::Model(Box::new(e))),
                }
            }
            Err(e) => return Err(AgentError::Model(Box::new(e))),
        };
        Ok(self.turn(response, notes, step))
    }

    fn prompt_hash(&self) -> Option<String> {
        let protocol = protocol_template(self.config.protocol);
        let machine = match self.config.protocol {
            Protocol::Tools => serde_json::to_string(&action_tools()).unwrap_or_default(),
            Protocol::Json => action_schema().to_string(),
            Protocol::Text => String::new(),
        };
        let (list, forms) = (action_list(), action_forms());
        let mut templates = vec![
            prompts::AGENT_SYSTEM,
            protocol,
            prompts::AGENT_TASK,
            prompts::AGENT_OBSERVATION,
            prompts::AGENT_COLLABORATOR,
            prompts::AGENT_UNREADABLE,
            correction_template(self.config.protocol),
        ];
        if self.config.defence {
            templates.push(prompts::AGENT_DEFENCE);
        }
        Some(prompts::prompt_hash(
            &templates,
            &[prompts::ACTIONS_VERSION, &list, &forms, &machine],
        ))
    }
}

impl LlmAgent {
    /// The turn a response gives at `step`.
    fn turn(
        &mut self,
        response: traparena_model::ChatResponse,
        mut notes: Vec<String>,
        step: u32,
    ) -> Turn {
        notes.extend(response.adjustments.iter().cloned());
        let usage = task_usage(response.token_usage());
        let message = response.message().cloned().unwrap_or_default();
        let (action, raw, reasoning, past) =
            self.read_reply(&message, response.finish_reason(), step);
        self.turns.insert(step, past);
        Turn {
            action,
            raw,
            usage,
            reasoning,
            notes,
            observation: None,
        }
    }
}

/// One step of the conversation before it becomes messages.
struct RenderedStep {
    content: Option<String>,
    calls: Vec<ToolCall>,
    header: String,
    output: String,
    tail: String,
}

impl RenderedStep {
    fn observation(&self) -> String {
        format!("{}{}{}", self.header, self.output, self.tail)
    }

    fn chars(&self) -> usize {
        self.content.as_deref().map_or(0, |c| c.chars().count())
            + self
                .calls
                .iter()
                .map(|c| c.function.arguments.chars().count() + c.function.name.len())
                .sum::<usize>()
            + self.header.chars().count()
            + self.output.chars().count()
            + self.tail.chars().count()
    }

    fn messages(self) -> Vec<Message> {
        let observation = self.observation();
        if self.calls.is_empty() {
            return vec![
                Message::assistant(self.content.unwrap_or_default()),
                Message::user(observation),
            ];
        }
        let ids: Vec<String> = self.calls.iter().map(|c| c.id.clone()).collect();
        let mut out = vec![Message::assistant_tool_calls(self.content, self.calls)];
        for (k, id) in ids.into_iter().enumerate() {
            if k == 0 {
                out.push(Message::tool(id, observation.clone()));
            } else {
                out.push(Message::tool(
                    id,
                    "Not run: only the first tool call of a reply is run.",
                ));
            }
        }
        out
    }
}

fn messages_chars(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| m.content.as_deref().map_or(0, |c| c.chars().count()))
        .sum()
}

fn protocol_template(p: Protocol) -> Template {
    match p {
        Protocol::Tools => prompts::AGENT_PROTOCOL_TOOLS,
        Protocol::Json => prompts::AGENT_PROTOCOL_JSON,
        Protocol::Text => prompts::AGENT_PROTOCOL_TEXT,
    }
}

/// The corrective instruction after an unreadable reply.
fn correction_template(p: Protocol) -> Template {
    match p {
        Protocol::Tools => prompts::AGENT_CORRECT_TOOLS,
        Protocol::Json | Protocol::Text => prompts::AGENT_CORRECT_JSON,
    }
}

/// Every string in `v` cut to `max` characters.
fn shorten_strings(v: &mut Value, max: usize) {
    match v {
        Value::String(s) if s.chars().count() > max => {
            let n = s.chars().count();
            let kept: String = s.chars().take(max).collect();
            *s = format!("{kept}[... {} more characters]", n - max);
        }
        Value::Object(o) => o.values_mut().for_each(|x| shorten_strings(x, max)),
        Value::Array(a) => a.iter_mut().for_each(|x| shorten_strings(x, max)),
        _ => {}
    }
}

fn compact_action_json(action: &Action, max: usize) -> String {
    let mut v = serde_json::to_value(action).unwrap_or(Value::Null);
    shorten_strings(&mut v, max);
    v.to_string()
}

fn compact_arguments(action: &Action, max: usize) -> String {
    let mut v = serde_json::to_value(action).unwrap_or(Value::Null);
    if let Value::Object(o) = &mut v {
        o.remove("action");
    }
    shorten_strings(&mut v, max);
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compacting_cuts_long_strings() {
        let a = Action::Write {
            path: "a.py".into(),
            content: "x".repeat(500),
        };
        let c = compact_action_json(&a, 10);
        assert!(c.contains("xxxxxxxxxx[... 490 more characters]"), "{c}");
        assert!(c.contains("\"action\":\"write\""), "{c}");
        assert!(!compact_arguments(&a, 10).contains("action"));
    }
}
