// SPDX-License-Identifier: Apache-2.0

//go:build !cgo

package cattn

// The package calls libcattn through cgo in each of its builds (linked, cattn_srctree and
// cattn_dlopen), so it cannot be built with CGO_ENABLED=0: set CGO_ENABLED=1 and install a C
// compiler (Debian: gcc), and build the program natively or with a cross C compiler in CC.
//
// Under CGO_ENABLED=0 the go tool leaves out every file that imports "C", and this one, which
// only such a build compiles, declares a type from an undefined name. It is the first
// declaration the compiler checks (a type declaration in the file that sorts first), so the
// build's first error names the cause instead of a missing cgo type:
//
//	./build_requires_cgo.go:20:8: undefined: cattn_needs_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler
//
// scripts/test_go.sh checks that this stays the first error.

type _ cattn_needs_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler
