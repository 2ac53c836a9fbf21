#!/usr/bin/env python3
"""Prints the slowest tests of a nextest JUnit report (.ci/run's first pass) and each test
binary's total, so that a slow CI shows which tests took its time."""
import collections
import sys
import xml.etree.ElementTree as ET


def main(path, count):
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        cases.append((float(case.get("time", "0")), case.get("classname", "?"), case.get("name", "?")))
    per_binary = collections.Counter()
    for secs, binary, _ in cases:
        per_binary[binary] += secs
    print(f"ci: the {count} slowest of {len(cases)} tests (seconds; several run at once)")
    for secs, binary, name in sorted(cases, reverse=True)[:count]:
        print(f"ci: {secs:8.1f}  {binary} {name}")
    print(f"ci: the {count} test binaries with the most test time (seconds)")
    for binary, secs in per_binary.most_common(count):
        print(f"ci: {secs:8.1f}  {binary}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 15))
