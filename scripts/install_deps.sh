#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need, when missing. Safe to re-run.
set -euo pipefail
need=()
for p in cmake g++ libdlpack-dev libgtest-dev libbenchmark-dev nlohmann-json3-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  echo "install_deps: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
