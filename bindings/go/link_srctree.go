// SPDX-License-Identifier: Apache-2.0

//go:build cattn_srctree && !cattn_dlopen

package cattn

// With -tags cattn_srctree the package builds against the repository it lives in: the header
// from include/ and libcattn.so from build/ (the default CMake preset's folder), found again at
// run time through an rpath. Another build folder can be put first with
// CGO_LDFLAGS="-L<dir> -Wl,-rpath,<dir>" (flags from the environment come before these).

// #cgo CFLAGS: -I${SRCDIR}/../../include
// #cgo LDFLAGS: -L${SRCDIR}/../../build -Wl,-rpath,${SRCDIR}/../../build -lcattn
import "C"
