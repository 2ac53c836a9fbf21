//! The TrapArena evaluator: whether a candidate patch is an accepted repair, and whether a
//! task folder is a valid task.

pub mod analysis;
pub mod code;
mod copy;
mod error;
mod evaluate;
mod validate;

pub use copy::{evaluation_copy, restore_tests};
pub use error::EvalError;
pub use evaluate::{Evaluation, Evaluator, FreshCopy};
pub use validate::{Check, NotCheckable, ValidateOptions, ValidationReport, Validity, validate};
