#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Release checks of the packaging, end to end (runs as root on CI; uses sudo otherwise, through
# scripts/install_deps.sh, the one script that changes the machine):
#  1. installs the Debian packages it needs, when missing (scripts/install_deps.sh packaging);
#  2. builds libcattn<major> and libcattn-dev with dpkg-buildpackage, out of the source tree
#     (packaging/build_deb.sh; the exported symbols are checked against the symbols file), and
#     checks that the source stage holds no fuzz seeds (tests/fuzz/seeds);
#  3. lists each package (dpkg -c), checks where its files are (the copyright file and a
#     Debian changelog whose top entry is the package's version included) and runs lintian on
#     every .deb (-dbgsym too): any E: tag fails, warnings are printed;
#  4. installs them (dpkg -i, scripts/install_deps.sh debs);
#  5. builds and runs the five consumers against the installed packages (C: pkg-config,
#     find_package, dlopen; C++ through cattn.hpp: find_package, pkg-config);
#  6. runs the ABI gate against packaging/abi/libcattn.abi.
# Exits non-zero on the first failure.
# Environment: CATTN_PACKAGING_DIR (default build-deb) holds everything this script builds.
# CATTN_DEB_CUDA_ARCHITECTURES defaults to 90 here to keep CI fast; release packages are built
# with packaging/build_deb.sh's default, "90;80". CATTN_DEB_CUDA=OFF builds the package
# CPU-only; by default it has CUDA when nvcc is found. CATTN_JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${CATTN_PACKAGING_DIR:-$root/build-deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)
start=$SECONDS

echo "== packaging: apt packages"
scripts/install_deps.sh packaging

echo "== packaging: build the .deb files into $out"
export PATH="/usr/local/cuda/bin:$PATH"
CATTN_DEB_CUDA_ARCHITECTURES=${CATTN_DEB_CUDA_ARCHITECTURES:-90} \
  packaging/build_deb.sh "$out" > "$out/build_deb.log" 2>&1 ||
  { tail -n 60 "$out/build_deb.log"; echo "test_packaging: package build failed" \
      "(full log: $out/build_deb.log)" >&2; exit 1; }
grep -E '^libcattn: CATTN_WITH_CUDA|^== build_deb' "$out/build_deb.log"
# The source stage is the package's source: the fuzz seeds (test data) stay out of it.
leaked=$(find "$out/stage" -path '*/tests/fuzz/seeds' -o -path '*/tests/fuzz/corpus' | head -n 3)
if [ -n "$leaked" ]; then
  echo "test_packaging: the source stage holds fuzz inputs: $leaked" >&2; exit 1
fi
echo "== packaging: the source stage holds no fuzz seeds"

version=$(sed -n 's/^project(cattn VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
major=${version%%.*}
shopt -s nullglob
debs=("$out"/*.deb)
runtime=("$out"/libcattn"${major}"_*.deb)
dev=("$out"/libcattn-dev_*.deb)
if ((${#runtime[@]} != 1 || ${#dev[@]} != 1)); then
  echo "test_packaging: expected one libcattn${major} and one libcattn-dev .deb in $out" >&2
  exit 1
fi
for d in "${debs[@]}"; do
  echo "== dpkg -c $(basename "$d")"
  dpkg-deb -f "$d" Package Version Depends Suggests
  dpkg -c "$d"
done
# Each file where it belongs: the runtime package has the SONAME link and the library only.
contents() { dpkg -c "$1" | awk '{print $6}' | sed 's|^\./|/|'; }
expect_in() {  # package, then regular expressions for paths it must hold
  local deb=$1 list; shift
  # grep reads a here-string: piped, grep -q's early exit could kill the writer with SIGPIPE,
  # which pipefail turns into a false "lacks".
  list=$(contents "$deb")
  for re in "$@"; do
    grep -Eq "$re" <<<"$list" ||
      { echo "test_packaging: $(basename "$deb") lacks $re" >&2; exit 1; }
  done
}
expect_in "${runtime[0]}" "^/usr/lib/[^/]+/libcattn\.so\.$major$" \
  "^/usr/lib/[^/]+/libcattn\.so\.$version$"
if grep -Eq '(\.h|\.pc|\.cmake|/libcattn\.so)$' <<<"$(contents "${runtime[0]}")"; then
  echo "test_packaging: $(basename "${runtime[0]}") holds development files" >&2; exit 1
fi
expect_in "${dev[0]}" '^/usr/include/cattn\.h$' '^/usr/include/cattn\.hpp$' \
  '^/usr/lib/[^/]+/libcattn\.so$' \
  '^/usr/lib/[^/]+/pkgconfig/cattn\.pc$' '^/usr/lib/[^/]+/cmake/cattn/cattnConfig\.cmake$' \
  '^/usr/lib/[^/]+/cmake/cattn/cattnConfigVersion\.cmake$' \
  '^/usr/lib/[^/]+/cmake/cattn/cattnTargets\.cmake$'
if grep -Eq 'libcattn\.so\.' <<<"$(contents "${dev[0]}")"; then
  echo "test_packaging: $(basename "${dev[0]}") holds the runtime library" >&2; exit 1
fi
# Every package carries its copyright file and a Debian changelog that starts at its own
# version (the one build_deb.sh took from project() and CATTN_DEB_REVISION).
for d in "${runtime[0]}" "${dev[0]}"; do
  pkg=$(dpkg-deb -f "$d" Package)
  pkg_version=$(dpkg-deb -f "$d" Version)
  expect_in "$d" "^/usr/share/doc/$pkg/copyright$" "^/usr/share/doc/$pkg/changelog\.Debian\.gz$"
  top=$(dpkg-deb --fsys-tarfile "$d" |
          tar -xOf - "./usr/share/doc/$pkg/changelog.Debian.gz" | gzip -dc)
  top=${top%%$'\n'*}  # the first line (no head in the pipe: its early exit is a SIGPIPE)
  if [[ "$top" != "cattn ($pkg_version) "* ]]; then
    echo "test_packaging: $pkg $pkg_version's changelog.Debian starts with '$top'" >&2; exit 1
  fi
done

echo "== packaging: lintian"
# Every .deb, the -dbgsym one included; E: tags fail the stage, W:/I: tags are shown only.
lintian_failed=0
for d in "${debs[@]}"; do
  echo "-- lintian $(basename "$d")"
  # --fail-on none: a non-zero exit means lintian itself failed, not that it found tags.
  report=$(lintian --fail-on none --display-info "$d" 2>&1) ||
    { printf '%s\n' "$report"; echo "test_packaging: lintian did not run on $d" >&2; exit 1; }
  # As root lintian adds that it is not recommended; on CI that line is noise.
  report=$(grep -v '^running with root privileges is not recommended' <<<"$report" || true)
  if [[ -n "$report" ]]; then printf '%s\n' "$report"; else echo "(no tags)"; fi
  if grep -q '^E: ' <<<"$report"; then lintian_failed=1; fi
done
if ((lintian_failed)); then
  echo "test_packaging: lintian reported errors (E: above)" >&2; exit 1
fi

echo "== packaging: install"
scripts/install_deps.sh debs "${runtime[0]}" "${dev[0]}"

echo "== packaging: consumers against the installed packages"
packaging/consumers/run_consumers.sh "$out/consumers"

echo "== packaging: ABI gate"
CATTN_ABI_BUILD_DIR="$out/abi" packaging/abi/check_abi.sh

# build, no fuzz seeds in the source stage, the two packages' contents, their docs, lintian,
# install, the five consumers, the ABI gate
echo "== packaging: 13 checks passed in $((SECONDS - start)) s"
