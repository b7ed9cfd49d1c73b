#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages the build and the tests need, when missing. Safe to re-run.
# The library and its tests: cmake, g++, DLPack, GoogleTest, Google Benchmark, nlohmann-json.
# The Debian packages (packaging/build_deb.sh, scripts/test_packaging.sh): dpkg-buildpackage
# (dpkg-dev), dh and debhelper-compat 13 (debhelper), lintian, pkg-config and abidiff
# (abigail-tools) for the consumers and the ABI gate. No fakeroot: debian/control says
# Rules-Requires-Root: no, so dpkg-buildpackage builds as the calling user.
# The HTML reference (scripts/docs.sh): doxygen (bookworm: 1.9.4), and python3 for its check of
# the enum values.
set -euo pipefail
need=()
for p in cmake g++ libdlpack-dev libgtest-dev libbenchmark-dev nlohmann-json3-dev \
         build-essential dpkg-dev debhelper lintian pkg-config abigail-tools \
         doxygen python3; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  echo "install_deps: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
