# SPDX-License-Identifier: Apache-2.0
# find_go: prints the path of a go binary of version >= 1.21, or nothing. It looks at `go` on
# the PATH, then /usr/lib/go-1.23/bin/go (Debian's golang-1.23-go, which is not put on the PATH)
# and /usr/local/go/bin/go, each run with GOTOOLCHAIN=local so that no toolchain is downloaded.
# Sourced by scripts/install_deps.sh (whether to install Go) and scripts/test_go.sh (which Go
# to use).
find_go() {
  local candidate version minor
  for candidate in "$(command -v go 2>/dev/null || true)" /usr/lib/go-1.23/bin/go \
      /usr/local/go/bin/go; do
    [ -n "$candidate" ] && [ -x "$candidate" ] || continue
    version=$(GOTOOLCHAIN=local "$candidate" env GOVERSION 2>/dev/null || true)
    case $version in
      go1.*) minor=${version#go1.}; minor=${minor%%.*}; minor=${minor%%[!0-9]*} ;;
      *) continue ;;
    esac
    if [ "${minor:-0}" -ge 21 ]; then
      echo "$candidate"
      return
    fi
  done
}
