#!/usr/bin/env python3
"""The resolved-pins check: builds a seeded random sample of the bundled SWE-bench environments
with `traparena import setup --env` (resolved as of the bundle's date, from PyPI: this needs the
network, so it is a CI step, not a test) and compares what each holds with SWE-bench's own
specification, read from the pinned swebench package: every package SWE-bench pins must be
installed at its pinned version, unless an overlay entry of that key replaces it with a note.

Usage: resolved-pins.py TRAPARENA SWEBENCH_PACKAGE_DIR VENV_CACHE [SAMPLE] [SEED]
Keys whose interpreter this machine lacks (Python 3.5) are passed over, saying so; the sample is
drawn until SAMPLE environments were built. Prints one line per key; exits 1 on a difference.
"""
import importlib.util
import json
import random
import re
import subprocess
import sys
from pathlib import Path

ENVS = Path(__file__).resolve().parent.parent / "crates/traparena-import/envs"


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def swebench_pins(specs_file, repo, version):
    spec = importlib.util.spec_from_file_location("swebench_specs", specs_file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sw = mod.MAP_REPO_VERSION_TO_SPECS_PY.get(repo, {}).get(version, {})
    reqs = list(sw.get("pip_packages", []))
    listed = sw.get("packages", "")
    if listed and not listed.endswith((".txt", ".yml")):
        reqs += [p.strip("'\"") for p in listed.split()]
    pins = {}
    for r in reqs:
        m = re.match(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?==([^;\s]+)$", r.strip())
        if m:
            pins[norm(m.group(1))] = m.group(3)
    return pins


def replaced(overlay, repo, version):
    """Packages an overlay entry of this key replaces, with a note (names normalised)."""
    ov = overlay.get(repo, {}).get(version, {})
    if not ov.get("note"):
        return set()
    return {norm(re.split(r"[=<>!~\[;]", p)[0]) for p in ov.get("extra_packages", [])}


def main():
    traparena, package, cache = sys.argv[1:4]
    sample = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 43
    specs_file = Path(package) / "swebench/harness/constants/python.py"
    bundle = json.loads((ENVS / "swebench.json").read_text())
    overlay = json.loads((ENVS / "overlay.json").read_text())
    keys = sorted(
        (repo, v)
        for repo, versions in bundle["repos"].items()
        for v, e in versions.items()
        if v != "*" and not e.get("tree_requirements") and "tree_extras" not in e
    )
    random.Random(seed).shuffle(keys)
    print(f"resolved-pins: seed {seed}, {sample} of {len(keys)} environments that read no tree, "
          f"resolved as of {bundle.get('resolved_as_of')}")
    built, bad = 0, 0
    for repo, v in keys:
        if built == sample:
            break
        key = f"{repo}@{v}"
        run = subprocess.run(
            [traparena, "import", "setup", "--env", key, "--venv-cache", cache],
            capture_output=True, text=True)
        if run.returncode != 0:
            if "no Python" in run.stderr or "python " + bundle["repos"][repo][v]["python"] in run.stderr:
                print(f"  {key}: passed over: {run.stderr.strip().splitlines()[-1][:200]}")
                continue
            print(f"  {key}: FAILED to build: {run.stderr.strip()[-600:]}")
            bad += 1
            built += 1
            continue
        venv = run.stdout.strip().rsplit("(", 1)[-1].rstrip(")")
        listed = subprocess.run(
            [f"{venv}/bin/python", "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
            capture_output=True, text=True, check=True)
        installed = {norm(p["name"]): p["version"] for p in json.loads(listed.stdout)}
        pins = swebench_pins(specs_file, repo, v)
        skip = replaced(overlay, repo, v)
        differ = [f"{n} {installed.get(n, 'missing')} (SWE-bench pins {w})"
                  for n, w in sorted(pins.items()) if n not in skip and installed.get(n) != w]
        unpinned = len([n for n in installed if n not in pins and n not in ("pip", "setuptools", "wheel")])
        same = len(pins) - len(differ) - len(skip & set(pins))
        state = "DIFFERS: " + "; ".join(differ) if differ else "as pinned"
        print(f"  {key}: {same} of {len(pins)} SWE-bench pins installed as pinned "
              f"({len(skip & set(pins))} replaced by a noted overlay entry), {unpinned} unpinned "
              f"resolved as of the date: {state}")
        bad += bool(differ)
        built += 1
    print(f"resolved-pins: {built} environments built, {bad} differ from SWE-bench's pins")
    sys.exit(1 if bad or built < sample else 0)


if __name__ == "__main__":
    main()
