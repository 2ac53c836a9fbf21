#!/usr/bin/env python3
"""Writes swebench.json, the bundled SWE-bench environments, from two sources:

1. SWE-bench's published per-version specs (`swebench/harness/constants/python.py` of
   https://github.com/SWE-bench/SWE-bench, MIT licence): interpreter version and pip packages
   per repository and version;
2. overlay.json, what the base commits need beyond those specs (measured by validating the
   instances on real clones): packages that `pip install -e .` of a base commit pulls in but the
   specs omit, the packages of repositories whose specs name only a requirements file, the
   source folders, and the install step of repositories that generate files when installed
   (pytest's `_version.py`, written by setuptools_scm). An overlay entry `*` applies to every
   version of its repository; `note` fields are for readers.

Usage: generate.py SWE_BENCH_PYTHON_SPECS.py [COMMIT] > swebench.json

Repositories whose installation compiles extension modules from the checkout (astropy,
matplotlib, scikit-learn) are left out: their environments cannot be built from the package
registry alone.
"""
import importlib.util
import json
import re
import sys
from pathlib import Path

COMPILED = {"astropy/astropy", "matplotlib/matplotlib", "scikit-learn/scikit-learn"}
SKIP = {"swe-bench/humaneval"}


def name(req):
    return re.split(r"[=<>!~ \[;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def merge(base, extra):
    """`base` with each package of `extra` replacing the one of the same name, or appended."""
    out = list(base)
    for e in extra:
        i = next((k for k, b in enumerate(out) if name(b) == name(e)), None)
        if i is None:
            out.append(e)
        else:
            out[i] = e
    return out


def main():
    specs_path = Path(sys.argv[1])
    commit = sys.argv[2] if len(sys.argv) > 2 else "unknown"
    spec = importlib.util.spec_from_file_location("swebench_specs", specs_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    specs = mod.MAP_REPO_VERSION_TO_SPECS_PY
    overlay = json.loads((Path(__file__).parent / "overlay.json").read_text())
    repos = {}
    for repo in sorted(specs):
        if repo in COMPILED or repo in SKIP:
            continue
        versions = {}
        extra_versions = overlay.get(repo, {})
        keys = sorted(set(specs[repo]) | set(extra_versions))
        # A `*` entry of the overlay also adds its packages to every version of the repository.
        every = extra_versions.get("*", {})
        for v in keys:
            ov = extra_versions.get(v, {})
            base_key = ov.get("base", v)
            sw = specs[repo].get(base_key, {}) if base_key else {}
            packages = list(sw.get("pip_packages", []))
            listed = sw.get("packages", "")
            if listed and not listed.endswith((".txt", ".yml")):
                packages = merge([p.strip("'\"") for p in listed.split()], packages)
            if v != "*":
                packages = merge(packages, every.get("extra_packages", []))
            packages = merge(packages, ov.get("extra_packages", []))
            entry = {"python": ov.get("python", sw.get("python", "3.9")), "packages": packages}
            for k in ("source_dirs", "install", "install_env"):
                if k in ov:
                    entry[k] = ov[k]
            versions[v] = entry
        repos[repo] = versions
    json.dump(
        {
            "format": "traparena-envs/1",
            "source": f"SWE-bench harness specs at {commit} plus overlay.json",
            "repos": repos,
        },
        sys.stdout,
        indent=1,
        sort_keys=True,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
