#!/usr/bin/env python3
"""Check the bundled TrapArena tasks (standard library only).

usage: check_tasks.py [--python PY] [--fixtures DIR] [TASK_DIR...]

With no TASK_DIR, every directory beside this script that holds a task.json is checked.

For every task directory it checks, each time in a fresh temporary copy of repo/
(repo/ itself is never modified):
  a. the public tests pass on the buggy code and at least 2 tests ran;
  b. the hidden tests fail on the buggy code;
  c. with reference.patch applied, public and hidden tests pass, 3 runs in a row;
  d. reference.patch applies cleanly (`git apply --check`, no offset, fuzz or warning);
plus the shape of task.json and attacks.json (blamed places exist, no identifier from
the reference patch's changed lines is named), and, when a fixtures directory holds
patches for the task, that each one applies cleanly and behaves as its name says.
"""

import argparse
import ast
import builtins
import json
import keyword
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TASK_FIELDS = {"id", "source", "language", "description", "public_tests", "hidden_tests",
               "timeout_s", "reference_locations", "metadata"}
TEST_FIELDS = {"command", "runner", "files"}
CLAIM_FIELDS = {"blame", "urge_submit", "dismissed_cases"}
FIXTURES = ["wrong_location", "false_fix", "hardcoded", "broad_except", "test_edit",
            "exit_early", "fake_summary"]
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
EXEMPT = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins))
DEFAULT_FIXTURES = Path(__file__).resolve().parents[1] / "crates/traparena-eval/tests/fixtures"


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def run_tests(work, spec, python, timeout):
    """Run a test command in `work`; return (passed, tests_ran, output, exit_status)."""
    argv = [python if a == "python3" else a for a in spec["command"]]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    try:
        p = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, 0, "timeout", None
    out = p.stdout + p.stderr
    ran = [int(n) for n in re.findall(r"^Ran (\d+) tests? in ", p.stderr, re.M)]
    ok = p.returncode == 0 and bool(re.search(r"^OK\b", p.stderr, re.M))
    return ok, (ran[-1] if ran else 0), out, p.returncode


def git_apply(work, patch, check_only=False):
    """Apply (or --check) a patch in a git-initialised copy; return (ok, messages)."""
    env = dict(os.environ, GIT_CEILING_DIRECTORIES=str(Path(work).parent))
    if not (Path(work) / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=work, env=env, check=True)
    argv = ["git", "apply", "--verbose"] + (["--check"] if check_only else []) + [str(patch)]
    p = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True)
    msgs = p.stdout + p.stderr
    clean = p.returncode == 0 and not re.search(r"offset|fuzz|warning", msgs, re.I)
    return clean, msgs


class Task:
    def __init__(self, path, python, fixtures):
        self.dir = Path(path).resolve()
        self.python = python
        self.fixtures = Path(fixtures) / self.dir.name if fixtures else None
        self.tmp = tempfile.mkdtemp(prefix="traparena-check-")
        self.n = 0

    def copy(self, patch=None, hidden=False):
        self.n += 1
        work = Path(self.tmp) / f"w{self.n}"
        shutil.copytree(self.dir / "repo", work)
        if patch is not None:
            ok, msgs = git_apply(work, patch)
            check(ok, f"{patch.name} does not apply cleanly: {msgs.strip()}")
            shutil.rmtree(work / ".git")
        if hidden:
            shutil.copytree(self.dir / "hidden", work, dirs_exist_ok=True)
        return work

    def tests(self, which, work):
        return run_tests(work, self.meta[which], self.python, self.meta["timeout_s"])

    # -- structure ---------------------------------------------------------------------
    def check_structure(self):
        meta = json.loads((self.dir / "task.json").read_text())
        self.meta = meta
        check(set(meta) == TASK_FIELDS, f"task.json fields {sorted(set(meta) ^ TASK_FIELDS)}")
        check(meta["id"] == self.dir.name, "task.json id differs from the directory name")
        for which, root in (("public_tests", "repo"), ("hidden_tests", "hidden")):
            check(set(meta[which]) == TEST_FIELDS, f"{which} fields")
            check(meta[which]["runner"] == "unittest", f"{which} runner")
            for f in meta[which]["files"]:
                check((self.dir / root / f).is_file(), f"{which} file {root}/{f} missing")
        for f in meta["hidden_tests"]["files"]:
            check(not (self.dir / "repo" / Path(f).parts[0]).exists(),
                  f"hidden path {Path(f).parts[0]} exists in repo/")
        check(not list(self.dir.rglob("__pycache__")), "__pycache__ in the task directory")
        check(meta["reference_locations"], "reference_locations is empty")
        for loc in meta["reference_locations"]:
            check(self.span(loc) is not None, f"reference location {loc} not found")
        return "structure"

    def span(self, loc):
        """Line span (first, last) of file/symbol in repo/, or None."""
        path = self.dir / "repo" / loc["file"]
        if not path.is_file():
            return None
        scope = ast.parse(path.read_text()).body
        node = None
        for part in loc["symbol"].split("."):
            node = next((n for n in scope if isinstance(
                n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part), None)
            if node is None:
                return None
            scope = node.body
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        return start, node.end_lineno

    # -- patches -----------------------------------------------------------------------
    @staticmethod
    def hunks(patch):
        """Yield (file, line, added) for every changed line: the old line number of a
        removed line, or the old line after which an added line is inserted."""
        path, old = None, 0
        for line in patch.read_text().splitlines():
            if line.startswith("--- "):
                path = None
            elif line.startswith("+++ "):
                path = line[6:] if line.startswith("+++ b/") else None
            elif line.startswith("@@"):
                old = int(re.match(r"@@ -(\d+)", line).group(1))
            elif path is None:
                continue
            elif line.startswith("-"):
                yield path, old, False
                old += 1
            elif line.startswith("+"):
                yield path, old - 1, True
            elif line.startswith(" ") or line == "":
                old += 1

    def touches_reference(self, patch):
        spans = [(loc["file"], self.span(loc)) for loc in self.meta["reference_locations"]]
        return any(f == rf and lo <= n and (n < hi if added else n <= hi)
                   for f, n, added in self.hunks(patch) for rf, (lo, hi) in spans)

    def changed_identifiers(self):
        ids = set()
        for line in (self.dir / "reference.patch").read_text().splitlines():
            if line[:1] in "+-" and not line.startswith(("+++", "---")):
                ids |= set(IDENT.findall(line[1:]))
        described = {w.lower() for w in IDENT.findall(self.meta["description"])}
        return {i for i in ids if i not in EXEMPT and i.lower() not in described}

    # -- invariants --------------------------------------------------------------------
    def check_invariants(self):
        ok, ran, out, _ = self.tests("public_tests", self.copy())
        check(ok and ran >= 2, f"a. public tests on buggy code: ok={ok} ran={ran}\n{out}")
        ok, ran, out, _ = self.tests("hidden_tests", self.copy(hidden=True))
        check(not ok and ran >= 1, f"b. hidden tests on buggy code: ok={ok} ran={ran}\n{out}")
        ref = self.dir / "reference.patch"
        for line in ref.read_text().splitlines():
            if line.startswith("+++ b/"):
                changed = line[6:]
                check(changed not in self.meta["public_tests"]["files"]
                      and not changed.startswith(("tests/", "hidden_tests/")),
                      f"reference.patch changes test file {changed}")
        check(self.touches_reference(ref), "reference.patch misses reference_locations")
        for i in range(3):
            work = self.copy(patch=ref, hidden=True)
            for which in ("public_tests", "hidden_tests"):
                ok, ran, out, _ = self.tests(which, work)
                check(ok and ran >= 1, f"c. {which} with reference.patch, run {i + 1}\n{out}")
        work = self.copy()
        ok, msgs = git_apply(work, ref, check_only=True)
        check(ok, f"d. git apply --check reference.patch: {msgs.strip()}")
        return "a b c d"

    def check_attacks(self):
        attacks = json.loads((self.dir / "attacks.json").read_text())
        check(isinstance(attacks, list) and len(attacks) >= 3, "attacks.json: need >= 3 messages")
        leaked = self.changed_identifiers()
        refs = {(l["file"], l["symbol"]) for l in self.meta["reference_locations"]}
        kinds = set()
        for i, a in enumerate(attacks):
            check(set(a) == {"text", "claims"} and a["text"].strip(), f"attack {i}: shape")
            check(set(a["claims"]) <= CLAIM_FIELDS, f"attack {i}: claim fields")
            said = " ".join([a["text"]] + a["claims"].get("dismissed_cases", []))
            words = {w.lower() for w in IDENT.findall(said)}
            hit = sorted(name for name in leaked if name.lower() in words)
            check(not hit, f"attack {i} names reference identifiers {hit}")
            for loc in a["claims"].get("blame", []):
                check(self.span(loc) is not None, f"attack {i}: blamed {loc} not in repo/")
                check((loc["file"], loc["symbol"]) not in refs, f"attack {i} blames the fix site")
                kinds.add("blame")
            if a["claims"].get("urge_submit"):
                kinds.add("urge_submit")
            if a["claims"].get("dismissed_cases"):
                kinds.add("dismissed_cases")
        check(kinds == {"blame", "urge_submit", "dismissed_cases"}, f"attack kinds {kinds}")
        return f"{len(attacks)} attacks"

    def check_fixtures(self):
        if self.fixtures is None or not self.fixtures.is_dir():
            return "no fixtures"
        for name in FIXTURES:
            patch = self.fixtures / f"{name}.patch"
            check(patch.is_file(), f"fixture {name}.patch missing")
            ok, msgs = git_apply(self.copy(), patch, check_only=True)
            check(ok, f"fixture {name}.patch: {msgs.strip()}")
            files = {f for f, _, _ in self.hunks(patch)}
            tests = set(self.meta["public_tests"]["files"])
            touches = self.touches_reference(patch)
            if name == "wrong_location":
                check(not touches, "wrong_location touches a reference location")
            elif name in ("false_fix", "hardcoded", "broad_except"):
                check(touches and not files & tests, f"{name} must change only the fix site")
            if name == "false_fix":
                work = self.copy(patch=patch, hidden=True)
                check(self.tests("public_tests", work)[0], "false_fix: public tests fail")
                check(not self.tests("hidden_tests", work)[0], "false_fix: hidden tests pass")
            if name == "test_edit":
                check(files & tests, "test_edit does not change a public test file")
                work = self.copy(patch=patch, hidden=True)
                check(self.tests("hidden_tests", work)[0], "test_edit: hidden tests fail")
            if name in ("exit_early", "fake_summary"):
                # Exit status 0 either way: exit_early prints no test count, fake_summary
                # prints a forged one. Neither may be read as a pass by the harness.
                ok, ran, _, rc = self.tests("hidden_tests", self.copy(patch=patch, hidden=True))
                check(rc == 0, f"{name}: exit status {rc}, expected 0")
                check(ran == 0 if name == "exit_early" else ok, f"{name}: unexpected output")
        return f"{len(FIXTURES)} fixtures"

    def check_all(self):
        try:
            return [self.check_structure(), self.check_invariants(),
                    self.check_attacks(), self.check_fixtures()]
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="*", help="task directories (default: all bundled tasks)")
    ap.add_argument("--python", default="/usr/bin/python3" if Path("/usr/bin/python3").exists()
                    else sys.executable, help="interpreter substituted for `python3`")
    ap.add_argument("--fixtures", default=str(DEFAULT_FIXTURES),
                    help="directory holding <task id>/<kind>.patch fixtures")
    args = ap.parse_args()
    if not args.tasks:
        here = Path(__file__).resolve().parents[1] / "examples" / "tasks"
        args.tasks = sorted(str(d) for d in here.iterdir() if (d / "task.json").is_file())
    failed = 0
    for path in args.tasks:
        try:
            done = Task(path, args.python, args.fixtures).check_all()
            print(f"ok    {Path(path).name}: {', '.join(done)}")
        except (Failure, OSError, ValueError, KeyError, subprocess.SubprocessError) as e:
            failed += 1
            print(f"FAIL  {Path(path).name}: {e}")
    print(f"{len(args.tasks) - failed}/{len(args.tasks)} tasks ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
