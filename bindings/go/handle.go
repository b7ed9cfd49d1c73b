// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"runtime"
	"sync"
)

// handle owns one libcattn handle (a cattn_context_t*, a plan, a communicator) for the Go
// handle types, which each hold a *handle and nothing else: Close, the finalizer and the
// acquire/release that calls take are written once, here.
//
// The handle is its own allocation, and the finalizer is set on it rather than on the Go
// handle that holds it: when a Context (say) becomes unreachable, so does its *handle, whose
// finalizer then destroys the C handle, without the finalizer keeping anything alive.
type handle[P comparable] struct {
	mu      sync.RWMutex // read: calls that may share the handle; write: Close, exclusive calls
	c       P            // the zero P once closed
	destroy func(P)      // the C destroy call
}

// newHandle takes ownership of c, destroyed by destroy on Close or, as a safety net, by the
// finalizer.
func newHandle[P comparable](c P, destroy func(P)) *handle[P] {
	h := &handle[P]{c: c, destroy: destroy}
	runtime.SetFinalizer(h, (*handle[P]).Close)
	return h
}

// Close destroys the C handle. It waits for calls holding the handle to release it; later
// acquires fail. Closing again, or a nil handle, is a no-op. The error is always nil.
func (h *handle[P]) Close() error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var zero P
	if h.c != zero {
		h.destroy(h.c)
		h.c = zero
		runtime.SetFinalizer(h, nil)
	}
	return nil
}

// acquire locks the handle for the frame's call, shared or exclusive, and returns the C
// handle; the caller must call release with the same exclusive. A nil handle (the zero value
// of a Go handle type) or a closed one is StatusInvalidArgument, naming the frame's argument
// arg, a value of the Go type kind ("LocalAttentionPlan").
func (h *handle[P]) acquire(f *frame, arg, kind string, exclusive bool) (P, error) {
	var zero P
	if h == nil {
		return zero, f.argError(arg, "is closed", "a zero "+kind, "an open "+kind)
	}
	if exclusive {
		h.mu.Lock()
	} else {
		h.mu.RLock()
	}
	if h.c == zero {
		h.release(exclusive)
		return zero, f.argError(arg, "is closed", "a closed "+kind, "an open "+kind)
	}
	return h.c, nil
}

// release ends what acquire began.
func (h *handle[P]) release(exclusive bool) {
	if exclusive {
		h.mu.Unlock()
	} else {
		h.mu.RUnlock()
	}
}
