#!/usr/bin/env bash
# Prepares this machine for the test suite, the benchmarks and the sandbox: Debian packages, a virtualenv
# with the pinned Python packages, and a link that makes this checkout importable as kubeadm.control_plane.
# Safe to re-run: each step is skipped when what it makes is already there and current.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

debs=(openssh-server haproxy iptables tini socat iputils-ping openssl iproute2 procps python3-cryptography python3-yaml shellcheck)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: these Debian packages are missing and installing them needs root: ${missing[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

python=${PYTHON:-python3}
stamp=.venv/.requirements.sha256
want=$(cat requirements.txt awx/requirements.txt tests/requirements.txt | sha256sum | cut -d' ' -f1)
if [[ ! -x .venv/bin/python || ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  echo "setup: building .venv"
  "$python" -m venv .venv
  .venv/bin/pip install -q -r tests/requirements.txt
  echo "$want" > "$stamp"
fi

# ansible_collections/kubeadm/control_plane -> this checkout, for ANSIBLE_COLLECTIONS_PATH and for imports.
mkdir -p .collections/ansible_collections/kubeadm
ln -sfn "$root" .collections/ansible_collections/kubeadm/control_plane

# awx.awx, which the AWX loader (awx/load.yml) uses and its tests read: the package `ansible` on PyPI carries the
# collection's last release, 24.6.1; only that directory of the wheel is kept.
awx_wheel=ansible==12.3.0
awx_stamp=.collections/ansible_collections/awx/.from
if [[ ! -f $awx_stamp || $(cat "$awx_stamp") != "$awx_wheel" ]]; then
  echo "setup: awx.awx from $awx_wheel"
  wheel_dir=$(mktemp -d)
  .venv/bin/pip download -q --no-deps -d "$wheel_dir" "$awx_wheel"
  rm -rf .collections/ansible_collections/awx
  .venv/bin/python - "$wheel_dir"/*.whl .collections <<'PY'
import sys
import zipfile

with zipfile.ZipFile(sys.argv[1]) as wheel:
    wheel.extractall(sys.argv[2], [name for name in wheel.namelist() if name.startswith("ansible_collections/awx/awx/")])
PY
  rm -rf "$wheel_dir"
  echo "$awx_wheel" > "$awx_stamp"
fi
echo "setup: ready"
