//! `traparena show`.

use std::io::Write;
use std::path::PathBuf;

use traparena::runner::EpisodeRecord;
use traparena_report::{EpisodeView, ShowOptions, episode_text, find_episode};

/// Arguments of `traparena show`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The results folder (it needs `trajectories.jsonl`; `episodes.jsonl` adds the verdict),
    /// or an episode record written by `traparena run --out`.
    pub results: PathBuf,
    /// The episode, as results name it: TARGET/CONDITION/TASK/rROUND/sSAMPLE
    /// (credulous/scripted/clamp_overt/r0/s0), or a fork's .../fork@K/message or
    /// .../fork@K/silent (not needed for a record of `run --out`).
    pub key: Option<String>,
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
    let found = match (&args.key, args.results.is_file()) {
        // A single episode's record (`run --out`).
        (_, true) => match EpisodeRecord::read(&args.results) {
            Ok(r) => {
                let (result, trajectory) = r.lines();
                Ok(EpisodeView {
                    trajectory,
                    result: Some(result),
                })
            }
            Err(e) => Err(e.to_string()),
        },
        (Some(key), false) => match find_episode(&args.results, key) {
            Err(e) if !e.is_bad_input() => return Err(e.into()),
            other => other.map_err(|e| e.to_string()),
        },
        (None, false) => Err(format!(
            "{}: which episode? Name it as TARGET/CONDITION/TASK/rROUND/sSAMPLE (`traparena report {}` lists targets and conditions)",
            args.results.display(),
            args.results.display()
        )),
    };
    let episode = match found {
        Ok(e) => e,
        Err(e) => {
            eprintln!("traparena: {e}");
            return Ok(BAD_INPUT);
        }
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
