#!/usr/bin/env bash
# SWE-bench's per-version environment specs, for the conformance test of the bundled
# environments (crates/traparena-import/tests/conformance.rs): the pinned `swebench` wheel from
# PyPI (MIT licence), unpacked into DIR. Used as data: the test runs the spec module to read its
# tables and never imports the rest of the package.
set -euo pipefail
DIR="$1"
VERSION="${2:-4.1.0}"
[ -f "$DIR/swebench/harness/constants/python.py" ] && exit 0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# A venv's pip: a fresh machine's python3 may have no pip of its own.
/usr/bin/python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" download -q --disable-pip-version-check --no-deps --only-binary :all: \
  --dest "$tmp" "swebench==$VERSION"
mkdir -p "$DIR.partial"
/usr/bin/python3 -m zipfile -e "$tmp"/swebench-"$VERSION"-*.whl "$DIR.partial"
rm -rf "$DIR"
mv "$DIR.partial" "$DIR"
