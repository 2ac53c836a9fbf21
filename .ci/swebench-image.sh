#!/usr/bin/env bash
# Builds, with podman and without any image registry, a local image in SWE-bench's instance
# image layout for one real instance, pytest-dev__pytest-5227, for the container backend's
# ignored tests (crates/traparena-cli/tests/container.rs):
#   /testbed                           a git checkout of pytest 4.4.2 (the PyPI sdist: its
#                                      src/_pytest/logging.py and testing/logging/test_reporting.py
#                                      are the instance's base commit's), installed in develop mode
#   /opt/miniconda3/envs/testbed       the activated environment (a venv of Python 3.9 with the
#                                      instance's pinned packages), first on PATH
# named localhost/sweb.eval.x86_64.pytest-dev_1776_pytest-5227:latest (SWE-bench's name under
# the namespace `localhost`). Its base is a Debian bookworm root file system from debootstrap,
# imported as localhost/traparena-test-base:bookworm. Each step is skipped when its result is
# there. Usage: .ci/swebench-image.sh [WORK_DIR] [PYTHON_3_9_PREFIX]
set -euo pipefail
W="${1:-/var/tmp/traparena-test-image}"
PY="${2:-/var/tmp/traparena-test-runners/python/3.9.18}"
BASE=localhost/traparena-test-base:bookworm
IMAGE=localhost/sweb.eval.x86_64.pytest-dev_1776_pytest-5227:latest
mkdir -p "$W"

if podman image exists "$IMAGE"; then
  echo "$IMAGE"
  exit 0
fi

if ! podman image exists "$BASE"; then
  if [ ! -x "$W/rootfs/usr/bin/git" ]; then
    rm -rf "$W/rootfs"
    debootstrap --variant=minbase \
      --include=git,libssl3,libffi8,libsqlite3-0,libbz2-1.0,liblzma5,zlib1g,libreadline8,libncursesw6 \
      bookworm "$W/rootfs" http://deb.debian.org/debian >"$W/debootstrap.log" 2>&1 \
      || { tail -5 "$W/debootstrap.log" >&2; exit 1; }
  fi
  tar -C "$W/rootfs" -c . | podman import - "$BASE" >/dev/null
fi

ctx="$W/context"
rm -rf "$ctx" && mkdir -p "$ctx/wheels" "$ctx/testbed"
[ -x "$PY/bin/python3.9" ] || { echo "swebench-image: no Python 3.9 at $PY" >&2; exit 1; }
cp -a "$PY" "$ctx/python"
# The instance's environment (crates/traparena-import/envs/swebench.json, pytest 4.4), and what
# building pytest in develop mode needs; downloaded here, installed offline in the image.
"$PY/bin/python3.9" -m pip download -q -d "$ctx/wheels" \
  atomicwrites==1.4.1 attrs==23.1.0 more-itertools==10.1.0 pluggy==0.13.1 py==1.11.0 \
  setuptools==68.0.0 six==1.16.0 "setuptools_scm==7.1.0" wheel==0.41.2
"$PY/bin/python3.9" -m pip download -q --no-deps --no-binary :all: -d "$ctx/sdist" pytest==4.4.2
tar -xzf "$ctx"/sdist/pytest-4.4.2.tar.gz -C "$ctx/testbed" --strip-components=1
rm -rf "$ctx/sdist"

cat >"$ctx/Containerfile" <<EOF
FROM $BASE
COPY python /opt/python3.9
COPY wheels /tmp/wheels
COPY testbed /testbed
ENV PATH=/opt/miniconda3/envs/testbed/bin:/opt/miniconda3/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN /opt/python3.9/bin/python3.9 -m venv /opt/miniconda3/envs/testbed \\
 && pip install -q --no-index --find-links /tmp/wheels atomicwrites==1.4.1 attrs==23.1.0 \\
      more-itertools==10.1.0 pluggy==0.13.1 py==1.11.0 setuptools==68.0.0 six==1.16.0 \\
      setuptools_scm==7.1.0 wheel==0.41.2 \\
 && cd /testbed \\
 && git init -q && git add -A \\
 && git -c user.name=swebench -c user.email=swebench@localhost commit -qm base \\
 && SETUPTOOLS_SCM_PRETEND_VERSION=4.4.2 pip install -q --no-index --no-build-isolation -e . \\
 && rm -rf /tmp/wheels
WORKDIR /testbed
EOF
podman build -q --network=none --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 \
  -t "$IMAGE" "$ctx" >"$W/build.log" 2>&1 || { tail -20 "$W/build.log" >&2; exit 1; }
rm -rf "$ctx"
echo "$IMAGE"
