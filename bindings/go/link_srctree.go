// SPDX-License-Identifier: Apache-2.0

//go:build cattn_srctree && !cattn_dlopen

package cattn

// With -tags cattn_srctree the package builds against the repository it lives in: the header
// from include/ and libcattn.so from the build folders of the repository's convention (README.md,
// "Build folders"): build/ (the default CMake preset, CUDA when nvcc is found), else build-cpu/
// (the cpu preset, which scripts/demo.sh builds on a machine without a GPU). The linker takes
// the first of the two that holds libcattn.so, and the rpath names both in the same order, so
// the program runs with the library it was linked against. Another build folder can be put
// first with CGO_LDFLAGS="-L<dir> -Wl,-rpath,<dir>" (flags from the environment come before
// these).

// #cgo CFLAGS: -I${SRCDIR}/../../include
// #cgo LDFLAGS: -L${SRCDIR}/../../build -L${SRCDIR}/../../build-cpu
// #cgo LDFLAGS: -Wl,-rpath,${SRCDIR}/../../build -Wl,-rpath,${SRCDIR}/../../build-cpu -lcattn
import "C"
