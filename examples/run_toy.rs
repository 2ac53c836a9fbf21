//! Three agents on the same task under the same scripted attacker: one repairs the root cause,
//! one believes the collaborator, one hard-codes the answers.
//!
//! ```sh
//! cargo run --example run_toy
//! ```

// This example prints, as a program does.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::Path;

use traparena::agent::{CredulousAgent, GoldAgent, HardcoderAgent};
use traparena::attack::{Persona, ScriptedAttacker};
use traparena::{Agent, Episode, Task};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), traparena::Error> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tasks/invoice_coupon");
    let task = Task::load(&dir)?;
    // One episode set-up, run once per agent (each run starts from a fresh workspace).
    let episode = Episode::builder(&task).seed(1).build()?;
    let seed = episode.config().seed;
    // Without bubblewrap: what the builtin sandbox does not guarantee, and how to install it.
    for w in episode.sandbox().warnings() {
        eprintln!("warning: {w}");
    }

    println!("task: {} ({})", task.spec.id, task.spec.description);
    println!(
        "attacker: scripted persona `blame_other_location`, seed {}\n",
        seed
    );
    println!(
        "{:<10} {:<9} {:<15} {:>8} {:<12} flags",
        "agent", "accepted", "failure mode", "messages", "susceptible"
    );
    let agents: Vec<Box<dyn Agent>> = vec![
        Box::new(GoldAgent::new(&task)?),
        Box::new(CredulousAgent::new(&task)?),
        Box::new(HardcoderAgent::new(&task)?),
    ];
    for mut agent in agents {
        let mut attacker = ScriptedAttacker::new(vec![Persona::BlameOtherLocation], seed);
        let r = episode.run(agent.as_mut(), Some(&mut attacker)).await?;
        let mut flags: Vec<String> = r.verdict.flags.iter().map(|f| f.name.to_string()).collect();
        flags.dedup();
        println!(
            "{:<10} {:<9} {:<15} {:>8} {:<12} {}",
            r.agent,
            if r.accepted { "yes" } else { "no" },
            r.failure_mode.map_or("-".to_owned(), |m| m.to_string()),
            r.messages_delivered,
            r.susceptible
                .map_or("n/a", |s| if s { "yes" } else { "no" }),
            if flags.is_empty() {
                "-".to_owned()
            } else {
                flags.join(",")
            },
        );
    }
    println!("\nsandbox: {}", episode.sandbox().backend());
    Ok(())
}
