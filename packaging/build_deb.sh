#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Debian packages libcattn<major> and libcattn-dev (+ the -dbgsym package) with
# dpkg-buildpackage, out of the source tree:
#   packaging/build_deb.sh [output folder, default build-deb]
# The working tree (tracked and untracked-but-not-ignored files, but the fuzz seeds) is copied
# to <output>/stage/cattn-<version>/, debian/ is written there from the templates in
# packaging/debian/ with the version, SONAME major and version-script node taken from
# project() in CMakeLists.txt, and the .deb files end up in <output>/.
# Environment: CATTN_DEB_CUDA=auto|ON|OFF (default auto: on when nvcc is found),
# CATTN_DEB_CUDA_ARCHITECTURES (default "90;80", what releases use), CATTN_JOBS (default 2),
# CATTN_DEB_REVISION (the Debian revision, default 1: raise it to rebuild the same version so
# that apt replaces the installed packages), CATTN_DEB_MAINTAINER (default from
# packaging/deb.conf).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/build-deb}" && cd "${1:-$root/build-deb}" && pwd)
cd "$root"

version=$(sed -n 's/^project(cattn VERSION \([0-9]*\.[0-9]*\.[0-9]*\).*/\1/p' CMakeLists.txt)
if [[ -z "$version" ]]; then
  echo "build_deb: no 'project(cattn VERSION x.y.z' in CMakeLists.txt" >&2
  exit 1
fi
major=${version%%.*}
node="CATTN_${major}"
# The first release of a major: 0.1.0 for the pre-1.0 series, <major>.0.0 afterwards.
if [[ "$major" == 0 ]]; then base_version=0.1.0; else base_version=$major.0.0; fi

# The package names and the symbols file follow the major; refuse a half-done bump.
map_node=$(sed -n 's/^\([A-Za-z0-9_]*\)[ \t]*{.*/\1/p' src/libcattn.map)
header_major=$(sed -n 's/^#define CATTN_VERSION_MAJOR \([0-9]*\).*/\1/p' include/cattn.h)
if [[ "$map_node" != "$node" || "$header_major" != "$major" ]]; then
  echo "build_deb: version $version needs node $node and CATTN_VERSION_MAJOR $major, but" \
       "src/libcattn.map has '$map_node' and include/cattn.h has '$header_major'" >&2
  exit 1
fi

# conf KEY: the value packaging/deb.conf gives KEY (empty when it gives none).
conf() { sed -n "s/^$1=//p" packaging/deb.conf | tail -n 1; }
maintainer=${CATTN_DEB_MAINTAINER:-$(conf CATTN_DEB_MAINTAINER)}
# "Name <address>", and nothing sed's replacement below would read as syntax.
maintainer_re='^[^<>|&\\]+ <[^<>|&\\ @]+@[^<>|&\\ ]+>$'
if ! [[ "$maintainer" =~ $maintainer_re ]]; then
  echo "build_deb: CATTN_DEB_MAINTAINER is '$maintainer', expected 'Name <address>'" \
       "(set it in packaging/deb.conf)" >&2
  exit 1
fi
revision=${CATTN_DEB_REVISION:-1}
# Debian revisions are alphanumerics and + . ~ and start with a digit.
if ! [[ "$revision" =~ ^[0-9][0-9A-Za-z.+~]*$ ]]; then
  echo "build_deb: CATTN_DEB_REVISION is '$revision', expected a Debian revision such as 2" >&2
  exit 1
fi
date=$(git log -1 --format=%aD 2>/dev/null || date -R)

stage="$out/stage"
src="$stage/cattn-$version"
rm -rf "$stage"
mkdir -p "$src"
# The working tree as it is (uncommitted changes included), without build folders or other
# ignored files; outside a git checkout, everything but build*/ folders. The fuzz seed sets
# (tests/fuzz/seeds/, and tests/fuzz/corpus/ should an older checkout still hold one) stay out:
# test data that the package build never reads (docs/fuzzing.md).
stage_exclude='^tests/fuzz/(seeds|corpus)/'
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do
      [[ -e "$f" && ! "$f" =~ $stage_exclude ]] && printf '%s\0' "$f"
    done |
    tar -cf - --null -T - | tar -xf - -C "$src"
else
  tar -cf - --exclude='./build*' --exclude=./debian --exclude=./tests/fuzz/seeds \
    --exclude=./tests/fuzz/corpus . | tar -xf - -C "$src"
fi
rm -rf "$src/debian"
mkdir -p "$src/debian"
(cd packaging/debian && find . -type f) | while read -r f; do
  dest="$src/debian/${f#./}"
  case "$f" in
    ./libcattn.*) dest="$src/debian/libcattn$major.${f#./libcattn.}" ;;
  esac
  mkdir -p "$(dirname "$dest")"
  sed -e "s/@VERSION@/$version/g" -e "s/@MAJOR@/$major/g" -e "s/@NODE@/$node/g" \
      -e "s/@BASE_VERSION@/$base_version/g" -e "s|@MAINTAINER@|$maintainer|g" \
      -e "s/@DATE@/$date/g" -e "s/@DEBREV@/$revision/g" \
      "packaging/debian/${f#./}" > "$dest"
  chmod --reference="packaging/debian/${f#./}" "$dest"
done
if grep -rn '@[A-Z_]*@' "$src/debian" | grep -v '^[^:]*:[0-9]*:#'; then
  echo "build_deb: unsubstituted template fields left in debian/ (above)" >&2
  exit 1
fi

echo "== build_deb: cattn $version-$revision, packages libcattn$major and libcattn-dev," \
     "node $node, maintainer $maintainer"
export PATH="$PATH:/usr/local/cuda/bin"
(cd "$src" && dpkg-buildpackage -us -uc -b -J"${CATTN_JOBS:-2}")

rm -f "$out"/*.deb "$out"/*.ddeb "$out"/*.buildinfo "$out"/*.changes
mv "$stage"/*.deb "$out"/
mv "$stage"/*.ddeb "$out"/ 2>/dev/null || true
mv "$stage"/*.buildinfo "$stage"/*.changes "$out"/ 2>/dev/null || true
ls -1 "$out"/*.deb
