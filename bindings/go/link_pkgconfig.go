// SPDX-License-Identifier: Apache-2.0

//go:build !cattn_srctree && !cattn_dlopen

package cattn

// By default the package finds libcattn through pkg-config (a cattn.pc on PKG_CONFIG_PATH);
// see README.md for a .pc file that points at a build tree. Build with -tags cattn_srctree
// to use the repository's include/ and build/ folders instead.

// #cgo pkg-config: cattn
import "C"
