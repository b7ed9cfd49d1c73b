#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what the build and the tests need, when it is missing: the one script of this tree
# that changes the machine. It runs apt-get and dpkg as root, or through sudo otherwise, and
# does nothing when everything a section needs is there. Safe to re-run.
#
#   scripts/install_deps.sh [base] [packaging] [go] [rust] [debs FILE...]
#
# With no argument, base. What each section may change:
#   base       apt-get update, then apt-get install of the Debian packages the library and its
#              tests need (scripts/test.sh): the library and its tests: cmake, g++, DLPack,
#              GoogleTest, Google Benchmark, nlohmann-json; the Debian packages
#              (packaging/build_deb.sh, scripts/test_packaging.sh): dpkg-buildpackage
#              (dpkg-dev), dh and debhelper-compat 13 (debhelper), lintian, pkg-config and
#              abidiff (abigail-tools) for the consumers and the ABI gate - no fakeroot:
#              debian/control says Rules-Requires-Root: no, so dpkg-buildpackage builds as the
#              calling user; the HTML reference (scripts/docs.sh): doxygen (bookworm: 1.9.4),
#              and python3 for its check of the enum values (and for
#              scripts/test_hardening.sh seeds).
#   packaging  what scripts/test_packaging.sh needs, without recommended packages:
#              build-essential, cmake, pkg-config, dpkg-dev, debhelper, lintian, abigail-tools,
#              libdlpack-dev.
#   go         what scripts/test_go.sh needs. When no Go >= 1.21 is found (`go` on the PATH,
#              /usr/lib/go-1.23/bin, /usr/local/go/bin; scripts/lib/find_go.sh): adds the apt
#              source bookworm-backports, unless /etc/apt/sources.list or
#              /etc/apt/sources.list.d/ already name it, on the mirror of the existing bookworm
#              entry and in its format (/etc/apt/sources.list.d/bookworm-backports.sources,
#              copying that entry's Signed-By, or bookworm-backports.list), runs apt-get update
#              and installs golang-1.23-go from it (in /usr/lib/go-1.23/bin; /usr/bin/go is left
#              alone). Then pkg-config, when it is not on the PATH.
#   rust       what scripts/test_rust.sh needs: bindgen, when it is not on the PATH. (cargo
#              comes from rustup, which this script does not install.)
#   debs FILE...
#              dpkg -i of the given .deb files (scripts/test_packaging.sh installs the packages
#              it has just built); every argument after `debs` is a file.
set -euo pipefail
lib=$(cd "$(dirname "$0")/lib" && pwd)

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

updated=0
# apt_install <apt-get install options and packages...>: runs apt-get update once (again after
# a source was added), then apt-get install.
apt_install() {
  if [ "$updated" = 0 ]; then
    as_root apt-get update -qq
    updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# missing <package...>: prints the packages dpkg does not list as installed.
missing() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

install_missing() {  # <section> [--no-install-recommends] <package...>
  local section=$1 opts=()
  shift
  if [ "$1" = --no-install-recommends ]; then opts=(--no-install-recommends); shift; fi
  local need
  mapfile -t need < <(missing "$@")
  if ((${#need[@]})); then
    echo "install_deps ($section): installing ${need[*]}"
    apt_install "${opts[@]}" "${need[@]}"
  fi
}

section_base() {
  install_missing base cmake g++ libdlpack-dev libgtest-dev libbenchmark-dev \
    nlohmann-json3-dev build-essential dpkg-dev debhelper lintian pkg-config abigail-tools \
    doxygen python3
}

section_packaging() {
  install_missing packaging --no-install-recommends build-essential cmake pkg-config dpkg-dev \
    debhelper lintian abigail-tools libdlpack-dev
}

# Adds bookworm-backports on the mirror of the existing bookworm entry, unless present.
add_backports() {
  if grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    return
  fi
  local file uri signed
  file=$(grep -lsE '^Suites:(.*[[:space:]])?bookworm([[:space:]]|$)' \
    /etc/apt/sources.list.d/*.sources | head -n1 || true)
  if [ -n "$file" ]; then
    uri=$(awk '/^URIs:/ {print $2; exit}' "$file")
    signed=$(awk '/^Signed-By:/ {print; exit}' "$file")
    echo "install_deps (go): adding /etc/apt/sources.list.d/bookworm-backports.sources"
    printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\n%s\n' \
      "$uri" "$signed" | as_root tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
  else
    uri=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list \
      /etc/apt/sources.list.d/*.list 2>/dev/null || true)
    echo "install_deps (go): adding /etc/apt/sources.list.d/bookworm-backports.list"
    echo "deb ${uri:-http://deb.debian.org/debian} bookworm-backports main" |
      as_root tee /etc/apt/sources.list.d/bookworm-backports.list >/dev/null
  fi
  updated=0
}

section_go() {
  . "$lib/find_go.sh"
  if [ -z "$(find_go)" ]; then
    echo "install_deps (go): installing Go 1.23 (golang-1.23-go) from bookworm-backports"
    add_backports
    apt_install golang-1.23-go
    [ -n "$(find_go)" ] || { echo "install_deps: no Go >= 1.21 after installing" >&2; exit 1; }
  fi
  if ! command -v pkg-config >/dev/null; then
    echo "install_deps (go): installing pkg-config"
    apt_install pkg-config
  fi
}

section_rust() {
  if ! command -v bindgen >/dev/null; then
    echo "install_deps (rust): installing bindgen"
    apt_install bindgen
  fi
}

[ $# -gt 0 ] || set -- base
while [ $# -gt 0 ]; do
  case $1 in
    base | packaging | go | rust) "section_$1" ;;
    debs)
      shift
      [ $# -gt 0 ] || { echo "install_deps: debs needs .deb files" >&2; exit 2; }
      echo "install_deps (debs): dpkg -i $*"
      as_root dpkg -i "$@"
      break
      ;;
    -h | --help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *)
      echo "install_deps: unknown section '$1' (base, packaging, go, rust, debs FILE...)" >&2
      exit 2
      ;;
  esac
  shift
done
