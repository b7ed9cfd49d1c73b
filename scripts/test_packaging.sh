#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Release checks of the packaging, end to end (runs as root on CI; uses sudo otherwise, through
# scripts/install_deps.sh, the one script that changes the machine):
#  1. installs the Debian packages it needs, when missing (scripts/install_deps.sh packaging);
#  2. builds libcattn<major> and libcattn-dev with dpkg-buildpackage, out of the source tree
#     (packaging/build_deb.sh; the exported symbols are checked against the symbols file), and
#     checks that the source stage holds no fuzz seeds (tests/fuzz/seeds);
#  3. lists each package (dpkg -c), checks where its files are (the copyright file and a
#     Debian changelog whose top entry is the package's version included; libcattn-dev's
#     documentation: the HTML reference, every docs/api page and every file of examples/,
#     uncompressed, under /usr/share/doc/libcattn-dev, and its doc-base registration) and runs
#     lintian on every .deb (-dbgsym too) and on the .changes file: any E: tag, and any W: tag
#     but initial-upload-closes-no-bugs (a package that was never uploaded closes no bug),
#     fails;
#  4. installs them (dpkg -i, scripts/install_deps.sh debs);
#  5. builds and runs the five consumers against the installed packages (C: pkg-config,
#     find_package, dlopen; C++ through cattn.hpp: find_package, pkg-config);
#  6. runs the commands that the installed examples/README.md gives (the examples built from
#     /usr/share/doc/libcattn-dev/examples with CMake and with pkg-config, and run), and those
#     of bindings/go/README.md for the Debian packages and for a copy of them moved elsewhere
#     (scripts/lib/readme_block.sh takes each block from its README as it is written; Go
#     through scripts/install_deps.sh go);
#  7. runs the ABI gate against packaging/abi/libcattn.abi.
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
# libcattn-dev's documentation (debian/libcattn-dev.docs, .examples, .doc-base): the reference
# that scripts/docs.sh generated in the package build, page for page; every docs/api page,
# gzipped by dh_compress above 4 KiB; every file of examples/, never compressed (compat 13), so
# that examples/README.md's commands build them where they lie.
doc=/usr/share/doc/libcattn-dev
dev_list=$(contents "${dev[0]}")
expect_in "${dev[0]}" "^$doc/html/index\.html$" "^$doc/html/cattn_8h\.html$" \
  "^$doc/html/doxygen\.css$" "^/usr/share/doc-base/libcattn-dev\.libcattn-reference$"
stage_html=("$out"/stage/cattn-*/build-docs/html)
html_built=$(find "${stage_html[0]}" -type f | wc -l)
html_packaged=$(grep -c "^$doc/html/." <<<"$(grep -v '/$' <<<"$dev_list")" || true)
if [[ "$html_built" != "$html_packaged" ]]; then
  echo "test_packaging: the package build generated $html_built reference files, libcattn-dev" \
       "holds $html_packaged" >&2; exit 1
fi
# dev_holds <path> [<path>...]: each path, exactly, is in libcattn-dev.
dev_holds() {
  local f
  for f in "$@"; do
    grep -Fxq "$f" <<<"$dev_list" ||
      { echo "test_packaging: $(basename "${dev[0]}") lacks $f" >&2; exit 1; }
  done
}
n_api=0
while IFS= read -r f; do
  f=$doc/api/${f#docs/api/}
  grep -Fxq "$f.gz" <<<"$dev_list" || dev_holds "$f"
  n_api=$((n_api + 1))
done < <(git ls-files docs/api)
n_examples=0
while IFS= read -r f; do
  dev_holds "$doc/examples/${f#examples/}"
  n_examples=$((n_examples + 1))
done < <(git ls-files examples)
if grep -Eq "^$doc/examples/.*\.gz$" <<<"$dev_list"; then
  echo "test_packaging: $(basename "${dev[0]}") holds compressed examples" >&2; exit 1
fi
runtime_list=$(contents "${runtime[0]}")
if grep -Eq "^/usr/share/doc/libcattn$major/(html|api|examples)/" <<<"$runtime_list"; then
  echo "test_packaging: $(basename "${runtime[0]}") holds documentation of libcattn-dev" >&2
  exit 1
fi
echo "== packaging: libcattn-dev holds the reference ($html_packaged files), $n_api docs/api" \
     "pages and $n_examples example files under $doc"
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
# Every .deb, the -dbgsym one included, then the .changes file (which adds the checks of the
# upload as a whole). E: tags fail the stage, and so do W: tags but one: a package that was
# never uploaded has no bug to close, so initial-upload-closes-no-bugs stays. I: tags are
# shown only.
lintian_allowed='initial-upload-closes-no-bugs'
lintian_failed=0
changes=("$out"/*.changes)
if ((${#changes[@]} != 1)); then
  echo "test_packaging: expected one .changes file in $out" >&2; exit 1
fi
for d in "${debs[@]}" "${changes[@]}"; do
  echo "-- lintian $(basename "$d")"
  # --fail-on none: a non-zero exit means lintian itself failed, not that it found tags.
  report=$(lintian --fail-on none --display-info "$d" 2>&1) ||
    { printf '%s\n' "$report"; echo "test_packaging: lintian did not run on $d" >&2; exit 1; }
  # As root lintian adds that it is not recommended; on CI that line is noise.
  report=$(grep -v '^running with root privileges is not recommended' <<<"$report" || true)
  if [[ -n "$report" ]]; then printf '%s\n' "$report"; else echo "(no tags)"; fi
  errors=$(grep -c '^E: ' <<<"$report" || true)
  warnings=$(grep '^W: ' <<<"$report" | grep -vc ": $lintian_allowed\b" || true)
  echo "   $errors E, $warnings W (not counting $lintian_allowed)"
  if ((errors + warnings)); then lintian_failed=1; fi
done
if ((lintian_failed)); then
  echo "test_packaging: lintian reported errors or warnings (E:/W: above)" >&2; exit 1
fi

echo "== packaging: install"
scripts/install_deps.sh debs "${runtime[0]}" "${dev[0]}"

echo "== packaging: consumers against the installed packages"
packaging/consumers/run_consumers.sh "$out/consumers"

# run_block <README> <block> <folder> [VAR=value...]: runs the README's block as it is written,
# with bash -e, in <folder>, in an environment without this script's pkg-config and cgo
# settings (plus the given variables), and shows what it prints.
. scripts/lib/readme_block.sh
run_block() {
  local readme=$1 name=$2 dir=$3 block
  shift 3
  block=$(readme_block "$readme" "$name")
  echo "-- $readme, block '$name', in $dir:"
  sed 's/^/   $ /' <<<"$block"
  (cd "$dir" && env -u PKG_CONFIG -u PKG_CONFIG_PATH -u CGO_LDFLAGS -u CGO_CFLAGS \
     -u LD_LIBRARY_PATH "$@" bash -euo pipefail -c "$block")
}
# expect_lines <log> <file>: every line of <file> appears in <log>, in its order.
expect_lines() {
  awk 'BEGIN { n = 0; i = 0 } NR == FNR { want[n++] = $0; next } i < n && $0 == want[i] { ++i }
       END { exit i < n }' "$2" "$1" ||
    { echo "test_packaging: $1 lacks the lines of $2" >&2; exit 1; }
}

echo "== packaging: the installed examples, with the commands of their README"
installed_readme=$doc/examples/README.md
for way in cmake pkgconfig; do
  rm -rf "$out/examples-$way" && mkdir -p "$out/examples-$way"
  run_block "$installed_readme" "installed-examples-$way" "$out/examples-$way" |
    tee "$out/examples-$way.log"
  expect_lines "$out/examples-$way.log" examples/eight_requests.expected
done

echo "== packaging: bindings/go/README.md's pkg-config commands against the installed packages"
scripts/install_deps.sh go
. scripts/lib/find_go.sh
go_bin=$(find_go)
[[ -n "$go_bin" ]] || { echo "test_packaging: no Go >= 1.21 found" >&2; exit 1; }
gowork=$out/go
rm -rf "$gowork" && mkdir -p "$gowork"
# A build cache of its own: cgo does not notice a changed /usr/include/cattn.h, and a test
# result cached against another libcattn would pass unseen.
go_env=("PATH=$(dirname "$go_bin"):$PATH" GOPROXY=off GOTOOLCHAIN=local "GOCACHE=$gowork/cache")
run_block bindings/go/README.md go-debian-package "$root" "${go_env[@]}" |
  tee "$gowork/debian-package.log"
grep -qx "$version" "$gowork/debian-package.log" ||
  { echo "test_packaging: pkg-config did not report cattn $version" >&2; exit 1; }
expect_lines "$gowork/debian-package.log" examples/eight_requests.expected
go_ok='^ok[[:space:]]+github\.com/libcattn/cattn-go([[:space:]]|$)'
grep -Eq "$go_ok" "$gowork/debian-package.log" ||
  { echo "test_packaging: go test ./... did not pass against the packages" >&2; exit 1; }

# The moved copy: both packages unpacked elsewhere (prefix <copy>/usr, Debian's multiarch
# libdir), built with the README's wrapper, and a binary built the same way must load the copy.
copy=$gowork/copy
for d in "${runtime[0]}" "${dev[0]}"; do dpkg-deb -x "$d" "$copy"; done
copy_lib=$(find "$copy" -name "libcattn.so.$major")
copy_pc_dir=$(dirname "$(find "$copy" -name cattn.pc)")
run_block bindings/go/README.md go-moved-copy "$root" "${go_env[@]}" "prefix=$copy/usr" \
  "TMPDIR=$gowork" | tee "$gowork/moved-copy.log"
expect_lines "$gowork/moved-copy.log" examples/eight_requests.expected
# The same settings, kept: the flags name the copy, and the program loads the copy's library.
copy_env=(PKG_CONFIG="$gowork/pkg-config-cattn" PKG_CONFIG_PATH="$copy_pc_dir"
          CGO_LDFLAGS="-Wl,-rpath,$(dirname "$copy_lib")")
copy_flags=$(env "${copy_env[@]}" "$gowork/pkg-config-cattn" --cflags --libs cattn)
[[ "$copy_flags" == *"-I$copy/usr/include"* && "$copy_flags" == *"-L$(dirname "$copy_lib")"* ]] ||
  { echo "test_packaging: the moved copy's flags are [$copy_flags]" >&2; exit 1; }
(cd bindings/go && env -u LD_LIBRARY_PATH "${go_env[@]}" "${copy_env[@]}" \
   go build -o "$gowork/eight_requests" ./example/eight_requests)
loaded=$(env -u LD_LIBRARY_PATH ldd "$gowork/eight_requests" |
           sed -n 's/.*libcattn\.so\.[0-9]* => \([^ ]*\).*/\1/p')
if [[ "$(readlink -f "$loaded")" != "$(readlink -f "$copy_lib")" ]]; then
  echo "test_packaging: the moved copy's build loads '${loaded:-nothing}', expected $copy_lib" >&2
  exit 1
fi
echo "== packaging: the moved copy: flags [$copy_flags], the program loads $loaded"
echo "   (for comparison, pkg-config --define-prefix makes its libdir" \
     "$(PKG_CONFIG_PATH="$copy_pc_dir" pkg-config --define-prefix --variable=libdir cattn))"

echo "== packaging: ABI gate"
CATTN_ABI_BUILD_DIR="$out/abi" packaging/abi/check_abi.sh

# build, no fuzz seeds in the source stage, the two packages' contents, libcattn-dev's
# documentation, their docs, lintian, install, the five consumers, the installed examples (CMake,
# pkg-config), the Go README's two pkg-config routes, the ABI gate
echo "== packaging: 18 checks passed in $((SECONDS - start)) s"
