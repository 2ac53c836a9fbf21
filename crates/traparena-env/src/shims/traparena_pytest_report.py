"""TrapArena's pytest plugin: counts outcomes and writes a result report at session end.

Loaded with `-p traparena_pytest_report`. The report goes to a file descriptor the harness
opened; output the code under test prints, or an early exit, never produces one.

When the harness gives a selection (`TRAPARENA_PYTEST_SELECT`, a JSON file of node ids), only
the collected tests it names run, every parameter of a named function (a cut-off or odd
parameter id still names its function), and the others are deselected: a run of whole files
then costs what a run of the named tests costs. A selection that names none of the collected
tests deselects nothing (node ids relative to another root, say), so a run never loses its
tests to it.
"""
import json
import os

_fd = int(os.environ.pop("TRAPARENA_REPORT_FD", "3"))
try:
    _report = os.dup(_fd)
    os.close(_fd)
    os.set_inheritable(_report, False)
except OSError:
    _report = None

_select_path = os.environ.pop("TRAPARENA_PYTEST_SELECT", None)

_counts = {"passed": 0, "failed": 0, "errored": 0, "skipped": 0}
# Outcome per node id: passed, failed, error, skipped, xfail. A failed setup or teardown is
# an error whatever the call did; an expected failure is xfail.
_outcomes = {}
# The failed and errored tests (node id, end of the failure's text), at most _MAX_LISTED, each
# message at most _MAX_MESSAGE bytes; one entry per node id.
_MAX_LISTED = 10
_MAX_MESSAGE = 500
_failures = []
_failed_nodes = set()


def _tail(text):
    data = (text or "").strip().encode("utf-8", "replace")
    if len(data) > _MAX_MESSAGE:
        data = b"..." + data[-(_MAX_MESSAGE - 3):]
    return data.decode("utf-8", "ignore")


def _note_failure(report):
    node = report.nodeid
    if node in _failed_nodes or len(_failures) >= _MAX_LISTED:
        return
    _failed_nodes.add(node)
    try:
        text = report.longreprtext
    except Exception:  # a report that cannot render itself still names its test
        text = ""
    when = getattr(report, "when", None)
    if when not in (None, "call", "collect"):
        text = "error at %s: %s" % (when, text)
    _failures.append({"name": node, "message": _tail(text)})


def _note(report):
    node = report.nodeid
    if report.when == "call":
        if report.passed:
            out = "passed"
        elif report.failed:
            out = "failed"
        elif hasattr(report, "wasxfail"):
            out = "xfail"
        else:
            out = "skipped"
        if _outcomes.get(node) != "error":
            _outcomes[node] = out
    elif report.failed:
        _outcomes[node] = "error"
    elif report.skipped and report.when == "setup":
        _outcomes[node] = "xfail" if hasattr(report, "wasxfail") else "skipped"


def pytest_runtest_logreport(report):
    _note(report)
    if report.failed:
        _note_failure(report)
    if report.when == "call":
        if report.passed:
            _counts["passed"] += 1
        elif report.failed:
            _counts["failed"] += 1
        elif report.skipped:
            _counts["skipped"] += 1
    elif report.failed:
        _counts["errored"] += 1
    elif report.skipped and report.when == "setup":
        _counts["skipped"] += 1


def _function(nodeid):
    """The test function a node id names: without its parameters, or pytest 3's `::()`."""
    return nodeid.replace("::()", "").split("[", 1)[0]


def _selection():
    """The functions (and classes or files) the harness's selection names, or None."""
    if not _select_path:
        return None
    try:
        with open(_select_path, encoding="utf-8") as f:
            names = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(names, list):
        return None
    return {_function(n) for n in names if isinstance(n, str)}


def _named(nodeid, wanted):
    """True when `wanted` names the item's function, or a class or file that holds it."""
    parts = _function(nodeid).split("::")
    return any("::".join(parts[:i]) in wanted for i in range(1, len(parts) + 1))


def _select(config, items):
    wanted = _selection()
    if not wanted:
        return
    keep, drop = [], []
    for item in items:
        (keep if _named(item.nodeid, wanted) else drop).append(item)
    if keep and drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_collection_modifyitems(session, config, items):
    """Runs the selected tests in the order their files define them, as a run of whole files
    does (SWE-bench's), not in the order of the command's arguments: a test then meets the state
    that the tests before it in its file leave behind (a module-level patch an older suite never
    undoes) as it does in the suite's own run."""
    _select(config, items)
    files = {}
    for item in items:
        files.setdefault(str(item.fspath), len(files))

    def key(pair):
        i, item = pair
        line = item.location[1]
        return (files[str(item.fspath)], -1 if line is None else line, i)

    items[:] = [item for _, item in sorted(enumerate(items), key=key)]


def pytest_collectreport(report):
    if report.failed:
        _counts["errored"] += 1
        _note_failure(report)


def pytest_sessionfinish(session, exitstatus):
    global _report
    if _report is None:
        return
    run = _counts["passed"] + _counts["failed"]
    data = {
        "runner": "pytest",
        "tests_run": run,
        "failed": _counts["failed"],
        "errored": _counts["errored"],
        "skipped": _counts["skipped"],
        "outcomes": _outcomes,
        "failures": _failures,
    }
    os.write(_report, json.dumps(data).encode())
    os.close(_report)
    _report = None
