// SPDX-License-Identifier: Apache-2.0

package cattn

// The memory side of the cgo layer. Every C struct a call passes (DLTensors, their shape and
// stride arrays, argument structs, metadata) is allocated in C memory for the duration of the
// call, so that C never receives Go memory that holds pointers. The only Go memory C sees is
// the data of slice-backed tensors, pinned with a runtime.Pinner while the call runs. This
// file, like capi.go, deals in C-shaped values only; frame.go builds on it.

/*
#include <stdint.h>
#include <stdlib.h>
#include <cattn.h>
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// msgCap bounds the copy of cattn_last_error_message a failing call takes; longer messages
// are cut (libcattn's are a few hundred bytes).
const msgCap = 4096

type (
	cTensor   = *C.DLTensor
	cMetadata = *C.cattn_common_attn_metadata_t
)

// cMem holds one call's C memory, the pins of the Go memory it lends C, and the buffer the
// shims copy a failing call's message into; free releases them together.
type cMem struct {
	blocks []unsafe.Pointer
	pinner runtime.Pinner
	msg    *C.char
}

// cAllocator is what cArgs allocates from (a cMem, or a frame that embeds one).
type cAllocator interface {
	alloc(n uintptr) unsafe.Pointer
}

func (m *cMem) init() { m.msg = (*C.char)(m.alloc(msgCap)) }

// free releases the C memory and unpins the slices.
func (m *cMem) free() {
	m.pinner.Unpin()
	for _, b := range m.blocks {
		C.free(b)
	}
	m.blocks = nil
}

// alloc returns n zeroed bytes of C memory owned by m.
func (m *cMem) alloc(n uintptr) unsafe.Pointer {
	if n == 0 {
		n = 1
	}
	p := C.calloc(1, C.size_t(n))
	if p == nil {
		panic("cattn: out of C memory")
	}
	m.blocks = append(m.blocks, p)
	return p
}

// cstring copies s into NUL-terminated C memory owned by m.
func (m *cMem) cstring(s string) *C.char {
	p := m.alloc(uintptr(len(s)) + 1)
	copy(unsafe.Slice((*byte)(p), len(s)), s)
	return (*C.char)(p)
}

// message returns what the last failing shim copied into the message buffer.
func (m *cMem) message() string { return C.GoString(m.msg) }

// int64s copies v into C memory owned by m (NULL for an empty slice).
func (m *cMem) int64s(v []int64) *C.int64_t {
	if len(v) == 0 {
		return nil
	}
	p := (*C.int64_t)(m.alloc(uintptr(len(v)) * 8))
	copy(unsafe.Slice((*int64)(unsafe.Pointer(p)), len(v)), v)
	return p
}
