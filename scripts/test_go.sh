#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tests the Go binding (bindings/go) against a freshly built CPU-only libcattn: gofmt, go vet,
# go test -v with a summary, the same tests under GOEXPERIMENT=cgocheck2 (the runtime rebuilt
# with cgo pointer checks), the tests again with -tags cattn_dlopen (libcattn opened at run
# time) and a check that such a build links no libcattn, an out-of-tree module built with
# README.md's require + replace recipe (GOPROXY=off, both builds), that a CGO_ENABLED=0 build
# fails with an error that says so, a build with -tags cattn_srctree, example/eight_requests
# and example/step_inputs (compared with examples/eight_requests.expected and
# step_inputs.expected), and the Go test transcript
# (internal/transcript), whose output is compared with the host run of this tree's C transcript
# (tests/transcripts/transcript.c, compiled here).
#
# Installs what it needs through scripts/install_deps.sh go, the one script that changes the
# machine: Go 1.23 from Debian bookworm-backports when no Go >= 1.21 is found (adding that apt
# source only when it is absent), and pkg-config. Exits non-zero on any failure.
#
# Environment:
#   CATTN_LIB_DIR       a folder holding libcattn.so to test instead of building one
#   CATTN_GO_BUILD_DIR  the CMake build folder to build libcattn in (default: build-cpu, the
#                       cpu preset's folder, README.md's "Build folders"; an existing folder
#                       is reused, incrementally)
#   CATTN_GO_RACE=1     also run the tests with -race
#   CATTN_JOBS          build jobs (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${CATTN_JOBS:-2}

# --- Go ------------------------------------------------------------------------------------------

scripts/install_deps.sh go
. scripts/lib/find_go.sh
. scripts/lib/expect_output.sh
go_bin=$(find_go)
[ -n "$go_bin" ] || { echo "test_go.sh: no Go >= 1.21 found" >&2; exit 1; }
export PATH="$(dirname "$go_bin"):$PATH"
# Standard library only: never reach for a module proxy or a newer toolchain.
export GOTOOLCHAIN=local GOPROXY=off
echo "== $(go version)"

# --- libcattn ------------------------------------------------------------------------------------

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "${CATTN_LIB_DIR:-}" ]; then
  lib_dir=$(cd "$CATTN_LIB_DIR" && pwd)
  echo "== using libcattn from $lib_dir"
  if [ -e "$lib_dir/pkgconfig/cattn.pc" ]; then
    pc_dir=$lib_dir/pkgconfig
  else
    # A bare library folder: describe it, with this tree's header.
    pc_dir=$work/pkgconfig
    mkdir -p "$pc_dir"
    printf 'includedir=%s\nName: cattn\nDescription: libcattn in %s\nVersion: %s\nCflags: -I${includedir}\nLibs: -L%s -lcattn\n' \
      "$root/include" "$lib_dir" "$(awk '/^project\(cattn VERSION/ {print $3}' CMakeLists.txt)" \
      "$lib_dir" >"$pc_dir/cattn.pc"
  fi
else
  build=${CATTN_GO_BUILD_DIR:-build-cpu}
  echo "== building libcattn (CPU-only) in $build, installed into a temporary prefix"
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCATTN_WITH_CUDA=OFF \
      -DCATTN_BUILD_TESTS=OFF -DCATTN_BUILD_BENCH=OFF >/dev/null
  fi
  cmake --build "$build" -j "$jobs" --target cattn >/dev/null
  # The installed cattn.pc is the one users get, so the default (pkg-config) build is tested
  # through it, as README.md's "a copy moved elsewhere": the file names the configured prefix,
  # --define-variable=prefix=<dir> moves libdir and includedir with it, and cgo runs
  # $PKG_CONFIG.
  cmake --install "$build" --prefix "$work/prefix" >/dev/null
  pc_file=$(find "$work/prefix" -name cattn.pc | head -n1)
  [ -n "$pc_file" ] || { echo "test_go.sh: the install has no cattn.pc" >&2; exit 1; }
  pc_dir=$(dirname "$pc_file")
  printf '#!/bin/sh\nexec pkg-config --define-variable=prefix=%s "$@"\n' "$work/prefix" \
    >"$work/pkg-config"
  chmod +x "$work/pkg-config"
  export PKG_CONFIG="$work/pkg-config"
  lib_dir=$(PKG_CONFIG_PATH="$pc_dir" "$PKG_CONFIG" --variable=libdir cattn)
fi
[ -e "$lib_dir/libcattn.so" ] || { echo "test_go.sh: no libcattn.so in $lib_dir" >&2; exit 1; }
export PKG_CONFIG_PATH="$pc_dir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
echo "== pkg-config cattn: $(${PKG_CONFIG:-pkg-config} --modversion cattn):" \
  "$(${PKG_CONFIG:-pkg-config} --cflags --libs cattn)"
# The .pc file sets no run path; the test binaries get one here.
export CGO_LDFLAGS="-Wl,-rpath,$lib_dir${CGO_LDFLAGS:+ $CGO_LDFLAGS}"
# Go's build cache does not hash C headers outside the package, so a changed cattn.h (a version
# bump) would leave stale cgo objects behind; the headers' hash in CGO_CFLAGS keys them.
header_hash=$({ cat "$root/include/cattn.h" \
  "$(${PKG_CONFIG:-pkg-config} --variable=includedir cattn)/cattn.h" 2>/dev/null || true; } |
  sha256sum | cut -c1-16)
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -DCATTN_GO_HEADER_HASH=0x$header_hash"
export CATTN_VECTORS_DIR="$root/tests/vectors"

# --- Tests ---------------------------------------------------------------------------------------

cd bindings/go
log_dir=$work

# Prints the pass/fail/skip counts of a `go test -v` log (tests, subtests and examples).
summary() {
  local log=$1 what=$2 pass fail skip top
  pass=$(grep -cE '^ *--- PASS' "$log" || true)
  fail=$(grep -cE '^ *--- FAIL' "$log" || true)
  skip=$(grep -cE '^ *--- SKIP' "$log" || true)
  top=$(grep -cE '^--- (PASS|FAIL|SKIP)' "$log" || true)
  echo "== $what: $pass passed, $fail failed, $skip skipped ($top top-level tests and examples)"
}

echo "== gofmt -l"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "test_go.sh: not gofmt-clean: $unformatted" >&2
  exit 1
fi

echo "== go vet (linked, and with -tags cattn_dlopen)"
go vet ./...
go vet -tags cattn_dlopen ./...

echo "== go test -v"
status=0
go test -v -count=1 ./... 2>&1 | tee "$log_dir/test.log" || status=1
summary "$log_dir/test.log" "go test"
[ "$status" = 0 ] || exit 1

echo "== go test -v with GOEXPERIMENT=cgocheck2 (failures and package results shown)"
GOEXPERIMENT=cgocheck2 go test -v -count=1 ./... >"$log_dir/cgocheck2.log" 2>&1 || status=1
if [ "$status" = 0 ]; then
  grep -E '^(ok|FAIL|--- FAIL|--- SKIP)' "$log_dir/cgocheck2.log" || true
else
  cat "$log_dir/cgocheck2.log"
fi
summary "$log_dir/cgocheck2.log" "go test (cgocheck2)"
[ "$status" = 0 ] || exit 1

# The dlopen build: libcattn opened at run time through cattn_get_api's table.
dl_lib="$lib_dir/libcattn.so.1"
[ -e "$dl_lib" ] || dl_lib="$lib_dir/libcattn.so"
echo "== go test -v -tags cattn_dlopen (CATTN_LIBRARY=$dl_lib)"
CATTN_LIBRARY="$dl_lib" go test -v -count=1 -tags cattn_dlopen ./... >"$log_dir/dlopen.log" 2>&1 ||
  status=1
grep -E '^(ok|FAIL|--- FAIL|--- SKIP)' "$log_dir/dlopen.log" || true
[ "$status" = 0 ] || cat "$log_dir/dlopen.log"
summary "$log_dir/dlopen.log" "go test (cattn_dlopen)"
[ "$status" = 0 ] || exit 1

echo "== -tags cattn_dlopen builds with no libcattn to link (no pkg-config, no -L)"
PKG_CONFIG=false CGO_LDFLAGS= go test -c -tags cattn_dlopen -o "$work/dlopen.test" . >/dev/null
if ldd "$work/dlopen.test" | grep -q libcattn; then
  echo "test_go.sh: the cattn_dlopen test binary links libcattn" >&2
  exit 1
fi
echo "== the cattn_dlopen test binary does not link libcattn"

if [ "${CATTN_GO_RACE:-0}" = 1 ]; then
  echo "== go test -race"
  go test -race -count=1 ./...
fi

# An out-of-tree module, outside this tree and without a module proxy: README.md's require +
# replace recipe, in the linked build and in the cattn_dlopen build (no library to link, then
# run without one and with one).
echo "== an out-of-tree module: require + replace, GOPROXY=off GOFLAGS=-mod=mod"
app=$work/app
mkdir -p "$app"
cat >"$app/go.mod" <<EOF
module example.com/engine

go 1.21

require github.com/libcattn/cattn-go v0.0.0

replace github.com/libcattn/cattn-go => $root/bindings/go
EOF
cat >"$app/main.go" <<'EOF'
package main

import (
	"fmt"
	"os"

	cattn "github.com/libcattn/cattn-go"
)

func main() {
	idx, err := cattn.PCPQueryRestoreIdx([]int32{0, 4, 5, 9})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("libcattn", cattn.VersionString(), "restore index", idx)
}
EOF
(cd "$app" && GOFLAGS=-mod=mod go run .) | tee "$log_dir/app.txt"
grep -q 'restore index \[0 1 4 5 2 3 6 7\]' "$log_dir/app.txt"
(cd "$app" && PKG_CONFIG=false CGO_LDFLAGS= GOFLAGS=-mod=mod go build -tags cattn_dlopen -o app-dl .)
if CATTN_LIBRARY=/nonexistent/libcattn.so.1 "$app/app-dl" >"$log_dir/app-dl.txt" 2>&1; then
  echo "test_go.sh: the cattn_dlopen program ran without its library" >&2
  exit 1
fi
echo "   without the library: $(cat "$log_dir/app-dl.txt")"
grep -q 'libcattn could not be loaded' "$log_dir/app-dl.txt"
CATTN_LIBRARY="$dl_lib" "$app/app-dl"
echo "== the out-of-tree module built and ran, linked and with cattn_dlopen"

echo "== CGO_ENABLED=0: the build fails, and its first error says why"
if CGO_ENABLED=0 go build . >"$log_dir/nocgo.log" 2>&1; then
  echo "test_go.sh: the package built with CGO_ENABLED=0" >&2
  exit 1
fi
first_error=$(grep -m1 -v '^#' "$log_dir/nocgo.log" || true)
echo "   $first_error"
case $first_error in
  *build_requires_cgo.go*cattn_needs_cgo__build_with_CGO_ENABLED_1*) ;;
  *)
    cat "$log_dir/nocgo.log"
    echo "test_go.sh: the first CGO_ENABLED=0 error is not the one that names cgo" >&2
    exit 1
    ;;
esac

echo "== -tags cattn_srctree (this library put first with CGO_LDFLAGS)"
CGO_LDFLAGS="-L$lib_dir $CGO_LDFLAGS" go test -tags cattn_srctree -count=1 \
  -run 'TestVersion|TestErrorForms' .
# Without CGO_LDFLAGS the tag links the tree's build/, else build-cpu/ (README.md, "Build
# folders"), and the rpath finds the same file at run time.
srctree_lib=
for d in build build-cpu; do
  if [ -e "$root/$d/libcattn.so" ]; then srctree_lib=$root/$d/libcattn.so; break; fi
done
if [ -n "$srctree_lib" ]; then
  echo "== -tags cattn_srctree alone (expects $srctree_lib)"
  env -u CGO_LDFLAGS go test -c -tags cattn_srctree -o "$work/srctree.test" .
  linked=$(env -u LD_LIBRARY_PATH ldd "$work/srctree.test" |
             sed -n 's/.*libcattn\.so\.[0-9]* => \([^ ]*\).*/\1/p')
  if [ "$(readlink -f "$linked")" != "$(readlink -f "$srctree_lib")" ]; then
    echo "test_go.sh: the cattn_srctree build loads '${linked:-nothing}', expected $srctree_lib" >&2
    exit 1
  fi
  env -u LD_LIBRARY_PATH "$work/srctree.test" -test.run 'TestVersion' -test.count=1
else
  echo "== -tags cattn_srctree alone: skipped (neither build/ nor build-cpu/ holds libcattn.so)"
fi

echo "== example/eight_requests (one-call helpers on one batch of 8 requests)"
go run ./example/eight_requests | tee "$log_dir/eight.txt"
expect_output test_go.sh "$log_dir/eight.txt" \
  "$root/examples/eight_requests.expected" "example/eight_requests" || exit 1

echo "== example/step_inputs (a 6-request step's inputs through the one-call host helpers)"
go run ./example/step_inputs | tee "$log_dir/step.txt"
expect_output test_go.sh "$log_dir/step.txt" \
  "$root/examples/step_inputs.expected" "example/step_inputs" || exit 1

echo "== test transcript (internal/transcript)"
go run ./internal/transcript >"$log_dir/go_transcript.txt" ||
  { cat "$log_dir/go_transcript.txt"; exit 1; }
cat "$log_dir/go_transcript.txt"
# The Go transcript prints what the C transcript prints on the host, after a first line of its
# own. The C transcript is compiled here from this tree's tests/transcripts/transcript.c
# against the library under test (one C99 file), so that a prebuilt one from another tree never
# stands in for it.
c_transcript="$log_dir/cattn_transcript"
if ${CC:-cc} -std=c99 -O1 -I"$root/include" "$root/tests/transcripts/transcript.c" \
    -L"$lib_dir" -Wl,-rpath,"$lib_dir" -lcattn -o "$c_transcript"; then
  CATTN_TRANSCRIPT_FORCE_HOST=1 "$c_transcript" >"$log_dir/c_transcript.txt" || true
  if ! diff -u --label "C transcript (tests/transcripts/transcript.c), from line 2" \
      --label "Go transcript, from line 2" <(tail -n +2 "$log_dir/c_transcript.txt") \
      <(tail -n +2 "$log_dir/go_transcript.txt"); then
    echo "test_go.sh: the Go transcript differs from the C transcript (above)" >&2
    exit 1
  fi
  echo "== the Go transcript printed what the C transcript printed (after its first line)"
else
  echo "test_go.sh: could not compile tests/transcripts/transcript.c to compare with" >&2
  exit 1
fi
