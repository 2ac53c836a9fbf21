"""TrapArena's unittest entry point: `python -m unittest ARGS`, plus a result report.

The report (counts of tests run, failed, errored, skipped, and the failed tests' names with the
end of their tracebacks) is written as one JSON object to a
file descriptor the harness opened, after the run finishes. Output the code under test prints,
or an early exit, therefore never produces a report. The elapsed-time figure of the summary line
is fixed at zero so that observations are reproducible.
"""
import json
import os
import sys
import types
import unittest
import unittest.runner

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

sys.path[0] = os.getcwd()
sys.argv = ["python -m unittest"] + sys.argv[1:]
_program = unittest.main(module=None, exit=False)
_result = _program.result
sys.stdout.flush()
sys.stderr.flush()


def _method(test):
    # A failed subTest is reported once per subtest; count the test method it belongs to, so
    # that the counts are of the tests `tests_run` counts.
    return getattr(test, "test_case", test).id()


_failed = {_method(t) for t, _ in _result.failures} | {_method(t) for t in _result.unexpectedSuccesses}
_errored = {_method(t) for t, _ in _result.errors} - _failed
_skipped = {_method(t) for t, _ in _result.skipped} - _failed - _errored
# The failed and errored tests, named and with the end of their traceback: at most
# _MAX_LISTED, each message at most _MAX_MESSAGE bytes (its end), one entry per test method.
_MAX_LISTED = 10
_MAX_MESSAGE = 500


def _tail(text):
    data = text.strip().encode("utf-8", "replace")
    if len(data) > _MAX_MESSAGE:
        data = b"..." + data[-(_MAX_MESSAGE - 3):]
    return data.decode("utf-8", "ignore")


_listed = []
_named = set()
for _test, _trace in list(_result.failures) + list(_result.errors):
    _name = _method(_test)
    if _name in _named:
        continue
    _named.add(_name)
    if len(_listed) < _MAX_LISTED:
        _listed.append({"name": _name, "message": _tail(_trace)})
for _test in _result.unexpectedSuccesses:
    _name = _method(_test)
    if _name not in _named and len(_listed) < _MAX_LISTED:
        _named.add(_name)
        _listed.append({"name": _name, "message": "unexpected success"})
if _report is not None:
    _data = json.dumps({
        "runner": "unittest",
        "tests_run": _result.testsRun,
        "failed": len(_failed),
        "errored": len(_errored),
        "skipped": len(_skipped),
        "failures": _listed,
    })
    os.write(_report, _data.encode())
    os.close(_report)
sys.exit(0 if _result.wasSuccessful() else 1)
