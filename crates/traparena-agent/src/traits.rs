use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use traparena_task::{Action, AgentCommand, AgentExit, Moment, Observation, Step, Usage};

use crate::error::AgentError;

/// What an agent sees before each step: the task's description and its own trajectory so far.
#[derive(Debug, Clone, Copy)]
pub struct AgentView<'a> {
    /// The task's id.
    pub task_id: &'a str,
    /// The repair description.
    pub description: &'a str,
    /// Steps taken so far (`history.len()`); the turn being asked for is step
    /// `steps_taken + 1`. The same count as `AttackContext::steps_taken` after a step.
    pub steps_taken: u32,
    /// The action budget.
    pub budget: u32,
    /// Every step so far: action, authentic observation, and the collaborator message
    /// delivered after it, if any.
    pub history: &'a [Step],
    /// True when the agent's process ([`Agent::command`]) runs in a container of the task's
    /// image (the container backend) rather than beside the host's system folders: its
    /// `read_only_paths` are mounted into the image, whose own `/usr` replaces the host's, so a
    /// program that needs the host's `/usr` (a virtual environment of the host's Python) does
    /// not run there.
    pub runs_in_image: bool,
}

/// What a turn does: the three kinds of turn an agent can take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnKind {
    /// An action for the episode's environment to carry out.
    Act(Action),
    /// A step the agent carried out itself (an agent that runs its own tools, see
    /// [`Agent::command`]): what it observed, recorded as the step's observation while the
    /// environment runs nothing, and the action the step maps onto when it maps onto one (a
    /// final [`Action::Submit`]).
    Reported {
        /// The observation the agent reports.
        observation: Observation,
        /// The action the step maps onto, if any.
        action: Option<Action>,
    },
    /// A reply that could not be read as an action: the step is spent, and the agent gets a
    /// corrective observation.
    Unreadable,
}

/// One turn of an agent: what it does ([`TurnKind`]), and what the step records of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// What the turn does.
    pub kind: TurnKind,
    /// The raw reply, for agents that speak text (for a reported step: the action as the
    /// model stated it).
    pub raw: Option<String>,
    /// Tokens this turn cost.
    pub usage: Usage,
    /// The model's reasoning, kept apart from the reply (recorded with the step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// What was changed to get the reply (recorded with the step), one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The moment the step reached, for an agent that carries out its own actions (recorded
    /// with the step, and read by the attackers' schedules as the action would be).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moment: Option<Moment>,
}

impl Turn {
    /// A turn of `kind`, with nothing else to record and no model cost.
    pub fn of(kind: TurnKind) -> Turn {
        Turn {
            kind,
            raw: None,
            usage: Usage::default(),
            reasoning: None,
            notes: Vec::new(),
            moment: None,
        }
    }

    /// A turn with an action and no model cost.
    pub fn act(action: Action) -> Turn {
        Turn::of(TurnKind::Act(action))
    }

    /// A turn with `action` when the reply held one, else an unreadable reply.
    pub fn read(action: Option<Action>) -> Turn {
        Turn::of(action.map_or(TurnKind::Unreadable, TurnKind::Act))
    }

    /// The turn's action: the one to carry out, or the one a reported step maps onto.
    pub fn action(&self) -> Option<&Action> {
        match &self.kind {
            TurnKind::Act(a) => Some(a),
            TurnKind::Reported { action, .. } => action.as_ref(),
            TurnKind::Unreadable => None,
        }
    }
}

/// A repair agent. Implement [`Agent::name`] and [`Agent::act`]; the rest has defaults.
///
/// `act` is called once per step with everything the agent may see; it returns one [`Turn`].
/// A failed model call should be [`AgentError::Model`]: the episode is then marked as an
/// infrastructure error rather than a failed repair.
///
/// ```
/// use traparena::{Action, Agent, AgentError, AgentView, Turn};
///
/// /// Looks around, runs the tests, and submits when a collaborator says so.
/// struct Obedient;
///
/// #[traparena::async_trait]
/// impl Agent for Obedient {
///     fn name(&self) -> String {
///         "obedient".into()
///     }
///
///     async fn act(&mut self, view: &AgentView<'_>) -> Result<Turn, AgentError> {
///         let urged = view
///             .history
///             .iter()
///             .any(|s| s.message.as_ref().is_some_and(|m| m.claims.urge_submit));
///         Ok(Turn::act(match view.steps_taken {
///             _ if urged => Action::Submit,
///             0 => Action::List { path: None },
///             _ => Action::RunPublicTests,
///         }))
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), traparena::Error> {
/// let view = AgentView { task_id: "t", description: "Fix it.", steps_taken: 0, budget: 5, history: &[], runs_in_image: false };
/// assert_eq!(Obedient.act(&view).await?.action(), Some(&Action::List { path: None }));
/// # Ok(()) }
/// ```
#[async_trait]
pub trait Agent: Send {
    /// A short name for records (`gold`, `llm:qwen2.5-72b`, ...).
    fn name(&self) -> String;

    /// The next turn.
    ///
    /// # Cancel safety
    ///
    /// For an agent without a process of its own, the episode always awaits `act` to its end.
    /// For an agent with one ([`Agent::command`]), the episode races `act` against the end of
    /// that process and *drops* the `act` future when the process ends first, as
    /// `tokio::select!` drops the branches that lost. Such an agent's `act` must therefore be
    /// cancel safe: dropped at any `.await`, it must leave the agent able to answer
    /// [`Agent::process_ended`], which the episode calls next, without losing a turn the
    /// process already finished (keep what was read in `self`, not in the future's locals).
    async fn act(&mut self, view: &AgentView<'_>) -> Result<Turn, AgentError>;

    /// A hash of the prompt templates this agent uses, recorded with every episode.
    fn prompt_hash(&self) -> Option<String> {
        None
    }

    /// For an agent that runs as its own process and carries out its own tools (an external
    /// agent): the process the episode starts in its sandbox before the first turn. Its
    /// turns then report the observations themselves ([`TurnKind::Reported`]). `view` is the
    /// view of the first turn (task, description, budget). Default: none.
    async fn command(&mut self, view: &AgentView<'_>) -> Result<Option<AgentCommand>, AgentError> {
        let _ = view;
        Ok(None)
    }

    /// The agent's process ended while a turn was awaited: it exited, timed out, or was
    /// killed. Returns the turn the process ended with, when it ended one (such as a final
    /// submission); the episode then ends. Default: none.
    async fn process_ended(&mut self, exit: &AgentExit) -> Result<Option<Turn>, AgentError> {
        let _ = exit;
        Ok(None)
    }

    /// For an agent that reports its own observations: the beginnings of the lines of its
    /// tool output that vary from run to run by themselves (Codex CLI's `Chunk ID: `). A fork
    /// that replays this agent's steps ignores the rest of such lines when it checks them
    /// against its parent's, as it ignores durations. Default: none.
    fn volatile_output(&self) -> Vec<String> {
        Vec::new()
    }

    /// What the agent wrote for itself during the episode (a process plug-in's standard
    /// error), kept with the episode's record; `None` (the default) when nothing. Asked once,
    /// after the episode's last turn: an agent that holds a process may end it here.
    fn log(&mut self) -> Option<String> {
        None
    }
}
