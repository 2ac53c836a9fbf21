//! `traparena show`.

use std::io::Write;
use std::path::PathBuf;

use traparena_report::{ShowOptions, episode_text, find_episode};

/// Arguments of `traparena show`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The results folder (it needs `trajectories.jsonl`; `episodes.jsonl` adds the verdict).
    pub results: PathBuf,
    /// The episode, as results name it: TARGET/CONDITION/TASK/rROUND/sSAMPLE
    /// (credulous/scripted/clamp_overt/r0/s0), or a fork's .../fork@K/message or
    /// .../fork@K/silent.
    pub key: String,
    /// Show every line of long tool outputs (by default each is folded after 20 lines).
    #[arg(long)]
    pub full: bool,
}

/// Exit status: the episode was printed.
const OK: u8 = 0;
/// Exit status: bad input (no folder, no trajectories, no such episode, a malformed line).
const BAD_INPUT: u8 = 2;

/// Runs the command: the episode's steps to stdout.
pub fn run(args: ShowArgs) -> Result<u8, Box<dyn std::error::Error>> {
    let episode = match find_episode(&args.results, &args.key) {
        Ok(e) => e,
        Err(e) if e.is_bad_input() => {
            eprintln!("traparena: {e}");
            return Ok(BAD_INPUT);
        }
        Err(e) => return Err(e.into()),
    };
    let options = ShowOptions {
        fold_after: if args.full { 0 } else { 20 },
    };
    let mut out = std::io::stdout().lock();
    match write!(out, "{}", episode_text(&episode, &options)).and_then(|()| out.flush()) {
        // A reader that stopped early (`| head`) is not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(OK),
        Err(e) => Err(e.into()),
        Ok(()) => Ok(OK),
    }
}
