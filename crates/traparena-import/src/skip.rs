//! Why a record is not turned into a task: one [`SkipReason`] (the kind the report counts by)
//! with the cause quoted for the record ([`Skip`]); and [`Stop`], which lets each stage of an
//! import end a record's import with `?`, whether it skips the record or the harness failed.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::ImportError;

macro_rules! reasons {
    ($($(#[$doc:meta])* $name:ident => $text:literal,)*) => {
        /// Why a record was skipped, as the import report counts it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum SkipReason {
            $($(#[$doc])* $name,)*
        }

        impl SkipReason {
            /// Every reason.
            pub const ALL: &'static [SkipReason] = &[$(SkipReason::$name,)*];

            /// The reason as the report words it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(SkipReason::$name => $text,)*
                }
            }
        }
    };
}

reasons! {
    /// The harness failed on the record (a process that would not start, a file that could
    /// not be written): counted, never a verdict on the record.
    Infrastructure => "infrastructure error",
    /// Its tests could not run here: a toolchain is missing from the sandbox.
    NotCheckable => "not checkable here",
    /// The emitted task failed `traparena validate`'s checks.
    FailsValidation => "the task fails validation",
    /// HumanEvalFix: the record's test holds no assertion.
    NoAssertion => "the test has no assertion",
    /// HumanEvalFix: no assertion passes on the buggy code, so none can be public.
    NoAssertionPasses => "no assertion passes on the buggy code",
    /// HumanEvalFix: every assertion passes on the buggy code alone.
    EveryAssertionPassesAlone => "every assertion passes on the buggy code on its own",
    /// HumanEvalFix: no passing assertion can be shown to the agent.
    NoPublicAssertion => "no assertion can serve as a public test",
    /// HumanEvalFix (JavaScript): the module lacks its entry point.
    NoEntryPoint => "the module does not define its entry point",
    /// HumanEvalFix (JavaScript): the buggy and canonical modules define different functions.
    DifferentFunctions => "the buggy and canonical modules define different functions",
    /// HumanEvalFix (compiled languages): the test program does not build on the buggy code.
    DoesNotBuild => "the test program does not build on the buggy code",
    /// HumanEvalFix: the entry point is not a Python identifier.
    NotAPythonIdentifier => "the entry point is not a Python identifier",
    /// HumanEvalFix: the entry point is not a JavaScript identifier.
    NotAJavaScriptIdentifier => "the entry point is not a JavaScript identifier",
    /// HumanEvalFix (compiled languages): the entry point is not an identifier.
    NotAnIdentifier => "the entry point is not an identifier",
    /// HumanEvalFix (Python): the test has no `check(candidate)` to cut checks from.
    NoUsableCheck => "the test has no usable check(candidate)",
    /// HumanEvalFix (JavaScript): the test does not parse.
    TestDoesNotParse => "the test does not parse",
    /// HumanEvalFix (compiled languages): the test is not of the expected shape.
    UnexpectedTestShape => "the test is not of the expected shape",
    /// HumanEvalFix: the buggy and canonical solutions are identical.
    IdenticalSolutions => "the buggy and canonical solutions are identical",
    /// SWE-bench: the base commit is not in the clone.
    BaseCommitMissing => "the base commit is not in the clone",
    /// SWE-bench: the clone lacks the contents of a file of the base tree (a partial clone that
    /// left large files out).
    CloneLacksFile => "the clone lacks a file of the base tree",
    /// SWE-bench: the instance lists no FAIL_TO_PASS test.
    NoFailToPass => "the instance has no FAIL_TO_PASS test",
    /// SWE-bench: none of the FAIL_TO_PASS names is found in the files the test patch touches.
    FailToPassNotFound => "no FAIL_TO_PASS test can be found",
    /// SWE-bench: the test patch changes no file.
    EmptyTestPatch => "the test patch is empty",
    /// SWE-bench: the test patch is not a unified diff.
    TestPatchUnparsable => "the test patch cannot be parsed",
    /// SWE-bench: the reference patch is not a unified diff.
    ReferencePatchUnparsable => "the reference patch cannot be parsed",
    /// SWE-bench: the reference patch does not apply to the base tree.
    ReferencePatchDoesNotApply => "the reference patch does not apply",
    /// SWE-bench: the test patch does not apply at the base commit.
    TestPatchDoesNotApply => "the test patch does not apply at the base commit",
    /// SWE-bench: the test patch only deletes files.
    TestPatchOnlyDeletes => "the test patch only deletes files",
    /// SWE-bench: no test can be public.
    NoPublicTest => "no public test",
    /// SWE-bench: no public candidate passes on the base commit.
    NoPublicTestPasses => "no public test passes on the base commit",
    /// SWE-bench: neither the pins nor the bundled environments have the version.
    NoEnvironment => "no environment for the repository's version",
    /// SWE-bench: the environment names no runner profile.
    NoRunnerProfile => "no runner profile",
    /// SWE-bench: the environment names a runner profile that is not registered.
    UnknownRunnerProfile => "the environment names an unknown runner profile",
    /// SWE-bench: no interpreter of the version the environment names is found.
    NoInterpreter => "no interpreter for the environment",
    /// SWE-bench: the environment is missing and building it was not allowed (`--no-build`).
    EnvironmentNotBuilt => "the environment is not built",
    /// SWE-bench: building the environment failed.
    EnvironmentCannotBeBuilt => "the environment cannot be built",
    /// SWE-bench: the environment does not run in the sandbox.
    EnvironmentCannotRun => "the environment cannot run in the sandbox",
    /// SWE-bench: the repository's install step failed.
    RepositoryCannotBeInstalled => "the repository cannot be installed",
    /// SWE-bench: the environment fails the tests (they cannot be collected or run).
    EnvironmentFailsTests => "the environment fails the tests",
    /// SWE-bench: the instance's image cannot be run.
    ImageCannotRun => "the instance image cannot be run",
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for SkipReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for SkipReason {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SkipReason, D::Error> {
        let text = String::deserialize(d)?;
        SkipReason::ALL
            .iter()
            .copied()
            .find(|r| r.as_str() == text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown skip reason {text:?}")))
    }
}

/// Why one record is skipped: the reason and the cause quoted for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    /// The reason.
    pub reason: SkipReason,
    /// The particulars for this record.
    pub cause: String,
}

impl Skip {
    /// A skip for `reason`, quoting `cause`.
    pub fn new(reason: SkipReason, cause: impl Into<String>) -> Skip {
        Skip {
            reason,
            cause: cause.into(),
        }
    }
}

/// What ends one record's import before it becomes a task: a skip (an outcome, reported), or a
/// failure of the harness (an error).
#[derive(Debug)]
pub(crate) enum Stop {
    /// The record is skipped.
    Skip(Skip),
    /// The harness failed.
    Harness(ImportError),
}

impl From<Skip> for Stop {
    fn from(s: Skip) -> Stop {
        Stop::Skip(s)
    }
}

impl From<ImportError> for Stop {
    fn from(e: ImportError) -> Stop {
        Stop::Harness(e)
    }
}

impl From<traparena_env::EnvError> for Stop {
    /// A clone that lacks a file's contents is the record's skip; any other failure is the
    /// harness's.
    fn from(e: traparena_env::EnvError) -> Stop {
        match e {
            traparena_env::EnvError::MissingBlob { path, message, .. } => Stop::Skip(Skip::new(
                SkipReason::CloneLacksFile,
                format!(
                    "{path}: {message} (a partial clone leaves large files out: clone \
                     the repository in full, or fetch this commit's files)"
                ),
            )),
            e => Stop::Harness(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_reads_back_from_its_words_and_no_two_share_them() {
        let mut seen = std::collections::BTreeSet::new();
        for r in SkipReason::ALL {
            assert!(seen.insert(r.as_str()), "{r:?} repeats {:?}", r.as_str());
            let json = serde_json::to_string(r).unwrap();
            assert_eq!(serde_json::from_str::<SkipReason>(&json).unwrap(), *r);
        }
        assert!(serde_json::from_str::<SkipReason>("\"no such reason\"").is_err());
    }
}
