//! Test support shared by TrapArena's crates, and only ever a dev-dependency (it is not
//! published):
//!
//! - [`synthetic`]: synthetic results folders in the results format, for the report's tests and
//!   benchmark and for any test that needs a results folder;
//! - [`stub`]: a scripted OpenAI-compatible model server on loopback, that answers like vLLM
//!   and records every request;
//! - [`cli`]: running the `traparena` binary from its tests;
//! - [`procs`]: the machine's processes, to check that nothing outlives a sandboxed run;
//! - [`swebench`]: a synthetic SWE-bench clone and instance records over it;
//! - [`browser`]: headless Chromium through the DevTools Protocol, for the HTML pages.

// This test code reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

pub mod browser;
pub mod cli;
pub mod folder;
pub mod procs;
pub mod stub;
pub mod swebench;
pub mod synthetic;
