#!/usr/bin/env python3
"""Makes SWE-bench instances against release sdists, for repositories too large to clone.

django, matplotlib and scikit-learn ship their test suites in their PyPI sdists. This script puts
each sdist's tree into one git repository as its own commit (a fixed author and date, so the
commit id is the same on every machine for the same sdist), then keeps the records whose
`patch` and `test_patch` both apply cleanly (`git apply --check`) to one of those trees, with
`base_commit` set to that tree's commit and `version` to the release's major.minor. The oldest
release that takes both patches is chosen: SWE-bench's instances sit on the development branch
before a release, so the oldest release that still has the code is the nearest one. With
`--from X.Y`, releases older than X.Y are chosen only when no newer one takes the patches (a
data set whose versions start at X.Y: SWE-bench Verified's django instances are 3.0 to 5.0, and
SWE-bench's environment for django 2.2 wants Python 3.5).

Usage:
  sdist_instances.py [--from X.Y] RECORDS.jsonl REPO OUT.jsonl SDIST.tar.gz...

RECORDS.jsonl: SWE-bench records (SWE-bench's field names; `golden_patch` is read as `patch`).
REPO: the git repository to create or extend. OUT.jsonl: the records that apply.
Prints one line per sdist (how many records apply to it) and the total.

How far this stands in for a real clone: the tree is the release, not the base commit. Code the
instance does not touch may differ from the base commit (later fixes, removed features), so a
PASS_TO_PASS test may fail or be missing here, and the problem statement may describe code
that has since moved; the importer re-derives PASS_TO_PASS from the runs, and validation
rejects an instance whose FAIL_TO_PASS tests do not fail before and pass after the reference.
"""
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

FIXED = {
    "GIT_AUTHOR_NAME": "sdist",
    "GIT_AUTHOR_EMAIL": "sdist@localhost",
    "GIT_COMMITTER_NAME": "sdist",
    "GIT_COMMITTER_EMAIL": "sdist@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}


def git(*args, cwd=None, env=None, input=None):
    out = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **FIXED, **(env or {})},
        input=input,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout.strip()


def version_of(sdist):
    # A post-release keeps its release's version (scikit-learn-0.22.2.post1.tar.gz is 0.22).
    m = re.search(r"-(\d+)\.(\d+)(?:\.\d+)*(?:\.post\d+)?\.tar\.gz$", sdist.name)
    if not m:
        sys.exit(f"{sdist}: cannot read a version from the file name")
    return tuple(int(x) for x in m.groups())


def extract(sdist, into):
    with tarfile.open(sdist) as t:
        t.extractall(into, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(into)
    (top,) = [p for p in Path(into).iterdir()]
    return top


def commit_tree(repo, tree_dir, message):
    """The commit of `tree_dir` as one root commit of `repo`."""
    with tempfile.TemporaryDirectory() as idx:
        env = {"GIT_INDEX_FILE": os.path.join(idx, "index"), "GIT_DIR": str(repo / ".git")}
        git("--work-tree", str(tree_dir), "add", "-A", "-f", ".", cwd=tree_dir, env=env)
        tree = git("write-tree", cwd=tree_dir, env=env)
        return git("commit-tree", tree, "-m", message, cwd=tree_dir, env=env)


def applies(tree_dir, patch):
    with tempfile.NamedTemporaryFile("w", suffix=".diff", delete=False) as f:
        f.write(patch)
    try:
        r = subprocess.run(
            ["git", "apply", "--check", f.name],
            cwd=tree_dir,
            env={**os.environ, "GIT_CEILING_DIRECTORIES": str(Path(tree_dir).parent)},
            capture_output=True,
        )
        return r.returncode == 0
    finally:
        os.unlink(f.name)


def main():
    args = sys.argv[1:]
    start = (0, 0)
    if args[:1] == ["--from"]:
        start = tuple(int(x) for x in args[1].split("."))
        args = args[2:]
    if len(args) < 4:
        sys.exit(__doc__)
    records = [json.loads(l) for l in open(args[0]) if l.strip()]
    repo, out_path = Path(args[1]), Path(args[2])
    # Releases from `start` on, oldest first, then the older ones, newest first.
    by_version = sorted((Path(p) for p in args[3:]), key=version_of)
    sdists = [s for s in by_version if version_of(s)[:2] >= start] + [
        s for s in reversed(by_version) if version_of(s)[:2] < start
    ]
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        git("init", "-q", cwd=repo)
    chosen = {}
    with tempfile.TemporaryDirectory() as tmp:
        for sdist in sdists:
            major, minor = version_of(sdist)[:2]
            top = extract(sdist, Path(tmp) / sdist.name)
            commit = commit_tree(repo, top, f"{sdist.name}, as released on PyPI")
            git("update-ref", f"refs/tags/sdist/{sdist.name[:-len('.tar.gz')]}", commit, cwd=repo)
            n = 0
            for r in records:
                if r["instance_id"] in chosen:
                    continue
                patch = r.get("patch") or r.get("golden_patch", "")
                if applies(top, patch) and applies(top, r["test_patch"]):
                    chosen[r["instance_id"]] = dict(
                        r, base_commit=commit, version=f"{major}.{minor}", sdist=sdist.name
                    )
                    n += 1
            print(f"{sdist.name}: {n} records apply")
    with open(out_path, "w") as f:
        for r in records:
            if r["instance_id"] in chosen:
                f.write(json.dumps(chosen[r["instance_id"]]) + "\n")
    print(f"{len(chosen)} of {len(records)} records apply to one of {len(sdists)} sdists")


if __name__ == "__main__":
    main()
