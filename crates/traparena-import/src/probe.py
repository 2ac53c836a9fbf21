"""TrapArena's HumanEvalFix probe: runs each assertion of a check alone against the module.

Reads _traparena_probe.json from the working folder: {"module", "entry", "timeout", "start",
"cases"}, where each case is a module text defining `_traparena_case(candidate)`. For each case
from `start` on, writes one JSON line {"case", "ok", "why"} to file descriptor 3 at once, so that
a run killed halfway still reports the cases it finished.
"""
import builtins
import importlib
import json
import os
import signal
import sys

sys.path[0] = os.getcwd()
sys.setrecursionlimit(3000)
with open("_traparena_probe.json", encoding="utf-8") as f:
    spec = json.load(f)


def report(obj):
    os.write(3, (json.dumps(obj) + "\n").encode())


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


signal.signal(signal.SIGALRM, _alarm)

try:
    module = importlib.import_module(spec["module"])
except BaseException as e:  # noqa: B036 - the module itself may be broken
    report({"import_error": "%s: %s" % (type(e).__name__, e)})
    sys.exit(0)

exported = getattr(module, "__all__", None)
if exported is None:
    exported = [k for k in vars(module) if not k.startswith("_")]

for i in range(spec["start"], len(spec["cases"])):
    ns = {k: getattr(module, k) for k in exported}
    ns["__name__"] = "_traparena_case"
    ns["__builtins__"] = builtins
    ok, why = False, ""
    try:
        signal.setitimer(signal.ITIMER_REAL, spec["timeout"])
        try:
            exec(compile(spec["cases"][i], "<assertion %d>" % (i + 1), "exec"), ns)
            ns["_traparena_case"](getattr(module, spec["entry"]))
            ok = True
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Timeout:
        why = "timed out after %g s" % spec["timeout"]
    except AssertionError:
        why = "assertion failed"
    except BaseException as e:  # noqa: B036 - whatever the buggy code raises
        why = type(e).__name__
    report({"case": i, "ok": ok, "why": why})
