"""TrapArena's entry point for sympy's test script: `python tp_sympy.py bin/test ARGS`.

Runs the script as `__main__` (its `sys.argv` and `sys.path[0]` as if it were run directly)
with sympy's own test reporter hooked (`PyTestReporter` of `sympy/testing/runtests.py`, or of
`sympy/utilities/runtests.py` in old versions, hooked when the module is imported), so that
every test's outcome is recorded by the harness, never read from what the tests print. Tests
are named by their bare function name (`test_issue_11617`), as in SWE-bench's records; a name
found in two files keeps the worse outcome. A test file that fails to import, or raises at
module level, is an error under its path.

`sympy.test()` normally runs the tests again in a child process, to enable hash randomisation
with a seed of its own. The harness instead starts this process with a fixed `PYTHONHASHSEED`
(hash randomisation on, the same seed every run, so that runs are reproducible), for which
sympy itself runs the tests in this process; and in case a version would start a child anyway,
the module's `run_in_subprocess_with_hash_randomization` is replaced by one that declines, as
sympy's does when a seed is already set. Only this process's reporter is read.

`-k NAME...` (after the files) limits the run to the tests named exactly: the shim takes the
names out of the arguments and has sympy's test loop keep only functions of those names (sympy's
own `-k` matches substrings, and before sympy 1.6 takes one keyword). A file that defines none of
them is not imported. A name that is no test runs nothing.

The report (counts, each name's outcome, the failed tests with the end of their tracebacks) is
written as one JSON object to a file descriptor the harness opened, only when sympy's reporter
finished a run (`finish`) and the script then ended (returned or called `sys.exit`). Output the
code under test prints, or an early exit, therefore never produces a report.

Keep the syntax of Python 3.6.
"""
import importlib.abc
import json
import os
import runpy
import sys
import traceback

_fd = int(os.environ.pop("TRAPARENA_REPORT_FD", "3"))
try:
    _report = os.dup(_fd)
    os.close(_fd)
    os.set_inheritable(_report, False)
except OSError:
    _report = None

_RANK = {"passed": 0, "xfail": 0, "skipped": 1, "failed": 2, "error": 3}
_MAX_LISTED = 10
_MAX_MESSAGE = 500
_MODULES = ("sympy.testing.runtests", "sympy.utilities.runtests")

_outcomes = {}  # name -> worst outcome
_by_test = {}  # (file, name) -> worst outcome, for the counts
_failures = []
_listed = set()
_state = {"file": None, "test": None, "run": 0, "finished": False}
_only = set()  # the exact test names of `-k NAME...`; empty: every test of the files


def _tail(text):
    data = (text or "").strip().encode("utf-8", "replace")
    if len(data) > _MAX_MESSAGE:
        data = b"..." + data[-(_MAX_MESSAGE - 3):]
    return data.decode("utf-8", "ignore")


def _rel(filename):
    try:
        return os.path.relpath(filename)
    except ValueError:
        return filename


def _trace(exc_info):
    try:
        return "".join(traceback.format_exception(*exc_info))
    except Exception:
        return repr(exc_info[1])


def _record(outcome, exc_info=None, name=None):
    """Records `outcome` for the active test (or `name`; the active file when neither)."""
    name = name or _state["test"] or _state["file"] or "<unknown>"
    key = (_state["file"], name)
    if _RANK[outcome] >= _RANK.get(_by_test.get(key), -1):
        _by_test[key] = outcome
    if _RANK[outcome] >= _RANK.get(_outcomes.get(name), -1):
        _outcomes[name] = outcome
    if exc_info is not None and key not in _listed and len(_failures) < _MAX_LISTED:
        _listed.add(key)
        _failures.append({"name": name, "message": _tail(_trace(exc_info))})


def _entering_test(self, f):
    _state["test"] = getattr(f, "__name__", None) or repr(f)
    _state["run"] += 1


def _test_file(self, filename, *args, **kwargs):
    _state["file"] = _rel(filename)
    _state["test"] = None


def _import_error(self, filename, exc_info):
    _state["file"] = _rel(filename)
    _state["test"] = None
    _record("error", exc_info)


def _start(self, *args, **kwargs):
    _state["finished"] = False


# What each hooked method of the reporter records, before the reporter's own code runs.
_BEFORE = {
    "start": _start,
    "entering_test": _entering_test,
    "test_pass": lambda self, *a, **k: _record("passed"),
    "test_fail": lambda self, exc_info, *a, **k: _record("failed", exc_info),
    "test_exception": lambda self, exc_info, *a, **k: _record("error", exc_info),
    "test_skip": lambda self, *a, **k: _record("skipped"),
    "test_xfail": lambda self, *a, **k: _record("xfail"),
    # An unexpected pass does not fail sympy's run, as a non-strict one does not fail pytest's.
    "test_xpass": lambda self, *a, **k: _record("passed"),
    "import_error": _import_error,
}


def _wrap(cls, name, before, after=None):
    original = getattr(cls, name, None)
    if original is None:
        return

    def hooked(self, *args, **kwargs):
        try:
            before(self, *args, **kwargs)
        except Exception:  # the harness's bookkeeping never breaks the run
            pass
        out = original(self, *args, **kwargs)
        if after is not None:
            after()
        return out

    hooked.__name__ = name
    setattr(cls, name, hooked)


def _take_names(argv):
    """`argv` without its `-k NAME...` groups, and the names."""
    rest, names, i = [], [], 0
    while i < len(argv):
        if argv[i] != "-k":
            rest.append(argv[i])
            i += 1
            continue
        i += 1
        while i < len(argv) and not argv[i].startswith("-"):
            names.append(argv[i])
            i += 1
    return rest, names


def _only_named(tests):
    """Limits `SymPyTests` to the functions named in `_only`: its keyword tuple (which also
    passes over files that define none of them) and an exact `matches`."""
    original = tests.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self._kw = tuple(sorted(_only))

    def matches(self, x):
        return getattr(x, "__name__", None) in _only

    tests.__init__ = init
    tests.matches = matches


def _finished():
    _state["finished"] = True


def _no_subprocess(*args, **kwargs):
    return False


def _patch(module):
    """Hooks the reporter and the test-file loop of a runtests module that defines them."""
    reporter = getattr(module, "PyTestReporter", None)
    if reporter is not None and reporter.__module__ == module.__name__:
        for name, before in _BEFORE.items():
            _wrap(reporter, name, before)
        _wrap(reporter, "finish", lambda self, *a, **k: None, _finished)
    tests = getattr(module, "SymPyTests", None)
    if tests is not None and tests.__module__ == module.__name__:
        _wrap(tests, "test_file", _test_file)
        if _only:
            _only_named(tests)
    spawn = getattr(module, "run_in_subprocess_with_hash_randomization", None)
    if spawn is not None and getattr(spawn, "__module__", None) == module.__name__:
        module.run_in_subprocess_with_hash_randomization = _no_subprocess


class _Loader(importlib.abc.Loader):
    """Loads a module with the loader found for it, then hooks it."""

    def __init__(self, inner):
        self._inner = inner

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        _patch(module)

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds sympy's runtests modules with the other finders and hooks them once loaded."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in _MODULES:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is None:
                continue
            if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = _Loader(spec.loader)
            return spec
        return None


def _write_report():
    global _report
    if _report is None or not _state["finished"]:
        return
    counted = list(_by_test.values())
    data = json.dumps({
        "runner": "sympy",
        "tests_run": _state["run"],
        "failed": counted.count("failed"),
        "errored": counted.count("error"),
        "skipped": counted.count("skipped"),
        "outcomes": _outcomes,
        "failures": _failures,
    })
    os.write(_report, data.encode())
    os.close(_report)
    _report = None


def _exit_status(code):
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write("%s\n" % (code,))
    return 1


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: tp_sympy.py bin/test ARGS...\n")
        return 2
    script = sys.argv[1]
    sys.argv, names = _take_names(sys.argv[1:])
    _only.update(names)
    sys.path[0] = os.path.dirname(os.path.realpath(script))
    sys.meta_path.insert(0, _Finder())
    try:
        runpy.run_path(script, run_name="__main__")
        status = 0
    except SystemExit as e:
        status = _exit_status(e.code)
    sys.stdout.flush()
    sys.stderr.flush()
    _write_report()
    return status


if __name__ == "__main__":
    sys.exit(main())
