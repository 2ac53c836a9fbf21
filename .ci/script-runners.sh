#!/usr/bin/env bash
# Prepares the real test scripts the django and sympy runners' ignored tests run
# (crates/traparena-env/tests/real_script_runners.rs), under one folder (default
# /var/tmp/traparena-test-runners), each step skipped when its result is already there:
#   python/3.6.15, python/3.9.18,  pyenv's interpreters, copied where the sandbox user can read
#   python/3.11.7                  them, their RUNPATH made relative to the copy (3.11.7 is
#                                  the base of the container-ready mini-swe-agent)
#   django-4.2.16/{src,venv}       the sdist (tests/runtests.py), a venv of /usr/bin/python3 (3.11)
#   django-3.2.25/{src,venv}       the sdist, a venv of Python 3.6
#   sympy-1.12/{src,venv}          the tagged tree (bin/test; sdists do not ship it), Python 3.9
#   sympy-1.1.1/{src,venv}         the same, with the old runner in sympy/utilities/runtests.py
# sympy's trees come from a clone ($TRAPARENA_SYMPY_CLONE, a bare mirror or a checkout), else
# from the PyPI sdist with a stand-in bin/test (the sdists do not ship the script). Each venv gets a .pth putting the working folder (the
# workspace) first on sys.path, as the importer's environments do.
set -euo pipefail
R="${1:-/var/tmp/traparena-test-runners}"
PYENV="${PYENV_ROOT:-$HOME/.pyenv}/versions"
mkdir -p "$R/python"

copy_python() { # VERSION
  local v="$1" dst="$R/python/$1"
  [ -x "$dst/bin/python${v%.*}" ] && "$dst/bin/python${v%.*}" -c 'import ssl' 2>/dev/null && return
  [ -d "$PYENV/$v" ] || { echo "script-runners: no Python $v under $PYENV" >&2; return 1; }
  rm -rf "$dst"
  cp -a "$PYENV/$v" "$dst"
  /usr/bin/python3 - "$PYENV/$v/lib" "$dst/bin" <<'PY'
import os, sys
old = sys.argv[1].encode() + b"\0"
new = b"$ORIGIN/../lib"
for name in os.listdir(sys.argv[2]):
    p = os.path.join(sys.argv[2], name)
    if os.path.islink(p) or not os.path.isfile(p):
        continue
    data = open(p, "rb").read()
    if data[:4] == b"\x7fELF" and old in data:
        open(p, "wb").write(data.replace(old, new + b"\0" * (len(old) - len(new))))
PY
}

make_venv() { # DIR PYTHON PACKAGES...
  local dir="$1" python="$2"; shift 2
  [ -f "$dir/venv/.ready" ] && return
  rm -rf "$dir/venv"
  "$python" -m venv "$dir/venv"
  "$dir/venv/bin/python" -m pip install -q "$@"
  local site
  site="$("$dir/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo 'import os, sys; sys.path.insert(0, os.getcwd())' > "$site/traparena_workspace.pth"
  touch "$dir/venv/.ready"
}

django_sdist() { # VERSION
  local dir="$R/django-$1"
  [ -f "$dir/src/tests/runtests.py" ] && return
  mkdir -p "$dir/dl"
  /usr/bin/python3 -m pip download -q --no-deps --no-binary :all: "django==$1" -d "$dir/dl"
  rm -rf "$dir/src" && mkdir -p "$dir/src"
  tar -xzf "$dir"/dl/*.tar.gz -C "$dir/src" --strip-components=1
}

sympy_tree() { # VERSION
  local dir="$R/sympy-$1"
  [ -f "$dir/src/bin/test" ] && return
  rm -rf "$dir/src" && mkdir -p "$dir/src"
  if [ -n "${TRAPARENA_SYMPY_CLONE:-}" ]; then
    git --git-dir="$(git -C "$TRAPARENA_SYMPY_CLONE" rev-parse --absolute-git-dir)" \
      archive "sympy-$1" | tar -x -C "$dir/src"
    return
  fi
  # No clone: the PyPI sdist (sympy's own runner, sympy/testing/runtests.py or
  # sympy/utilities/runtests.py, is in it) and a bin/test of ours that calls it the way the
  # real script does (the sdists do not ship bin/test; GitHub is not reachable everywhere).
  mkdir -p "$dir/dl"
  /usr/bin/python3 -m pip download -q --no-deps --no-binary :all: "sympy==$1" -d "$dir/dl"
  tar -xzf "$dir"/dl/sympy-*.tar.gz -C "$dir/src" --strip-components=1
  mkdir -p "$dir/src/bin"
  cat > "$dir/src/bin/test" <<'PY'
#!/usr/bin/env python
"""A stand-in for sympy's bin/test, which the sdist lacks: sympy's own test runner on PATHS."""
import argparse
import os
import sys

parser = argparse.ArgumentParser()
parser.add_argument("paths", nargs="*")
parser.add_argument("-C", "--no-cache", dest="cache", action="store_false")
parser.add_argument("-v", "--verbose", action="store_true")
parser.add_argument("-k", dest="kw", nargs="+")
args = parser.parse_args()
if not args.cache:
    os.environ["SYMPY_USE_CACHE"] = "no"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sympy

ok = sympy.test(*args.paths, verbose=args.verbose, kw=args.kw)
sys.exit(not ok)
PY
  chmod +x "$dir/src/bin/test"
}

copy_python 3.6.15
copy_python 3.9.18
# A self-contained interpreter for a mini-swe-agent venv that also runs inside a container image
# (crates/traparena-external/tests/in_image.rs; .ci/run installs it).
copy_python 3.11.7
django_sdist 4.2.16
make_venv "$R/django-4.2.16" /usr/bin/python3 asgiref==3.8.1 sqlparse==0.5.1
django_sdist 3.2.25
make_venv "$R/django-3.2.25" "$R/python/3.6.15/bin/python3.6" asgiref==3.4.1 sqlparse==0.4.4 pytz==2024.1
for v in 1.12 1.1.1; do
  sympy_tree "$v"
  make_venv "$R/sympy-$v" "$R/python/3.9.18/bin/python3.9" mpmath==1.3.0
done
chmod -R a+rX "$R"
echo "$R"
