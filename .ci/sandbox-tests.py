#!/usr/bin/env python3
"""The second CI pass's selection: the tests that started bubblewrap in the first pass.

Reads the notes .ci/bwrap-trace appended (one `TEST_BINARY_PATH<TAB>TEST_NAME` line per
bubblewrap start), maps each test binary's path to its nextest binary id through
`cargo nextest list --message-format json` (LIST_JSON), and prints one nextest filterset that matches exactly those tests. Each of them reached
the sandbox's backend choice, so each must pass again when bubblewrap is missing and the builtin
backend takes its place. Prints a summary per test binary on standard error.

Exit status: 0 with the filterset on standard output; 3 when a bubblewrap start could not be
traced to a test (the caller then runs every test); 1 when there are no notes at all (the trace
did not work, so the selection would be empty and prove nothing).
"""
import collections
import json
import sys


def binary_ids(list_json):
    """Test binary path -> nextest binary id, from `cargo nextest list --message-format json`."""
    with open(list_json, encoding="utf-8") as f:
        suites = json.load(f)["rust-suites"]
    return {s["binary-path"]: binary_id for binary_id, s in suites.items()}


def main(path, list_json):
    ids = binary_ids(list_json)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [line.rstrip("\n") for line in f if line.strip()]
    except FileNotFoundError:
        lines = []
    if not lines:
        print(f"sandbox-tests: no test started bubblewrap (no notes in {path})", file=sys.stderr)
        return 1
    tests = collections.defaultdict(set)
    untraced = []
    orphans = 0
    for line in lines:
        binary, _, name = line.partition("\t")
        if binary == "orphan":
            # Its starter had ended before bubblewrap ran (.ci/bwrap-trace): no test waits on it.
            orphans += 1
        elif binary == "?" or not name:
            untraced.append(name or line)
        elif binary not in ids:
            untraced.append(f"{binary} (not a test binary of this workspace) {name}")
        else:
            tests[ids[binary]].add(name)
    for binary in sorted(tests):
        print(f"sandbox-tests: {binary}: {len(tests[binary])} tests", file=sys.stderr)
    total = sum(len(v) for v in tests.values())
    print(f"sandbox-tests: {total} tests in {len(tests)} binaries started bubblewrap "
          f"({len(lines)} starts)", file=sys.stderr)
    if orphans:
        print(f"sandbox-tests: {orphans} starts were orphaned before they ran (not counted)",
              file=sys.stderr)
    if untraced:
        print(f"sandbox-tests: {len(untraced)} starts had no test among their ancestors, "
              f"first: {untraced[0]}", file=sys.stderr)
        return 3
    parts = []
    for binary in sorted(tests):
        names = " | ".join(f"test(={n})" for n in sorted(tests[binary]))
        parts.append(f"(binary_id(={binary}) & ({names}))")
    print(" | ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
