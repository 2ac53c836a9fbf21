#!/usr/bin/env bash
# Builds the `traparena` wheel (pyproject.toml: maturin's binary bindings) for manylinux2014
# x86-64, linked with zig against glibc 2.17's symbols, then checks it and says where it is.
#
#   scripts/build-wheel.sh [OUT_DIR]        (default OUT_DIR: dist/)
#
# Variables:
#   TRAPARENA_WHEEL_TOOLS    the venv of the pinned maturin and ziglang, made when missing
#                            (default /var/tmp/traparena-wheel-tools)
#   TRAPARENA_WHEEL_PROFILE  the cargo profile (default release, for a wheel to publish; CI
#                            builds `dev`, which links the same way and builds in a fraction of
#                            the time)
#   CARGO_TARGET_DIR         the build folder (default /var/tmp/traparena-wheel-target: a
#                            folder of its own, so the build never waits on the workspace's lock;
#                            kept, a rebuild compiles only what changed)
#
# The checks: the wheel's platform tag is manylinux2014 (manylinux_2_17) x86-64, the binary
# needs no GLIBC_x.y newer than 2.17, and it loads no libssl or libcrypto (TLS is rustls).
# It prints the wheel's path, its size, the build's seconds, and the newest GLIBC symbol
# version it needs. Exit status 1 on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

MATURIN_VERSION=1.16.0
ZIGLANG_VERSION=0.15.2
MAX_GLIBC=2.17
TARGET=x86_64-unknown-linux-gnu

out="${1:-dist}"
tools="${TRAPARENA_WHEEL_TOOLS:-/var/tmp/traparena-wheel-tools}"
profile="${TRAPARENA_WHEEL_PROFILE:-release}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/traparena-wheel-target}"

fail() { echo "build-wheel: $*" >&2; exit 1; }

# The tools, at their pins: a venv that has other versions is remade.
want="maturin==$MATURIN_VERSION ziglang==$ZIGLANG_VERSION"
if [ "$(cat "$tools/.pins" 2>/dev/null)" != "$want" ]; then
  rm -rf "$tools"
  /usr/bin/python3 -m venv "$tools"
  # shellcheck disable=SC2086
  "$tools/bin/pip" install -q --disable-pip-version-check $want
  echo "$want" >"$tools/.pins"
fi
# maturin finds zig through the ziglang module of the Python it runs with.
export PATH="$tools/bin:$PATH"

rustup target list --installed 2>/dev/null | grep -qx "$TARGET" || rustup target add "$TARGET"

mkdir -p "$out"
out="$(cd "$out" && pwd)"
# Only this build's wheel is checked and named: another version's wheels in OUT_DIR stay.
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
[ -n "$version" ] || fail "no workspace version in Cargo.toml"
rm -f "$out"/traparena-"$version"-*.whl

start=$SECONDS
profile_args=(--profile "$profile")
[ "$profile" = release ] && profile_args=(--release)
maturin build "${profile_args[@]}" --compatibility manylinux2014 --zig --target "$TARGET" \
  --out "$out"
seconds=$((SECONDS - start))

wheels=("$out"/traparena-"$version"-*.whl)
[ -f "${wheels[0]}" ] || fail "maturin wrote no traparena-$version wheel to $out"
[ "${#wheels[@]}" -eq 1 ] || fail "more than one traparena-$version wheel in $out: ${wheels[*]}"
wheel="${wheels[0]}"

case "$(basename "$wheel")" in
  *manylinux2014_x86_64*) ;;
  *) fail "$wheel: not tagged manylinux2014_x86_64" ;;
esac

# The binary, out of the wheel (a zip: Python reads it, no unzip needed).
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$tools/bin/python" - "$wheel" "$tmp/traparena" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if n.endswith(".data/scripts/traparena")]
    if len(names) != 1:
        sys.exit(f"{sys.argv[1]}: no single .data/scripts/traparena in it: {z.namelist()}")
    with open(sys.argv[2], "wb") as f:
        f.write(z.read(names[0]))
EOF

newest="$(objdump -T "$tmp/traparena" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)"
[ -n "$newest" ] || fail "no GLIBC symbol versions in the binary: is it linked with glibc?"
[ "$(printf '%s\n%s\n' "$newest" "$MAX_GLIBC" | sort -V | tail -1)" = "$MAX_GLIBC" ] ||
  fail "the binary needs GLIBC_$newest, newer than manylinux2014's $MAX_GLIBC"
needed="$(readelf -d "$tmp/traparena" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
case " $needed " in
  *libssl* | *libcrypto*) fail "the binary needs OpenSSL: $needed" ;;
esac

echo "wheel: $wheel"
echo "size: $(du -k "$wheel" | cut -f1) KiB (binary $(du -k "$tmp/traparena" | cut -f1) KiB)"
echo "build: ${seconds}s (profile $profile, target folder $CARGO_TARGET_DIR)"
echo "glibc: newest symbol version GLIBC_$newest (at most $MAX_GLIBC); needs: $needed"
