//! `traparena experiment SPEC --estimate`: the planned episodes and the calls, tokens and
//! cost expected, printed; nothing is run.

use std::path::{Path, PathBuf};

use traparena::runner::ExperimentSpec;
use traparena::runner::estimate::{Estimate, PerEpisode, RoleAverage, estimate, pilot_mismatch};

/// Prints the estimate of `spec` (its folder `spec_dir`) with the averages of the pilot
/// `pilot`, else the spec's `estimate`; the exit status.
pub fn run(spec: &ExperimentSpec, spec_dir: &Path, pilot: Option<&Path>) -> u8 {
    match table(spec, spec_dir, pilot) {
        Ok(_) => 0,
        Err(code) => code,
    }
}

/// Prints the estimate of a study submitted in `shards` shards and `passes` passes: the
/// table of [`run`], then the node-hours at the pilot's pace; the exit status.
pub fn run_for_cluster(
    spec: &ExperimentSpec,
    spec_dir: &Path,
    pilot: Option<&Path>,
    shards: u32,
    passes: u32,
) -> u8 {
    let e = match table(spec, spec_dir, pilot) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let episodes: u64 = e.rows.iter().map(|r| r.episodes).sum();
    let Some(dir) = pilot else {
        println!(
            "Node-hours: unknown: give --estimate-from PILOT_DIR, a pilot run of a few tasks on \
             one node, for its pace."
        );
        return 0;
    };
    match pilot_pace(dir) {
        Ok((n, secs)) => {
            let per = secs / n as f64;
            let node_hours = per * episodes as f64 / 3600.0;
            println!(
                "Node-hours: {node_hours:.2} ({episodes} episodes at the pilot's pace, {per:.2} s \
                 per episode on one node: {n} episodes in {secs:.0} s).\n\
                 Wall time in {shards} shards, each on a node of its own: about {}, in {passes} \
                 pass{} one after another.\n\
                 This assumes every node runs as the pilot's did (its machine, --concurrency and \
                 model servers), and the pilot ran without a pause.",
                duration(node_hours / shards as f64),
                if passes == 1 { "" } else { "es" }
            );
            0
        }
        Err(e) => {
            eprintln!("traparena: --estimate-from: {e}");
            2
        }
    }
}

/// Hours as a reader takes them: seconds below a minute, minutes below an hour.
fn duration(hours: f64) -> String {
    if hours * 60.0 < 1.0 {
        format!("{:.0} s", hours * 3600.0)
    } else if hours < 1.0 {
        format!("{:.0} min", hours * 60.0)
    } else {
        format!("{hours:.1} h")
    }
}

/// Why a pilot's pace cannot be read.
#[derive(Debug, thiserror::Error)]
enum Unpaced {
    /// Its manifest or its results cannot be read (the results crate's error).
    #[error(transparent)]
    Results(#[from] traparena::results::ResultsError),
    /// The manifest has no creation time, or one that is not a timestamp.
    #[error("{}: has no creation time{}: its pace is unknown", .manifest.display(), .why.as_ref().map_or(String::new(), |w| format!(" ({w})")))]
    NoStart {
        /// The manifest.
        manifest: PathBuf,
        /// What is wrong with the one it has.
        why: Option<String>,
    },
    /// The results file's last change cannot be read.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The results file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The pilot finished no episode after it started.
    #[error("{}: holds no episode to time", .0.display())]
    NoEpisode(PathBuf),
}

/// A pilot's pace: its episodes and the seconds from its start (the manifest's `created`) to
/// its last episode (the results file's last change), read through the results crate.
fn pilot_pace(dir: &Path) -> Result<(u64, f64), Unpaced> {
    use traparena::results::{EPISODES_FILE, MANIFEST_FILE, Manifest, ResultLine, read_lines};
    let manifest = dir.join(MANIFEST_FILE);
    let created = Manifest::read(&manifest)?.created;
    let no_start = |why: Option<String>| Unpaced::NoStart {
        manifest: manifest.clone(),
        why,
    };
    let created: jiff::Timestamp = created
        .ok_or_else(|| no_start(None))?
        .parse()
        .map_err(|e: jiff::Error| no_start(Some(e.to_string())))?;
    let episodes = dir.join(EPISODES_FILE);
    let io = |source| Unpaced::Io {
        path: episodes.clone(),
        source,
    };
    let last = std::fs::metadata(&episodes)
        .and_then(|m| m.modified())
        .map_err(io)?;
    let secs = jiff::Timestamp::try_from(last)
        .map_or(0.0, |last| last.duration_since(created).as_secs_f64());
    let n = read_lines::<ResultLine>(&episodes)?.lines.len() as u64;
    if n == 0 || secs <= 0.0 {
        return Err(Unpaced::NoEpisode(dir.to_owned()));
    }
    Ok((n, secs))
}

/// Prints the estimate table; the estimate, or the exit status of a failure.
fn table(spec: &ExperimentSpec, spec_dir: &Path, pilot: Option<&Path>) -> Result<Estimate, u8> {
    let (per, source) = match pilot {
        Some(dir) => match PerEpisode::from_pilot(dir) {
            Ok(p) => (p, format!("the pilot {}", dir.display())),
            Err(e) => {
                eprintln!("traparena: --estimate-from: {e}");
                return Err(2);
            }
        },
        None => match spec.estimate {
            Some(p) => (p, "the spec's `estimate`".to_owned()),
            None => (
                PerEpisode::default(),
                "nothing (give --estimate-from PILOT_DIR or the spec's `estimate`)".to_owned(),
            ),
        },
    };
    if let Some(dir) = pilot {
        match pilot_mismatch(spec, spec_dir, dir) {
            Ok(m) if !m.is_empty() => eprintln!("traparena: warning: --estimate-from: {m}"),
            Ok(_) => {}
            Err(e) => {
                eprintln!("traparena: {e}");
                return Err(2);
            }
        }
    }
    let e = match estimate(spec, spec_dir, &per) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("traparena: {e}");
            return Err(2);
        }
    };
    print!("{}", render(&e, &per, &source));
    Ok(e)
}

fn cost(c: Option<f64>) -> String {
    c.map_or_else(|| "unknown".to_owned(), |c| format!("${c:.4}"))
}

fn role(a: &RoleAverage) -> String {
    format!(
        "{:.1} calls, {:.0} tokens, {}",
        a.calls,
        a.tokens,
        cost(a.cost)
    )
}

/// The estimate as text: one row per target and condition, a total, and the averages used.
fn render(e: &Estimate, per: &PerEpisode, source: &str) -> String {
    let mut rows = vec![[
        "target".to_owned(),
        "condition".to_owned(),
        "episodes".to_owned(),
        "curator steps".to_owned(),
        "model calls".to_owned(),
        "tokens".to_owned(),
        "cost".to_owned(),
    ]];
    for r in &e.rows {
        rows.push([
            r.target.clone(),
            r.condition.clone(),
            r.episodes.to_string(),
            r.curator_steps.to_string(),
            format!("{:.0}", r.calls),
            format!("{:.0}", r.tokens),
            cost(r.cost),
        ]);
    }
    rows.push([
        "total".to_owned(),
        String::new(),
        e.rows.iter().map(|r| r.episodes).sum::<u64>().to_string(),
        e.rows
            .iter()
            .map(|r| r.curator_steps)
            .sum::<u64>()
            .to_string(),
        format!("{:.0}", e.rows.iter().map(|r| r.calls).sum::<f64>()),
        format!("{:.0}", e.rows.iter().map(|r| r.tokens).sum::<f64>()),
        cost(e.rows.iter().map(|r| r.cost).sum::<Option<f64>>()),
    ]);
    let widths: Vec<usize> = (0..7)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::from("Estimate (nothing was run):\n");
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| match i {
                0 | 1 => format!("{c:<w$}"),
                _ => format!("{c:>w$}"),
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out.push_str(&format!(
        "Averages from {source}: target {} per episode; attacker {} per attacked episode; curator {} per step.\n",
        role(&per.target),
        role(&per.attacker),
        role(&per.curator),
    ));
    if !e.forked.is_empty() {
        out.push_str(&format!(
            "Not counted: the fork episodes of {} (planned from the baseline's trajectories once they ran).\n",
            e.forked.join(", ")
        ));
    }
    out
}
