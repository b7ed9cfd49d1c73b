// SPDX-License-Identifier: Apache-2.0

//go:build !cattn_srctree && !cattn_dlopen

package cattn

// By default the package finds libcattn through pkg-config (a cattn.pc on PKG_CONFIG_PATH);
// see README.md for the Debian packages, an install into a prefix and a copy moved elsewhere.
// Build with -tags cattn_srctree to use the repository's include/ and its build/ or build-cpu/
// folder instead.

// #cgo pkg-config: cattn
import "C"
