//! `traparena merge`: joins the results folders of shards.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use traparena_results::{
    EPISODES_FILE, EpisodeKey, MANIFEST_FILE, Manifest, NOTES_DIR, ResultLine, SPEC_FILE,
    TRAJECTORIES_FILE, TrajectoryLine, read_lines, write_atomic, write_lines,
};

use crate::error::RunError;
use traparena_task::output::{Output, check_folder};

fn err(path: &Path, message: String) -> RunError {
    RunError::Results {
        path: path.to_owned(),
        message,
    }
}

/// Joins shard folders into `out` (which must not exist or be empty). Refuses shards of
/// different experiments, an episode present in two shards, and notes that disagree. Returns
/// the number of episodes merged.
pub fn merge_results(shards: &[PathBuf], out: &Path) -> Result<usize, RunError> {
    if shards.is_empty() {
        return Err(err(out, "no shard folder given".into()));
    }
    // Merged results are written into a new folder only: a merge is never redone in place.
    check_folder(out, Output::MergedResults, |_| false)?;
    let mut merged = Merged::default();
    for shard in shards {
        merged.add_manifest(shard)?;
        merged.add_lines(shard)?;
        merged.add_notes(shard)?;
    }
    merged.write(out)
}

/// What the shards read so far hold together.
#[derive(Default)]
struct Merged {
    /// The first shard, its manifest (with the earliest creation time) and its spec.
    manifest: Option<(PathBuf, Manifest, Vec<u8>)>,
    episodes: BTreeMap<EpisodeKey, (PathBuf, ResultLine)>,
    trajectories: BTreeMap<EpisodeKey, TrajectoryLine>,
    /// Each notes file by its path under the shard: the shard it was first read from, and its
    /// bytes.
    notes: BTreeMap<PathBuf, (PathBuf, Vec<u8>)>,
}

impl Merged {
    /// Reads `shard`'s manifest: the first one read, or one of the same experiment.
    fn add_manifest(&mut self, shard: &Path) -> Result<(), RunError> {
        let mpath = shard.join(MANIFEST_FILE);
        if !mpath.is_file() {
            return Err(err(&mpath, "not a results folder: no manifest".into()));
        }
        let m = Manifest::read(&mpath)?;
        match &mut self.manifest {
            None => {
                let spec =
                    std::fs::read(shard.join(SPEC_FILE)).map_err(|e| err(shard, e.to_string()))?;
                self.manifest = Some((shard.to_owned(), m, spec));
            }
            Some((first, m0, _))
                if Manifest {
                    created: None,
                    ..m0.clone()
                } != Manifest {
                    created: None,
                    ..m.clone()
                } =>
            {
                return Err(err(
                    shard,
                    format!("comes from a different experiment than {}", first.display()),
                ));
            }
            Some((_, m0, _)) => {
                if let Some(c) = &m.created
                    && m0.created.as_ref().is_none_or(|c0| c < c0)
                {
                    m0.created = Some(c.clone());
                }
            }
        }
        Ok(())
    }

    /// Reads `shard`'s episode and trajectory lines; an episode in two shards is refused.
    fn add_lines(&mut self, shard: &Path) -> Result<(), RunError> {
        for line in read_lines::<ResultLine>(&shard.join(EPISODES_FILE))?.lines {
            let k = line.key();
            if let Some((other, _)) = self.episodes.get(&k) {
                return Err(err(
                    shard,
                    format!("episode {k} is also in {}", other.display()),
                ));
            }
            self.episodes.insert(k, (shard.to_owned(), line));
        }
        for t in read_lines::<TrajectoryLine>(&shard.join(TRAJECTORIES_FILE))?.lines {
            self.trajectories.insert(t.key.clone(), t);
        }
        Ok(())
    }

    /// Reads `shard`'s notes files; one that disagrees with another shard's is refused.
    fn add_notes(&mut self, shard: &Path) -> Result<(), RunError> {
        let ndir = shard.join(NOTES_DIR);
        if !ndir.is_dir() {
            return Ok(());
        }
        let mut stack = vec![ndir];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).map_err(|e| err(&d, e.to_string()))? {
                let p = e.map_err(|e| err(&d, e.to_string()))?.path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                let rel = p
                    .strip_prefix(shard)
                    .expect("under the shard")
                    .to_path_buf();
                let bytes = std::fs::read(&p).map_err(|e| err(&p, e.to_string()))?;
                match self.notes.get(&rel) {
                    Some((other, b)) if *b != bytes => {
                        return Err(err(
                            &p,
                            format!("disagrees with {}", other.join(&rel).display()),
                        ));
                    }
                    Some(_) => {}
                    None => {
                        self.notes.insert(rel, (shard.to_owned(), bytes));
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes the merged folder to `out`; returns the number of episodes.
    fn write(self, out: &Path) -> Result<usize, RunError> {
        let (_, m, spec) = self.manifest.expect("at least one shard");
        std::fs::create_dir_all(out).map_err(|e| err(out, e.to_string()))?;
        write_atomic(&out.join(SPEC_FILE), &spec)?;
        m.write(&out.join(MANIFEST_FILE))?;
        // Every line is written at the current format, whatever format its shard had.
        write_lines(
            &out.join(TRAJECTORIES_FILE),
            self.episodes
                .keys()
                .filter_map(|k| self.trajectories.get(k)),
        )?;
        write_lines(
            &out.join(EPISODES_FILE),
            self.episodes.values().map(|(_, l)| l),
        )?;
        for (rel, (_, bytes)) in self.notes {
            let p = out.join(rel);
            std::fs::create_dir_all(p.parent().expect("has a parent"))
                .map_err(|e| err(&p, e.to_string()))?;
            write_atomic(&p, &bytes)?;
        }
        Ok(self.episodes.len())
    }
}
