"""TrapArena's entry point for django's test script: `python tp_django.py tests/runtests.py ARGS`.

Runs the script as `__main__` (its `sys.argv` and `sys.path[0]` as if it were run directly)
with unittest's result class hooked, so that every test's outcome is recorded by the harness,
never read from what the tests print. django's runner (DiscoverRunner) runs its suite with
`unittest.TextTestRunner` and result classes that call unittest's own methods, which are the
ones hooked here. Each test is recorded under every name SWE-bench's records use for it:
`test_x (module.Class)` (Python before 3.11), `test_x (module.Class.test_x)` (3.11 on) and, for
a test with a docstring, the docstring's first line (what verbosity 2 prints, and what
SWE-bench's log parser took for the name). A name shared by several tests keeps the worst
outcome.

The report (counts, each name's outcome, the failed tests with the end of their tracebacks) is
written as one JSON object to a file descriptor the harness opened, only when a test run
reached its end and the script then ended (returned or called `sys.exit`). Output the code
under test prints, or an early exit, therefore never produces a report. The elapsed-time figure
of unittest's summary line is fixed at zero so that observations are reproducible.

Runs on Python 3.6 and later (django 3.0 to 3.2 use 3.6): keep the syntax of 3.6.
"""
import json
import os
import runpy
import sys
import traceback
import types
import unittest
import unittest.result
import unittest.runner
import unittest.suite
from unittest.util import strclass

_fd = int(os.environ.pop("TRAPARENA_REPORT_FD", "3"))
try:
    _report = os.dup(_fd)
    os.close(_fd)
    os.set_inheritable(_report, False)
except OSError:
    _report = None

_clock = types.ModuleType("time")
_clock.perf_counter = lambda: 0.0
_clock.time = lambda: 0.0
unittest.runner.time = _clock

# How bad an outcome is: a name shared by several tests, or a test with several subtests, keeps
# the worst.
_RANK = {"passed": 0, "xfail": 0, "skipped": 1, "failed": 2, "error": 3}
_MAX_LISTED = 10
_MAX_MESSAGE = 500

_outcomes = {}  # name -> outcome, under every name of each test
_by_test = {}  # test id -> its worst outcome, for the counts
_started = set()  # ids of the tests started
_failures = []  # [{name, message}], one per test id, at most _MAX_LISTED
_aliases = {}  # the name of a listed failure -> the test's other names
_listed = set()
_state = {"finished": False}


def _tail(text):
    data = (text or "").strip().encode("utf-8", "replace")
    if len(data) > _MAX_MESSAGE:
        data = b"..." + data[-(_MAX_MESSAGE - 3):]
    return data.decode("utf-8", "ignore")


def _names(test):
    """Every name a test goes by in SWE-bench's django records; its id for anything else."""
    test = getattr(test, "test_case", test)  # a subtest is named by its test
    method = getattr(test, "_testMethodName", None)
    if isinstance(test, unittest.TestCase) and method:
        cls = strclass(test.__class__)
        names = ["%s (%s)" % (method, cls), "%s (%s.%s)" % (method, cls, method)]
        try:
            doc = test.shortDescription()
        except Exception:  # a broken docstring still leaves the test its other names
            doc = None
        if doc:
            names.append(doc.strip())
        return names
    # unittest's _ErrorHolder (a failed setUpClass or setUpModule): `setUpClass (module.Class)`.
    return [str(getattr(test, "description", None) or test.id())]


def _key(test):
    test = getattr(test, "test_case", test)
    try:
        return test.id()
    except Exception:
        return repr(test)


def _record(test, outcome, message=None):
    key = _key(test)
    if _RANK[outcome] >= _RANK.get(_by_test.get(key), -1):
        _by_test[key] = outcome
    for name in _names(test):
        if _RANK[outcome] >= _RANK.get(_outcomes.get(name), -1):
            _outcomes[name] = outcome
    if message is not None and key not in _listed and len(_failures) < _MAX_LISTED:
        _listed.add(key)
        names = _names(test)
        _failures.append({"name": names[0], "message": _tail(message)})
        if len(names) > 1:
            _aliases[names[0]] = names[1:]


def _trace(result, err, test):
    try:
        return result._exc_info_to_string(err, test)
    except Exception:
        return "".join(traceback.format_exception_only(err[0], err[1]))


def _hook(name, before):
    original = getattr(unittest.result.TestResult, name)

    def hooked(self, *args, **kwargs):
        try:
            before(self, *args)
        except Exception:  # the harness's bookkeeping never breaks the run
            pass
        return original(self, *args, **kwargs)

    hooked.__name__ = name
    setattr(unittest.result.TestResult, name, hooked)


def _failure(self, test, err):
    _record(test, "failed", _trace(self, err, test))


def _error(self, test, err):
    _record(test, "error", _trace(self, err, test))


def _subtest(self, test, subtest, err):
    # A subtest that passed says nothing of its test; one that failed fails it (an exception
    # that is not the test's failure exception makes it an error), as unittest counts it.
    if err is None:
        return
    failure = issubclass(err[0], getattr(test, "failureException", AssertionError))
    _record(test, "failed" if failure else "error", _trace(self, err, subtest))


_hook("startTest", lambda self, test: _started.add(_key(test)))
_hook("addSuccess", lambda self, test: _record(test, "passed"))
_hook("addFailure", _failure)
_hook("addError", _error)
_hook("addSubTest", _subtest)
def _skip(self, test, reason):
    # A skipped subtest (Python 3.11 reports it) leaves its test's outcome to the others.
    if getattr(test, "test_case", None) is None:
        _record(test, "skipped")


_hook("addSkip", _skip)
_hook("addExpectedFailure", lambda self, test, err: _record(test, "xfail"))
_hook(
    "addUnexpectedSuccess",
    lambda self, test: _record(test, "failed", "unexpected success"),
)

_run_suite = unittest.suite.TestSuite.run


def _suite_run(self, result, debug=False):
    # When setUpClass or setUpModule fails, unittest reports the error once (under
    # `setUpClass (module.Class)`) and never starts the class's tests: record each of them as
    # an error, so that a named test is not merely missing.
    cases = [t for t in self if isinstance(t, unittest.TestCase)]
    out = _run_suite(self, result, debug)
    for test in cases:
        if _key(test) in _started:
            continue
        if getattr(test.__class__, "_classSetupFailed", False) or getattr(
            result, "_moduleSetUpFailed", False
        ):
            _record(test, "error", "not run: the setUpClass or setUpModule of its class failed")
    return out


unittest.suite.TestSuite.run = _suite_run

_run_runner = unittest.runner.TextTestRunner.run


def _runner_run(self, test):
    out = _run_runner(self, test)
    _state["finished"] = True
    return out


unittest.runner.TextTestRunner.run = _runner_run


def _write_report():
    global _report
    if _report is None or not _state["finished"]:
        return
    counted = list(_by_test.values())
    data = json.dumps({
        "runner": "django",
        "tests_run": len(_started),
        "failed": counted.count("failed"),
        "errored": counted.count("error"),
        "skipped": counted.count("skipped"),
        "outcomes": _outcomes,
        "failures": _failures,
        "aliases": _aliases,
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
        sys.stderr.write("usage: tp_django.py tests/runtests.py ARGS...\n")
        return 2
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(os.path.realpath(script))
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
