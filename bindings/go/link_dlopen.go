// SPDX-License-Identifier: Apache-2.0

//go:build cattn_dlopen

package cattn

// With -tags cattn_dlopen the package does not link libcattn: the first call (or Load) opens
// it with dlopen - $CATTN_LIBRARY, or its SONAME libcattn.so.1 on the loader's search path -
// and calls every function through the table cattn_get_api returns. The package then builds,
// and a program using it starts, without the library. The header comes from the source tree
// (include/ next to bindings/); put another -I in CGO_CFLAGS to use an installed one.

// #cgo CFLAGS: -DGOCATTN_DLOPEN -I${SRCDIR}/../../include
// #cgo LDFLAGS: -ldl
import "C"
