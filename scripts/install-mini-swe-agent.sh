#!/bin/sh
# Install the real coding agent mini-swe-agent into a private venv for TrapArena.
#
#   scripts/install-mini-swe-agent.sh [PREFIX]
#
# PREFIX defaults to
#   ${TRAPARENA_AGENTS_DIR:-/opt/traparena/agents}/mini-swe-agent
# (the `traparena` command looks there too). It must be a folder the sandbox user can enter:
# a harness running as root runs agents as an unprivileged user, who cannot enter /root.
# The venv is made with Debian's /usr/bin/python3 (not a pyenv shim, which a
# sandbox user may not be able to run). Idempotent: when PREFIX already holds
# exactly the pinned versions, nothing is installed. At the end it checks that
# `PREFIX/bin/mini --help` runs non-interactively. All progress goes to stderr;
# the only line on stdout is PREFIX (absolute), printed last.
#
# Environment:
#   TRAPARENA_MSWEA_PYTHON   interpreter for the venv (default /usr/bin/python3)
#   TRAPARENA_MSWEA_LITELLM  litellm pin (default 1.110.2, the version the
#                            harness profile was verified with; set to "" to
#                            let pip pick any version mini-swe-agent accepts)
set -eu

MSWEA_VERSION=2.4.6
PY=${TRAPARENA_MSWEA_PYTHON:-/usr/bin/python3}
LITELLM_VERSION=${TRAPARENA_MSWEA_LITELLM-1.110.2}

log() { printf '%s\n' "install-mini-swe-agent: $*" >&2; }
die() { log "error: $*"; exit 1; }

if [ "$#" -gt 1 ]; then
    die "usage: $0 [PREFIX]"
fi
if [ "$#" -eq 1 ] && [ -n "$1" ]; then
    PREFIX=$1
else
    PREFIX=${TRAPARENA_AGENTS_DIR:-/opt/traparena/agents}/mini-swe-agent
fi
mkdir -p "$PREFIX" 2>/dev/null || die "cannot create $PREFIX (set TRAPARENA_AGENTS_DIR to a folder of yours, or pass PREFIX)"
PREFIX=$(cd "$PREFIX" && pwd -P)

[ -x "$PY" ] || die "$PY not found (on Debian: apt-get install python3 python3-venv)"

# Prints "OK" when the venv holds exactly the pinned versions.
installed_ok() {
    [ -x "$PREFIX/bin/python" ] || return 1
    "$PREFIX/bin/python" - "$MSWEA_VERSION" "$LITELLM_VERSION" <<'EOF' 2>/dev/null | grep -qx OK
import sys
from importlib.metadata import version, PackageNotFoundError
want_mini, want_litellm = sys.argv[1], sys.argv[2]
try:
    ok = version("mini-swe-agent") == want_mini and (not want_litellm or version("litellm") == want_litellm)
except PackageNotFoundError:
    ok = False
print("OK" if ok else "NO")
EOF
}

if installed_ok; then
    log "mini-swe-agent $MSWEA_VERSION already installed in $PREFIX"
else
    if [ ! -x "$PREFIX/bin/python" ] || ! "$PREFIX/bin/python" -c 'import sys' >/dev/null 2>&1; then
        log "creating venv in $PREFIX with $PY"
        "$PY" -m venv "$PREFIX" >&2 || die "venv creation failed (on Debian: apt-get install python3-venv)"
    fi
    set -- "mini-swe-agent==$MSWEA_VERSION"
    if [ -n "$LITELLM_VERSION" ]; then
        set -- "$@" "litellm==$LITELLM_VERSION"
    fi
    log "pip install $*"
    PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 \
        "$PREFIX/bin/python" -m pip install --quiet "$@" >&2 || die "pip install failed"
    installed_ok || die "after pip install, $PREFIX does not hold mini-swe-agent==$MSWEA_VERSION"
fi

# A fixed path to mini's bundled configurations for the profile (the site-packages folder
# names the Python version). The profile names them by absolute path: a bare name would be
# looked up in the workspace first, where a repository could replace the prompts.
config_dir=$(ls -d "$PREFIX"/lib/python3*/site-packages/minisweagent/config 2>/dev/null | head -1)
[ -n "$config_dir" ] || die "no minisweagent/config folder under $PREFIX/lib"
ln -sfn "$config_dir" "$PREFIX/config"

# Verify `mini --help` non-interactively, with a throw-away HOME so that the
# global config folder mini creates at import does not land in the real HOME.
check_home=$(mktemp -d "${TMPDIR:-/tmp}/mswea-check.XXXXXX")
trap 'rm -rf "$check_home"' EXIT
if ! env -i PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 HOME="$check_home" TMPDIR="$check_home" \
        MSWEA_CONFIGURED=true MSWEA_SILENT_STARTUP=1 LITELLM_LOCAL_MODEL_COST_MAP=True LITELLM_MODE=PRODUCTION \
        "$PREFIX/bin/mini" --help </dev/null >"$check_home/help.txt" 2>&1; then
    cat "$check_home/help.txt" >&2
    die "$PREFIX/bin/mini --help failed"
fi
grep -q -- '--exit-immediately' "$check_home/help.txt" || die "$PREFIX/bin/mini --help lacks --exit-immediately"
log "ok: $PREFIX/bin/mini (mini-swe-agent $MSWEA_VERSION)"
printf '%s\n' "$PREFIX"
