#!/usr/bin/env bash
# Create the project virtual environment: `make-venv.sh PYTHON DIR`.
# Debian/Ubuntu ship python3 without ensurepip unless python3-venv is installed; install it
# (root or sudo) when `python3 -m venv` cannot bootstrap pip.
set -euo pipefail
python=${1:-python3}
dir=${2:-.venv}
if ! "$python" -m venv "$dir" >/dev/null 2>&1; then
  rm -rf "$dir"
  if command -v apt-get >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    version=$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    echo "installing python${version}-venv (needed to create $dir)"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "python${version}-venv" >/dev/null \
      || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
  fi
  "$python" -m venv "$dir"
fi
"$dir/bin/python" -m pip install -q --upgrade pip
