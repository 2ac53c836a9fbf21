#!/usr/bin/env python3
"""Writes swebench.json, the bundled SWE-bench environments, from two sources:

1. SWE-bench's per-version specs, read from the pinned `swebench` package on PyPI (version
   4.1.0, the last release that ships them as `swebench/harness/constants/python.py`; from
   https://github.com/SWE-bench/SWE-bench, MIT licence): interpreter version, pip packages,
   pre_install edits and install step per repository and version. `.ci/swebench-specs.sh`
   fetches it, and `crates/traparena-import/tests/conformance.rs` checks that this file is what
   the generator makes of it, and that every version's interpreter and pinned packages are
   SWE-bench's unless an overlay entry with a note says otherwise;
2. overlay.json, what the base commits need beyond those specs (measured by validating the
   instances on real clones): packages that `pip install -e .` of a base commit pulls in but the
   specs omit, the packages of repositories whose specs name only a requirements file, the
   source folders, and the install step of repositories that generate files when installed
   (pytest's `_version.py`, written by setuptools_scm). An overlay entry `*` applies to every
   version of its repository; `note` fields are for readers.

Usage: generate.py SWE_BENCH_PYTHON_SPECS.py [SOURCE] > swebench.json
(SOURCE names where the specs came from: "swebench 4.1.0 (PyPI)".)

SWE-bench's install step (`pip install -e .[test]`) is where many repositories get pytest and
their own dependencies. It is kept without installing the repository into the shared
environment:
- `tree_requirements`: SWE-bench's requirements files of the tree (its MAP_REPO_TO_REQS_PATHS,
  the first found) for versions whose `packages` is `requirements.txt`;
- `tree_extras`: the package's declared requirements with the extras the install step names
  (`.[test]` → ["test"], `.` → []), installed from the tree and the distribution removed again;
- `tree_edits`: the `sed -i 's/A/B/' FILE` lines of `pre_install` that change dependencies
  (files setup.py, setup.cfg, pyproject.toml, requirements). Dropped, and why: apt-get, locale
  and download lines (system packages: TrapArena runs on the host, see docs/tasks.md), and the
  `tox.ini` edit adding `-rA` (the runner profile reads outcomes through its own shim). A
  `grep -q A F && sed s/A/A,X/ F || sed s/B/B,X/ F` line becomes two edits: the quoted bare
  name first (`'B'` → `'B,X'`, only present when A is not), then A.
Repositories whose overlay entries were measured on real clones before the install step was
kept (flask, pylint, pytest: OVERLAY_ONLY) keep their overlay packages and read no tree, where
those packages can run the tests (pytest is among them, or is the tree); their other versions
read the tree as SWE-bench does (pylint 2.8, 2.9, 2.11, 2.16, 2.17, 3.1-4.0 and flask 2.1, 2.2,
3.0, 3.1 had environments without pytest until they did). flask's and pylint's declared
requirements are read from the tree at every version (TREE_DECLARED), as `pip install -e .`
brings them.
psf/requests was one of them until its 2.26 and 2.27 instances failed for want of urllib3: since
requests 2.16 its dependencies are no longer vendored, and SWE-bench's `pip install .` brings
them, so its environments read the tree's declared requirements as the others do.
`environment.yml` files (xarray, matplotlib >= 3.5) are conda files and are not read: their
versions' pip_packages carry the dependencies.

Repositories that compile extension modules from the checkout (astropy, matplotlib,
scikit-learn) get a per-task install step that builds them in place, as SWE-bench's
`pip install -e .` does (`python setup.py build_ext --inplace`, with the build requirements as
packages of the environment: cython, numpy, setuptools, from the spec or the overlay), and
`build_inputs`, the files whose contents key the build cache. Their declared requirements are
not read from the tree (that would compile the extensions while building the environment);
the specs' pip_packages and the overlay carry them.

`profile` names how the repository's tests run, read from `test_cmd`: `django`
(`./tests/runtests.py`), `sympy` (`bin/test`), `tox-current-env` (sphinx), else `pytest`.
Interpreter versions no machine here has (3.5 for django <= 2.2) are kept: the importer skips
those instances with that reason.
"""
import importlib.util
import json
import re
import sys
from pathlib import Path

COMPILED = {"astropy/astropy", "matplotlib/matplotlib", "scikit-learn/scikit-learn"}
SKIP = {"swe-bench/humaneval"}
OVERLAY_ONLY = {"pallets/flask", "pylint-dev/pylint", "pytest-dev/pytest"}
# Of those, the ones whose declared requirements are read from the tree all the same.
TREE_DECLARED = {"pallets/flask", "pylint-dev/pylint"}
BUILD_STEP = ["python", "setup.py", "build_ext", "--inplace"]
BUILD_INPUTS = [
    ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".pyx", ".pxd", ".pxi", ".f", ".tp",
    "setup.py", "setup.cfg", "pyproject.toml", "setup_package.py", "setupext.py", "mplsetup.cfg",
]
DEP_FILES = ("setup.py", "setup.cfg", "pyproject.toml", "requirements")
SED = re.compile(r"""^sed -i (['"])s/(.*?)/(.*?)/\1 (\S+)$""")
COND = re.compile(r"""^grep -q '([^']*)' (\S+) && (sed .*?) \|\| (sed .*)$""")


def profile(test_cmd):
    if "runtests.py" in test_cmd:
        return "django"
    if "bin/test" in test_cmd:
        return "sympy"
    if "tox --current-env" in test_cmd:
        return "tox-current-env"
    return "pytest"


def unescape(t):
    return re.sub(r"\\(.)", r"\1", t)


def sed_edit(line):
    m = SED.match(line.strip())
    if not m or not m.group(4).startswith(DEP_FILES):
        return None
    return {"file": m.group(4), "find": unescape(m.group(2)), "replace": unescape(m.group(3))}


def tree_edits(pre_install):
    edits = []
    for line in pre_install:
        c = COND.match(line.strip())
        if c:
            first, other = sed_edit(c.group(3)), sed_edit(c.group(4))
            if first and other:
                for q in ("'", '"'):
                    edits.append({"file": other["file"], "find": q + other["find"] + q,
                                  "replace": q + other["replace"] + q})
                edits.append(first)
            continue
        e = sed_edit(line)
        if e:
            edits.append(e)
    return edits


def extras(install):
    """The extras of an install step that installs the tree (`pip install -e .[test]`)."""
    m = re.search(r"""pip install .*?(?:-e )?['"]?\.(?:\[([\w,]+)\])?['"]?(?:\s|$)""", install)
    if m:
        return [x for x in (m.group(1) or "").split(",") if x]
    if "setup.py install" in install or "setup.py develop" in install:
        return []
    return None


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


def tree_entry(repo, sw, reqs_paths, packages):
    """What an entry reads from the tree, or the build step of a compiled repository, for an
    environment of `packages`."""
    out = {}
    runs_tests = repo == "pytest-dev/pytest" or any(name(p) == "pytest" for p in packages)
    if not sw or (repo in OVERLAY_ONLY and runs_tests):
        # The declared requirements still come from the tree, as the install step brings them
        # (pylint-dev__pylint-4661's base still requires appdirs, which its version's measured
        # packages replaced by platformdirs); pytest's tree is the runner itself.
        ex = extras(sw.get("install", "")) if sw and repo in TREE_DECLARED else None
        if ex is not None:
            out["tree_extras"] = ex
        return out
    if repo in COMPILED:
        out["install"] = BUILD_STEP
        out["install_env"] = {"SETUPTOOLS_SCM_PRETEND_VERSION": "{version}"}
        out["build_inputs"] = BUILD_INPUTS
        return out
    if sw.get("packages") == "requirements.txt" and repo in reqs_paths:
        out["tree_requirements"] = reqs_paths[repo]
    ex = extras(sw.get("install", ""))
    if ex is not None:
        out["tree_extras"] = ex
    edits = tree_edits(sw.get("pre_install", []))
    if edits and (out.get("tree_extras") is not None or out.get("tree_requirements")):
        out["tree_edits"] = edits
    return out


# The instant every bundled environment is resolved as of: PyPI as it was when SWE-bench
# Verified was published (2024-08-13), after its instances' PASS_TO_PASS lists had been checked
# in SWE-bench's own containerised harness (June to August 2024). Requirements SWE-bench leaves
# unpinned resolve, in its images, to what PyPI held when the images were built; resolving them
# to the releases of that summer, not of the day of the import, keeps environments from
# drifting with every new release. Every pin of the specs and the overlay existed by then.
RESOLVED_AS_OF = "2024-08-13T00:00:00Z"


def main():
    specs_path = Path(sys.argv[1])
    source = sys.argv[2] if len(sys.argv) > 2 else "unknown"
    spec = importlib.util.spec_from_file_location("swebench_specs", specs_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    specs = mod.MAP_REPO_VERSION_TO_SPECS_PY
    reqs_paths = mod.MAP_REPO_TO_REQS_PATHS
    overlay = json.loads((Path(__file__).parent / "overlay.json").read_text())
    repos = {}
    for repo in sorted(specs):
        if repo in SKIP:
            continue
        versions = {}
        extra_versions = overlay.get(repo, {})
        keys = sorted(set(specs[repo]) | set(extra_versions))
        # A `*` entry of the overlay also adds its packages to every version of the repository.
        every = extra_versions.get("*", {})
        for v in keys:
            ov = extra_versions.get(v, {})
            # An overlay `*` without an interpreter only adds to the versions.
            if v == "*" and v not in specs[repo] and "python" not in ov:
                continue
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
            entry.update(tree_entry(repo, sw, reqs_paths, packages))
            if sw.get("test_cmd") and profile(sw["test_cmd"]) != "pytest":
                entry["profile"] = profile(sw["test_cmd"])
            for k in ("source_dirs", "install", "install_env", "install_replaces", "tree_skip",
                      "build_inputs", "profile"):
                if k in ov:
                    entry[k] = ov[k]
                elif k in ("tree_skip", "profile") and k in every and v != "*":
                    entry[k] = every[k]
            versions[v] = entry
        repos[repo] = versions
    json.dump(
        {
            "format": "traparena-envs/1",
            "source": f"SWE-bench harness specs at {source} plus overlay.json",
            "repos": repos,
            "resolved_as_of": RESOLVED_AS_OF,
        },
        sys.stdout,
        indent=1,
        sort_keys=True,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
