// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "unsafe"

// Context carries state that vLLM keeps in module globals, today the KV-cache layout override
// (cattn_context_t), so that two engines in one process do not share it.
//
// A Context may be used from many goroutines at once. Close it when done; a finalizer closes
// one that becomes unreachable, but only as a safety net.
//
// See docs/api/context.md.
type Context struct {
	h *handle[cContext]
}

// NewContext creates a context with no layout override (cattn_context_create).
func NewContext() (*Context, error) {
	f := newFrame("cattn_context_create", "NewContext")
	defer f.free()
	c, err := f.contextCreate()
	if err != nil {
		return nil, err
	}
	return &Context{h: newHandle(c, cContextDestroy)}, nil
}

// Close destroys the context (cattn_context_destroy). It waits for calls using the context to
// return; later calls fail with StatusInvalidArgument. Closing again, or a nil Context, is a
// no-op. The error is always nil.
//
// See docs/api/context.md.
func (ctx *Context) Close() error {
	if ctx == nil {
		return nil
	}
	return ctx.h.Close()
}

// acquire read-locks an open context for the frame's call; the caller must call release.
// A nil Context acquires nothing and gives a NULL handle.
func (ctx *Context) acquire(f *frame) (cContext, error) {
	if ctx == nil {
		return nil, nil
	}
	return ctx.h.acquire(f, "ctx", "Context", false)
}

func (ctx *Context) release() {
	if ctx != nil {
		ctx.h.release(false)
	}
}

func (f *frame) contextCreate() (cContext, error) {
	out := (*cContext)(f.alloc(unsafe.Sizeof(cContext(nil))))
	if err := f.status(cContextCreate(out, f.msg)); err != nil {
		return nil, err
	}
	return *out, nil
}
