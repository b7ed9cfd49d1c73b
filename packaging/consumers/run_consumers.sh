#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and runs the five out-of-tree consumers against the INSTALLED libcattn packages
# (dpkg -i libcattn<major> libcattn-dev first), never against a build tree:
#   packaging/consumers/run_consumers.sh [work folder, default build-deb/consumers]
# (a) C via pkg-config, (b) CMake via find_package(cattn <major>), (c) C that only dlopen()s
# libcattn.so.<major>, (d) C++17 through cattn.hpp via find_package, (e) the eight-request
# program of examples/ (cattn.hpp) via pkg-config. Each must load the packaged library file and
# pass its own checks.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${1:-$here/../../build-deb/consumers}
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
unset LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH

fail() { echo "consumers: $*" >&2; exit 1; }

version=$(pkg-config --modversion cattn) ||
  fail "pkg-config does not know cattn (is libcattn-dev installed?)"
major=${version%%.*}
dpkg-query -W -f='${Status}' "libcattn$major" 2>/dev/null | grep -q "install ok installed" ||
  fail "package libcattn$major is not installed"
dpkg-query -W -f='${Status}' libcattn-dev 2>/dev/null | grep -q "install ok installed" ||
  fail "package libcattn-dev is not installed"
lib=$(dpkg -L "libcattn$major" | grep "/libcattn\.so\.$major$" | head -n1)
[[ -n "$lib" ]] || fail "libcattn$major ships no libcattn.so.$major"
real_lib=$(readlink -f "$lib")
echo "consumers: cattn $version from packages libcattn$major and libcattn-dev ($lib)"

# The library a consumer reports must be the packaged one.
expect_loaded() {
  local log=$1 name=$2 path
  path=$(sed -n 's/.*\(loaded from\|loaded\) \(\/[^ ]*\)$/\2/p' "$log" | head -n1)
  [[ -n "$path" && "$(readlink -f "$path")" == "$real_lib" ]] ||
    fail "$name loaded '${path:-nothing}', expected $lib"
}

echo "== (a) pkg-config: cc \$(pkg-config --cflags --libs cattn)" \
  "[$(pkg-config --cflags --libs cattn)]"
# shellcheck disable=SC2046  # pkg-config's output is meant to be split into flags
cc -std=c99 -Wall -Wextra -Werror -o "$work/consumer_pkgconfig" \
  "$here/pkgconfig/consumer_pkgconfig.c" $(pkg-config --cflags --libs cattn)
"$work/consumer_pkgconfig" | tee "$work/pkgconfig.log"
expect_loaded "$work/pkgconfig.log" "pkg-config consumer"

echo "== (b) CMake: find_package(cattn $major REQUIRED), target cattn::cattn"
cmake -S "$here/cmake" -B "$work/cmake" -DCATTN_MAJOR="$major" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF > "$work/cmake-configure.log" 2>&1 ||
  { cat "$work/cmake-configure.log"; fail "CMake consumer configure failed"; }
grep -E "^-- cattn" "$work/cmake-configure.log"
cmake --build "$work/cmake" > "$work/cmake-build.log" 2>&1 ||
  { cat "$work/cmake-build.log"; fail "CMake consumer build failed"; }
"$work/cmake/consumer_cmake" | tee "$work/cmake.log"
expect_loaded "$work/cmake.log" "CMake consumer"

echo "== (c) dlopen: no link to libcattn, dlopen(\"libcattn.so.$major\") + cattn_get_api"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Wpedantic -Werror -o "$work/consumer_dlopen" \
  "$here/dlopen/consumer_dlopen.c" $(pkg-config --cflags cattn) -ldl
if readelf -d "$work/consumer_dlopen" | grep -q 'NEEDED.*libcattn'; then
  fail "the dlopen consumer links libcattn"
fi
"$work/consumer_dlopen" | tee "$work/dlopen.log"
expect_loaded "$work/dlopen.log" "dlopen consumer"

echo "== (d) C++17: cattn.hpp through find_package(cattn $major REQUIRED) and cattn::cattn"
cmake -S "$here/cpp" -B "$work/cpp" -DCATTN_MAJOR="$major" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF > "$work/cpp-configure.log" 2>&1 ||
  { cat "$work/cpp-configure.log"; fail "C++ consumer configure failed"; }
grep -E "^-- cattn" "$work/cpp-configure.log"
cmake --build "$work/cpp" > "$work/cpp-build.log" 2>&1 ||
  { cat "$work/cpp-build.log"; fail "C++ consumer build failed"; }
"$work/cpp/consumer_cpp" | tee "$work/cpp.log"
expect_loaded "$work/cpp.log" "C++ consumer"

echo "== (e) C++17: examples/eight_requests.cpp, c++ \$(pkg-config --cflags --libs cattn)"
examples=$here/../../examples
# shellcheck disable=SC2046
c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -o "$work/eight_requests" \
  "$examples/eight_requests.cpp" $(pkg-config --cflags --libs cattn)
linked=$(ldd "$work/eight_requests" | sed -n 's/.*libcattn\.so\.[0-9]* => \([^ ]*\).*/\1/p')
[[ -n "$linked" && "$(readlink -f "$linked")" == "$real_lib" ]] ||
  fail "the eight-request program links '${linked:-nothing}', expected $lib"
"$work/eight_requests" | tee "$work/eight_requests.log"
# Its output past the version line is fixed by the batch.
tail -n +2 "$work/eight_requests.log" | diff - "$examples/eight_requests.expected" ||
  fail "the eight-request program printed other values than examples/eight_requests.expected"

echo "consumers: all five built and passed against the installed packages"
