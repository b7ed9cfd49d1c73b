// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// --- Conformance vectors ----------------------------------------------------------------------

// vectorsDir finds tests/vectors: $CATTN_VECTORS_DIR, or the repository's folder two levels
// up. Outside the repository (a module copy) the vector tests skip, unless the variable is set.
func vectorsDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("CATTN_VECTORS_DIR"); dir != "" {
		return dir
	}
	dir := filepath.Join("..", "..", "tests", "vectors")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("conformance vectors not found at %s (set CATTN_VECTORS_DIR): %v", dir, err)
	}
	return dir
}

// loadCases reads tests/vectors/<utility>.json into one T per case.
func loadCases[T any](t *testing.T, utility string) []T {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(vectorsDir(t), utility+".json"))
	if err != nil {
		t.Fatalf("reading vectors: %v", err)
	}
	var file struct {
		Utility string `json:"utility"`
		Cases   []T    `json:"cases"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatalf("parsing %s vectors: %v", utility, err)
	}
	if file.Utility != utility {
		t.Fatalf("vector file names utility %q, expected %q", file.Utility, utility)
	}
	if len(file.Cases) == 0 {
		t.Fatalf("no %s vectors", utility)
	}
	return file.Cases
}

// jfloat is a JSON number that the generators write as a string when it is not finite
// ("nan", "inf", "-inf").
type jfloat float64

func (f *jfloat) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		switch strings.ToLower(s) {
		case "nan":
			*f = jfloat(math.NaN())
		case "inf", "infinity":
			*f = jfloat(math.Inf(1))
		case "-inf", "-infinity":
			*f = jfloat(math.Inf(-1))
		default:
			return errors.New("unexpected float string " + strconv.Quote(s))
		}
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = jfloat(v)
	return nil
}

// sameFloat is equality that treats NaN as equal to NaN and tells -0.0 from 0.0, for checking
// that values were carried through unchanged.
func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

func flatten(rows [][]int64) []int64 {
	out := []int64{}
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

// unsetenv removes an environment variable for the rest of the test (t.Setenv restores it).
// With cgo, os.Setenv and os.Unsetenv update the C environment that getenv reads.
func unsetenv(t *testing.T, key string) {
	t.Helper()
	t.Setenv(key, "")
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}

// --- Errors -----------------------------------------------------------------------------------

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// wantError checks that err is an *Error (through errors.As) with the code and a message that
// contains every needle, in Go terms (Message) or in C terms (CMessage, so that a test may
// name the C argument libcattn checked); it returns the error. Every Message must be in Go
// terms: it starts with the Go function, and no C path ("args->x") is left in it.
func wantError(t *testing.T, err error, code Status, needles ...string) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("expected %v, got success", code)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *cattn.Error", err, err)
	}
	if e.Code != code {
		t.Fatalf("expected %v, got %v: %s", code, e.Code, e.Message)
	}
	if !errors.Is(err, code) {
		t.Fatalf("errors.Is(err, %v) is false", code)
	}
	for _, n := range needles {
		if !strings.Contains(e.Message, n) && !strings.Contains(e.CMessage, n) {
			t.Fatalf("message %q (C: %q) does not mention %q", e.Message, e.CMessage, n)
		}
	}
	if !strings.HasPrefix(e.Message, "cattn.") || cPath.MatchString(e.Message) {
		t.Fatalf("message %q is not in Go terms (C: %q)", e.Message, e.CMessage)
	}
	return e
}

// cPath matches a C argument path ("args->x", "desc->dcp"), which a Go message must not hold.
var cPath = regexp.MustCompile(`[a-z0-9_]->[a-z_]`)

func wantEqual[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// --- Host index tensors over poisoned, optionally strided storage -----------------------------

const poison = -0x5A5A5A5A

// ibuf is an int32 or int64 host tensor whose elements lie `step` apart in every dimension
// (compact strides times step) after an offset of `off` elements, over storage filled with a
// poison value, so that tests can see what a call wrote and what it left alone.
type ibuf struct {
	t       *Tensor
	i32     []int32
	i64     []int64
	shape   []int64
	strides []int64
	off     int64
}

func newIBuf(dt DType, shape []int64, step, off int64) *ibuf {
	b := &ibuf{shape: append([]int64(nil), shape...), off: off}
	b.strides = make([]int64, len(shape))
	numel, span := int64(1), int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		b.strides[i] = numel * step
		numel *= shape[i]
	}
	for i := range shape {
		if shape[i] == 0 {
			span = 0
			break
		}
		span += (shape[i] - 1) * b.strides[i]
	}
	n := int(off+span) + 2
	switch dt {
	case Int32:
		b.i32 = make([]int32, n)
		for i := range b.i32 {
			b.i32[i] = poison
		}
		b.t = Int32Tensor(b.i32, shape...)
	case Int64:
		b.i64 = make([]int64, n)
		for i := range b.i64 {
			b.i64[i] = poison
		}
		b.t = Int64Tensor(b.i64, shape...)
	default:
		panic("ibuf: index dtype only")
	}
	if step != 1 {
		b.t.WithStrides(b.strides...)
	}
	b.t.WithByteOffset(uint64(off) * uint64(dt.Size()))
	return b
}

func ibufOf(dt DType, values []int64, step, off int64) *ibuf {
	b := newIBuf(dt, []int64{int64(len(values))}, step, off)
	for i, v := range values {
		b.set(int64(i), v)
	}
	return b
}

func ibuf2D(dt DType, rows [][]int64, step int64) *ibuf {
	cols := int64(0)
	if len(rows) > 0 {
		cols = int64(len(rows[0]))
	}
	b := newIBuf(dt, []int64{int64(len(rows)), cols}, step, 1)
	for i, v := range flatten(rows) {
		b.set(int64(i), v)
	}
	return b
}

// pos maps a row-major element index to its storage index.
func (b *ibuf) pos(i int64) int64 {
	p := b.off
	for d := len(b.shape) - 1; d >= 0; d-- {
		p += (i % b.shape[d]) * b.strides[d]
		i /= b.shape[d]
	}
	return p
}

func (b *ibuf) numel() int64 {
	n := int64(1)
	for _, d := range b.shape {
		n *= d
	}
	return n
}

func (b *ibuf) set(i, v int64) {
	if b.i32 != nil {
		b.i32[b.pos(i)] = int32(v)
	} else {
		b.i64[b.pos(i)] = v
	}
}

func (b *ibuf) get(i int64) int64 {
	if b.i32 != nil {
		return int64(b.i32[b.pos(i)])
	}
	return b.i64[b.pos(i)]
}

// values returns the elements in row-major order.
func (b *ibuf) values() []int64 {
	out := make([]int64, b.numel())
	for i := range out {
		out[i] = b.get(int64(i))
	}
	return out
}

// raw returns a copy of the whole storage, poison included.
func (b *ibuf) raw() []int64 {
	if b.i32 != nil {
		out := make([]int64, len(b.i32))
		for i, v := range b.i32 {
			out[i] = int64(v)
		}
		return out
	}
	return append([]int64(nil), b.i64...)
}

var indexTypes = []DType{Int32, Int64}

func dtypeName(d DType) string {
	if d == Int32 {
		return "int32"
	}
	return "int64"
}

func otherIndexType(d DType) DType {
	if d == Int32 {
		return Int64
	}
	return Int32
}

// wantMetadata checks every field of got against want, tensor fields by identity (the same
// *Tensor), which reflect.DeepEqual would not.
func wantMetadata(t *testing.T, what string, got, want *CommonAttnMetadata) {
	t.Helper()
	g, w := got.tensorFields(), want.tensorFields()
	for i := range g {
		if *g[i] != *w[i] {
			t.Fatalf("%s: %s is %p, want %p", what, metadataFields[i], *g[i], *w[i])
		}
	}
	gs := [...]int64{got.NumReqs, got.NumActualTokens, got.MaxQueryLen, got.MaxSeqLen,
		got.NumLogitsIndices, got.MaxLogitsPerReq}
	ws := [...]int64{want.NumReqs, want.NumActualTokens, want.MaxQueryLen, want.MaxSeqLen,
		want.NumLogitsIndices, want.MaxLogitsPerReq}
	if gs != ws || got.NonCausal != want.NonCausal {
		t.Fatalf("%s: scalars %v non-causal %v, want %v non-causal %v", what, gs, got.NonCausal, ws,
			want.NonCausal)
	}
}

// --- One-call helpers -------------------------------------------------------------------------

// asIndex converts int64 vector values to T (the vectors fit int32 where a test uses it).
func asIndex[T Index](v []int64) []T {
	if v == nil {
		return nil
	}
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = T(x)
	}
	return out
}

// asInt64 converts back, for comparing with the vectors.
func asInt64[T Index](v []T) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

func asRows[T Index](rows [][]int64) [][]T {
	out := make([][]T, len(rows))
	for i, r := range rows {
		out[i] = asIndex[T](r)
	}
	return out
}

func rowsInt64[T Index](rows [][]T) [][]int64 {
	out := make([][]int64, len(rows))
	for i, r := range rows {
		out[i] = asInt64(r)
	}
	return out
}

// fitsInt32 reports whether every value fits int32, so that a vector can run on int32 slices.
func fitsInt32(vs ...[]int64) bool {
	for _, v := range vs {
		for _, x := range v {
			if x < math.MinInt32 || x > math.MaxInt32 {
				return false
			}
		}
	}
	return true
}
