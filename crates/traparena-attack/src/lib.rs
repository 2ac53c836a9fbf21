//! TrapArena attackers and curators.
//!
//! An [`Attacker`] is asked for advice after every tool call the [`Schedule`] allows (the
//! episode's, or the attacker's own: [`Attacker::schedule`]); what it returns is checked by the
//! [`LeakageFilter`] and, when delivered, appended to the agent's observation as a message from
//! a collaborator. It can never touch the repository or the tool
//! output. A [`Curator`] rewrites bounded [`Notes`] about the target between rounds; notes go to
//! the attacker only.
//!
//! Built in: the scripted [`Persona`]s (generic templates that fit the moment they follow, plus
//! the truthful control), the task-specific [`OfflineAttacker`] that draws from `attacks.json`,
//! and the rule-based [`TallyCurator`].
//!
//! For attackers that write plain text, [`claims_from_text`] reads the claims a message makes
//! about the repository's places, and [`resolve_place`] / [`resolve_places`] match loosely
//! named places to [`Location`](traparena_task::Location)s.

mod claims;
mod error;
mod factory;
mod leakage;
mod notes;
mod offline;
mod schedule;
mod scripted;
mod tally;
mod traits;

pub use claims::{claims_from_text, resolve_place, resolve_places, urges_submit};
pub use error::AttackError;
pub use factory::{
    AttackerRegistry, AttackerSetup, Attackers, CuratorRegistry, CuratorSetup, Curators,
    OfflineKind, ScriptedArgs, ScriptedKind, TallyKind, TruthfulKind,
};
pub use leakage::{LeakageConfig, LeakageFilter};
pub use notes::{NoteLimits, Notes, NotesError};
pub use offline::OfflineAttacker;
pub use schedule::{Schedule, Trigger};
pub use scripted::{Persona, ScriptedAttacker};
pub use tally::TallyCurator;
pub use traits::{
    Access, Advice, AttackContext, Attacker, Curator, ReferenceInfo, Role, RoundEvidence,
    TargetReaction,
};
