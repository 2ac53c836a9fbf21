//! Attacker and curator factories and the open registries of their kinds.

use serde::Deserialize;
use traparena_task::{
    ArgsError, ComponentRole, ConfigContext, ConfiguredKind, EpisodeContext, Factory, KindRegistry,
    NoArgs,
};

use crate::error::AttackError;
use crate::traits::{Attacker, Curator};
use crate::{OfflineAttacker, Persona, ScriptedAttacker, TallyCurator};

/// The attacker role: its kinds build a [`Box<dyn Attacker>`](Attacker) for one episode.
/// [`AttackerRegistry::builtin`] holds `scripted` (`{"persona": "urge_submit"}` for one
/// persona, or `{"personas": [...]}`; all misleading personas by default), `truthful` (the
/// truthful control) and `offline` (draws from the task's `attacks.json`).
///
/// A plug-in author adds an attacker kind with a [`Factory`] whose `Role` is `Attackers`,
/// registered under a name.
///
/// Whether an attacker sees the reference information is the attacker's own declaration,
/// [`Attacker::access`]: the episode grants it from there and records it.
///
/// ```
/// use traparena::{Advice, AttackContext, AttackError, Attacker, AttackerRegistry, Attackers, Factory};
/// use traparena::{Claims, ComponentSpec, ConfigContext, EpisodeContext};
///
/// /// Says the same sentence after every step.
/// struct Parrot(String);
///
/// #[traparena::async_trait]
/// impl Attacker for Parrot {
///     fn name(&self) -> String { "parrot".into() }
///     async fn advise(&mut self, _: &AttackContext<'_>) -> Result<Option<Advice>, AttackError> {
///         Ok(Some(Advice { text: self.0.clone(), claims: Claims::default() }))
///     }
/// }
///
/// #[derive(serde::Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct ParrotArgs { text: String }
///
/// struct ParrotKind;
///
/// impl Factory for ParrotKind {
///     type Role = Attackers;
///     type Args = ParrotArgs;
///     fn build(&self, args: &ParrotArgs, _: &EpisodeContext<'_>) -> Result<Box<dyn Attacker>, AttackError> {
///         Ok(Box::new(Parrot(args.text.clone())))
///     }
/// }
///
/// let mut attackers = AttackerRegistry::builtin();
/// attackers.register("parrot", ParrotKind);
/// assert!(attackers.kinds().contains(&"parrot".to_owned()));
/// let spec: ComponentSpec = serde_json::from_str(r#"{"kind": "parrot", "args": {"txt": "hi"}}"#)?;
/// let e = attackers.configure(&spec, &ConfigContext::default()).err().unwrap();
/// assert!(e.to_string().contains("unknown field `txt`"), "{e}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub enum Attackers {}

impl ComponentRole for Attackers {
    const NAME: &'static str = "attacker";
    type Built = Box<dyn Attacker>;
    type From<'a> = EpisodeContext<'a>;
    type Error = AttackError;

    fn builtin(r: &mut AttackerRegistry) {
        r.register("scripted", ScriptedKind);
        r.register("truthful", TruthfulKind);
        r.register("offline", OfflineKind);
    }
}

/// The curator role: its kinds build a [`Box<dyn Curator>`](Curator), one per experiment
/// condition, from nothing. [`CuratorRegistry::builtin`] holds `tally` (rule-based; no
/// arguments, no model).
#[derive(Debug, Clone, Copy)]
pub enum Curators {}

impl ComponentRole for Curators {
    const NAME: &'static str = "curator";
    type Built = Box<dyn Curator>;
    type From<'a> = ();
    type Error = AttackError;

    fn builtin(r: &mut CuratorRegistry) {
        r.register("tally", TallyKind);
    }
}

/// The open registry of attacker kinds (see [`Attackers`] for the built-in ones); research
/// code registers its own with [`KindRegistry::register`].
pub type AttackerRegistry = KindRegistry<Attackers>;

/// The open registry of curator kinds (see [`Curators`]).
pub type CuratorRegistry = KindRegistry<Curators>;

/// A configured attacker kind, ready to build one attacker per episode.
pub type AttackerSetup = dyn ConfiguredKind<Attackers>;

/// A configured curator kind.
pub type CuratorSetup = dyn ConfiguredKind<Curators>;

/// The `scripted` kind's arguments.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedArgs {
    /// One persona.
    #[serde(default)]
    pub persona: Option<Persona>,
    /// Several personas, one drawn per message.
    #[serde(default)]
    pub personas: Option<Vec<Persona>>,
}

/// The `scripted` kind: generic templates that fit the moment they follow.
#[derive(Debug, Clone, Copy)]
pub struct ScriptedKind;

impl Factory for ScriptedKind {
    type Role = Attackers;
    type Args = ScriptedArgs;
    fn short_form(&self) -> Option<&'static str> {
        Some("persona")
    }
    fn build(
        &self,
        args: &ScriptedArgs,
        episode: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Attacker>, AttackError> {
        let personas = match (args.persona, &args.personas) {
            (Some(p), _) => vec![p],
            (None, Some(ps)) => ps.clone(),
            (None, None) => Persona::MISLEADING.to_vec(),
        };
        Ok(Box::new(ScriptedAttacker::new(personas, episode.seed)))
    }
    fn configure(&self, args: ScriptedArgs, _: &ConfigContext) -> Result<ScriptedArgs, ArgsError> {
        match (&args.persona, &args.personas) {
            (Some(_), Some(_)) => Err(ArgsError::new(
                "personas",
                "give `persona` or `personas`, not both",
            )),
            (None, Some(ps)) if ps.is_empty() => {
                Err(ArgsError::new("personas", "lists no persona"))
            }
            _ => Ok(args),
        }
    }
}

/// The `truthful` kind: the control whose messages are true.
#[derive(Debug, Clone, Copy)]
pub struct TruthfulKind;

impl Factory for TruthfulKind {
    type Role = Attackers;
    type Args = NoArgs;
    fn build(
        &self,
        _: &NoArgs,
        episode: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Attacker>, AttackError> {
        Ok(Box::new(ScriptedAttacker::new(
            vec![Persona::Truthful],
            episode.seed,
        )))
    }
}

/// The `offline` kind: draws the task's own misleading messages from `attacks.json`. A task
/// without one cannot be attacked this way, and says so.
#[derive(Debug, Clone, Copy)]
pub struct OfflineKind;

impl Factory for OfflineKind {
    type Role = Attackers;
    type Args = NoArgs;
    fn build(
        &self,
        _: &NoArgs,
        episode: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Attacker>, AttackError> {
        if episode.task.attacks.is_empty() {
            return Err(AttackError::Invalid(format!(
                "task {} has no attacks.json for the offline attacker",
                episode.task.spec.id
            )));
        }
        Ok(Box::new(OfflineAttacker::new(
            episode.task.attacks.clone(),
            episode.seed,
        )))
    }
}

/// The `tally` curator kind.
#[derive(Debug, Clone, Copy)]
pub struct TallyKind;

impl Factory for TallyKind {
    type Role = Curators;
    type Args = NoArgs;
    fn build(&self, _: &NoArgs, _: &()) -> Result<Box<dyn Curator>, AttackError> {
        Ok(Box::new(TallyCurator))
    }
}
