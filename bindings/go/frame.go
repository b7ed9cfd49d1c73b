// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "unsafe"

// The bridge between the idiomatic layer and the cgo layer: a call's frame turns *Tensor and
// *CommonAttnMetadata into C structs in C memory (cMem), and a C status with its message into
// an *Error in Go terms (names.go).

// frame holds one call's C memory and pins, released together by free.
type frame struct {
	cMem             // the C memory, pins and message buffer
	fn        string // the C function, for errors found on the Go side
	names     callNames
	tensors   []tensorEntry
	metadatas []metadataEntry
}

type tensorEntry struct {
	t *Tensor
	c cTensor
}

type metadataEntry struct {
	m *CommonAttnMetadata
	c cMetadata
}

// newFrame starts the call of Go entry point goName to the C function fn. renames lists the
// pairs of C argument paths and their Go spelling where that is not the mechanical one (see
// names.go), so that errors name what the Go caller passed. In a cattn_dlopen build the first
// call loads libcattn (see Load); a failed load makes every call fail with its reason.
func newFrame(fn, goName string, renames ...string) *frame {
	ensureLoaded()
	return newFrameNoLoad(fn, goName, renames...)
}

func newFrameNoLoad(fn, goName string, renames ...string) *frame {
	f := &frame{fn: fn, names: callNames{c: fn, goName: goName, renames: renames}}
	f.cMem.init()
	return f
}

// goError puts e (whose message is in C terms) into the call's Go terms.
func (f *frame) goError(e *Error) *Error {
	if e.CMessage == "" {
		e.CMessage = e.Message
	}
	e.Message = f.names.translate(e.CMessage)
	return e
}

// argError is the error of a check made in Go, for the C argument path arg.
func (f *frame) argError(arg, problem, got, expected string) *Error {
	return f.goError(argError(f.fn, arg, problem, got, expected))
}

// free releases the C memory and unpins the slices; the frame is unusable afterwards.
func (f *frame) free() {
	f.cMem.free()
	f.tensors = nil
	f.metadatas = nil
}

// status turns a C status into the call's error, reading the message the C helper copied
// into f.msg during the same cgo call.
func (f *frame) status(s C.cattn_status_t) error {
	if s == C.CATTN_OK {
		return nil
	}
	return f.goError(&Error{Code: Status(s), Message: f.message()})
}

// tensor returns the C DLTensor for t (NULL for nil), made once per frame: passing the same
// *Tensor twice gives the same DLTensor, as C code that compares pointers expects.
func (f *frame) tensor(arg string, t *Tensor) (cTensor, error) {
	if t == nil {
		return nil, nil
	}
	for _, e := range f.tensors {
		if e.t == t {
			return e.c, nil
		}
	}
	if err := t.checkView(f.fn, arg); err != nil {
		return nil, f.goError(err)
	}
	nd := len(t.Shape)
	arrays := uintptr(nd) * 8
	if t.Strides != nil {
		arrays *= 2
	}
	p := f.alloc(C.sizeof_DLTensor + arrays)
	ct := (*C.DLTensor)(p)
	if nd > 0 {
		shape := (*C.int64_t)(unsafe.Add(p, C.sizeof_DLTensor))
		copy(unsafe.Slice((*int64)(unsafe.Pointer(shape)), nd), t.Shape)
		ct.shape = shape
		if t.Strides != nil {
			strides := (*C.int64_t)(unsafe.Add(p, C.sizeof_DLTensor+uintptr(nd)*8))
			copy(unsafe.Slice((*int64)(unsafe.Pointer(strides)), nd), t.Strides)
			ct.strides = strides
		}
	}
	ct.ndim = C.int32_t(nd)
	ct.dtype.code = C.uint8_t(t.DType.Code)
	ct.dtype.bits = C.uint8_t(t.DType.Bits)
	ct.dtype.lanes = C.uint16_t(t.DType.Lanes)
	ct.device.device_type = C.DLDeviceType(t.Device.Type)
	ct.device.device_id = C.int32_t(t.Device.ID)
	ct.byte_offset = C.uint64_t(t.ByteOffset)
	switch {
	case t.slice && t.hostBytes > 0 && t.host != nil:
		// Pinned before the store: C memory may hold only pinned Go pointers.
		f.pinner.Pin(t.host)
		ct.data = t.host
	case !t.slice:
		// An address Go does not manage, stored as an integer (it is not a Go pointer).
		*(*uintptr)(unsafe.Pointer(&ct.data)) = t.addr
	}
	f.tensors = append(f.tensors, tensorEntry{t, ct})
	return ct, nil
}

// tensorsInto converts ts[i] (argument names[i]) into dst[i], stopping at the first error.
func (f *frame) tensorsInto(dst []cTensor, names []string, ts []*Tensor) error {
	for i, t := range ts {
		c, err := f.tensor(names[i], t)
		if err != nil {
			return err
		}
		dst[i] = c
	}
	return nil
}

// goTensor maps a DLTensor pointer that libcattn wrote back (copied from an argument) to the
// *Tensor it was made from.
func (f *frame) goTensor(c cTensor) (*Tensor, bool) {
	if c == nil {
		return nil, true
	}
	for _, e := range f.tensors {
		if e.c == c {
			return e.t, true
		}
	}
	return nil, false
}

var metadataFields = [...]string{
	"query_start_loc", "query_start_loc_cpu", "seq_lens", "seq_lens_cpu",
	"num_computed_tokens_cpu", "block_table_tensor", "slot_mapping", "logits_indices_padded",
	"positions", "is_prefilling", "causal_per_req", "dcp_local_seq_lens",
	"dcp_local_seq_lens_cpu", "seq_lens_cpu_upper_bound", "encoder_seq_lens",
	"encoder_seq_lens_cpu",
}

const numMetadataTensors = len(metadataFields)

func (m *CommonAttnMetadata) tensorFields() [numMetadataTensors]**Tensor {
	return [numMetadataTensors]**Tensor{
		&m.QueryStartLoc, &m.QueryStartLocCPU, &m.SeqLens, &m.SeqLensCPU,
		&m.NumComputedTokensCPU, &m.BlockTableTensor, &m.SlotMapping, &m.LogitsIndicesPadded,
		&m.Positions, &m.IsPrefilling, &m.CausalPerReq, &m.DCPLocalSeqLens,
		&m.DCPLocalSeqLensCPU, &m.SeqLensCPUUpperBound, &m.EncoderSeqLens, &m.EncoderSeqLensCPU,
	}
}

func metadataTensorFields(c cMetadata) [numMetadataTensors]*cTensor {
	return [numMetadataTensors]*cTensor{
		&c.query_start_loc, &c.query_start_loc_cpu, &c.seq_lens, &c.seq_lens_cpu,
		&c.num_computed_tokens_cpu, &c.block_table_tensor, &c.slot_mapping,
		&c.logits_indices_padded, &c.positions, &c.is_prefilling, &c.causal_per_req,
		&c.dcp_local_seq_lens, &c.dcp_local_seq_lens_cpu, &c.seq_lens_cpu_upper_bound,
		&c.encoder_seq_lens, &c.encoder_seq_lens_cpu,
	}
}

// metadata returns the C struct for m (NULL for nil), once per frame, so that an output that
// is the input itself stays the same struct on the C side.
func (f *frame) metadata(arg string, m *CommonAttnMetadata) (cMetadata, error) {
	if m == nil {
		return nil, nil
	}
	for _, e := range f.metadatas {
		if e.m == m {
			return e.c, nil
		}
	}
	c := cArgs[C.cattn_common_attn_metadata_t](f)
	goFields, cFields := m.tensorFields(), metadataTensorFields(c)
	for i, name := range metadataFields {
		t, err := f.tensor(arg+"->"+name, *goFields[i])
		if err != nil {
			return nil, err
		}
		*cFields[i] = t
	}
	c.num_reqs = C.int64_t(m.NumReqs)
	c.num_actual_tokens = C.int64_t(m.NumActualTokens)
	c.max_query_len = C.int64_t(m.MaxQueryLen)
	c.max_seq_len = C.int64_t(m.MaxSeqLen)
	c.num_logits_indices = C.int64_t(m.NumLogitsIndices)
	c.max_logits_per_req = C.int64_t(m.MaxLogitsPerReq)
	if !m.NonCausal {
		c.causal = 1
	}
	f.metadatas = append(f.metadatas, metadataEntry{m, c})
	return c, nil
}

// readMetadata copies what libcattn wrote into c back into m: the scalars, and each tensor
// field as the *Tensor whose DLTensor it points to.
func (f *frame) readMetadata(c cMetadata, m *CommonAttnMetadata) error {
	goFields, cFields := m.tensorFields(), metadataTensorFields(c)
	var mapped [numMetadataTensors]*Tensor
	for i := range cFields {
		t, ok := f.goTensor(*cFields[i])
		if !ok {
			return f.goError(&Error{Code: StatusInternal, Message: f.fn + ": the library wrote a " +
				metadataFields[i] + " tensor that is none of the call's arguments"})
		}
		mapped[i] = t
	}
	for i := range goFields {
		*goFields[i] = mapped[i]
	}
	m.NumReqs = int64(c.num_reqs)
	m.NumActualTokens = int64(c.num_actual_tokens)
	m.MaxQueryLen = int64(c.max_query_len)
	m.MaxSeqLen = int64(c.max_seq_len)
	m.NumLogitsIndices = int64(c.num_logits_indices)
	m.NonCausal = c.causal == 0
	m.MaxLogitsPerReq = int64(c.max_logits_per_req)
	if m.MaxLogitsPerReq < 0 {
		m.MaxLogitsPerReq = 0 // CATTN_NOT_GIVEN
	}
	return nil
}

func (f *frame) newMetadataOut() cMetadata {
	return cArgs[C.cattn_common_attn_metadata_t](f)
}
