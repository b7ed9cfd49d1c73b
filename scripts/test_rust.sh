#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and checks the Rust bindings (bindings/rust): installs bindgen when it is missing
# (scripts/install_deps.sh rust),
# builds a CPU-only libcattn (or uses the one in CATTN_LIB_DIR), checks the generated FFI for
# drift against include/cattn.h, runs cargo build, test, clippy and fmt (offline: the crates
# have no dependencies), builds and tests the crates without their `link` feature (nothing
# linked; libcattn loaded at run time), runs the eight_requests and step_inputs examples,
# comparing their output with examples/eight_requests.expected and step_inputs.expected, and
# runs the Rust test transcript (tests/transcripts/transcript.rs), comparing it with the C
# transcript's host run when that program is there. Exits non-zero on the first failure.
#
# Environment: CATTN_LIB_DIR (a directory holding libcattn.so, e.g. build-cpu, to skip the
# build; its tests/transcripts/cattn_transcript is used for the comparison when present),
# CATTN_RUST_BUILD_DIR (where to build otherwise; default build-cpu, the cpu preset's folder,
# README.md's "Build folders"; an existing folder is reused), CATTN_JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
. scripts/lib/expect_output.sh
jobs=${CATTN_JOBS:-2}

# bindgen, installed when missing (scripts/install_deps.sh, the one script that changes the
# machine).
scripts/install_deps.sh rust
command -v cargo >/dev/null || { echo "test_rust.sh: cargo not found" >&2; exit 1; }

if [ -n "${CATTN_LIB_DIR:-}" ]; then
  lib_dir=$(cd "$CATTN_LIB_DIR" && pwd)
  echo "== using libcattn in $lib_dir"
else
  lib_dir=${CATTN_RUST_BUILD_DIR:-$root/build-cpu}
  echo "== building libcattn (CPU-only) in $lib_dir"
  if [ ! -f "$lib_dir/CMakeCache.txt" ]; then
    cmake -S . -B "$lib_dir" -DCMAKE_BUILD_TYPE=Release -DCATTN_WITH_CUDA=OFF \
      -DCATTN_BUILD_TESTS=OFF -DCATTN_BUILD_BENCH=OFF >/dev/null
  fi
  cmake -S . -B "$lib_dir" -DCATTN_BUILD_EXAMPLES=ON >/dev/null
  cmake --build "$lib_dir" -j "$jobs" --target cattn cattn_transcript
fi
[ -e "$lib_dir/libcattn.so" ] || { echo "test_rust.sh: no libcattn.so in $lib_dir" >&2; exit 1; }
export CATTN_LIB_DIR=$lib_dir
export LD_LIBRARY_PATH="$lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

cd bindings/rust
echo "== drift check: cattn-sys/src/bindings.rs against include/cattn.h"
./check_bindgen_drift.sh

echo "== cargo build"
cargo build --offline --all-targets
echo "== cargo test"
cargo test --offline
echo "== cargo clippy"
cargo clippy --offline --all-targets -- -D warnings

# Without the `link` feature the crates must build with no libcattn to be found (neither
# CATTN_LIB_DIR nor pkg-config), link nothing of it, and still run every call through a
# library loaded at run time (tests/load_at_run_time.rs, which the loader serves from
# LD_LIBRARY_PATH, set above).
echo "== no-link build: --no-default-features, without CATTN_LIB_DIR or pkg-config"
no_pc=$(mktemp -d)
no_link() {
  env -u CATTN_LIB_DIR PKG_CONFIG_PATH="$no_pc" PKG_CONFIG_LIBDIR="$no_pc" cargo "$@"
}
no_link build --offline --no-default-features --all-targets
no_link clippy --offline --no-default-features --all-targets -- -D warnings
no_link test --offline --no-default-features --tests
bin=$(no_link test --offline --no-default-features --test load_at_run_time --no-run \
  --message-format=json | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
rmdir "$no_pc"
[ -x "$bin" ] || { echo "test_rust.sh: no no-link test binary found" >&2; exit 1; }
if command -v readelf >/dev/null; then
  if readelf -d "$bin" | grep -q 'NEEDED.*libcattn'; then
    echo "test_rust.sh: the no-link test binary $bin needs libcattn:" >&2
    readelf -d "$bin" | grep NEEDED >&2
    exit 1
  fi
  echo "== the no-link binary links no libcattn (readelf -d: no NEEDED entry for it)"
else
  echo "== (no readelf: the no-link binary's NEEDED entries are not checked)"
fi
echo "== cargo fmt"
cargo fmt --check
echo "== cargo doc"
RUSTDOCFLAGS="-D warnings" cargo doc --offline --no-deps --quiet

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "== eight_requests example (the one-call helpers on one batch)"
cargo run --offline --quiet --example eight_requests | tee "$out/eight.txt"
expect_output test_rust.sh "$out/eight.txt" \
  "$root/examples/eight_requests.expected" "eight_requests.rs" || exit 1
echo "== eight_requests.rs printed examples/eight_requests.expected"
echo "== step_inputs example (a 6-request step's inputs through the one-call host helpers)"
cargo run --offline --quiet --example step_inputs | tee "$out/step.txt"
expect_output test_rust.sh "$out/step.txt" \
  "$root/examples/step_inputs.expected" "step_inputs.rs" || exit 1
echo "== step_inputs.rs printed examples/step_inputs.expected"

echo "== test transcript"
# Forced to the host, as the Rust transcript always runs there, so that both print alike.
CATTN_TRANSCRIPT_FORCE_HOST=1 cargo run --offline --quiet --example transcript >"$out/rust.txt"
cat "$out/rust.txt"
c_transcript="$lib_dir/tests/transcripts/cattn_transcript"
if [ -x "$c_transcript" ]; then
  CATTN_TRANSCRIPT_FORCE_HOST=1 "$c_transcript" >"$out/c.txt" || true
  if ! diff -u --label "C transcript ($c_transcript)" --label "Rust transcript" "$out/c.txt" \
      "$out/rust.txt"; then
    echo "test_rust.sh: the Rust transcript differs from the C transcript (above)" >&2
    exit 1
  fi
  echo "== the Rust transcript printed exactly what the C transcript printed"
else
  echo "== (no $c_transcript to compare with)"
fi
echo "== Rust bindings: all checks passed"
