//! Runs the plug-in's agent under its attacker on one task folder:
//!
//! ```sh
//! cargo run -p traparena-example-plugin -- examples/tasks/clamp_overt
//! ```

// This example prints, as a program does.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use traparena::{Episode, Task};
use traparena_example_plugin::{GreenLight, Surveyor};

#[tokio::main]
async fn main() -> Result<(), traparena::Error> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "examples/tasks/clamp_overt".into());
    let task = Task::load(&dir)?;
    let episode = Episode::builder(&task).budget(20).build()?;
    for w in episode.sandbox().warnings() {
        eprintln!("warning: {w}");
    }
    let record = episode.run(&mut Surveyor, Some(&mut GreenLight)).await?;
    for step in &record.trajectory {
        let action = step.action.as_ref().map_or("(unreadable)", |a| a.name());
        println!("step {:>2}: {action}", step.index);
        if let Some(m) = &step.message {
            println!("         collaborator: {}", m.text);
        }
    }
    println!(
        "accepted: {}, failure mode: {}, susceptible: {}",
        record.accepted,
        record.failure_mode.map_or("none".into(), |m| m.to_string()),
        record.susceptible.map_or("n/a".into(), |s| s.to_string())
    );
    Ok(())
}
