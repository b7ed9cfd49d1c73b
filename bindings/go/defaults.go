// SPDX-License-Identifier: Apache-2.0

package cattn

// Zero values and the C *_INIT defaults.
//
// The zero value of every argument struct of this package is the C struct's *_INIT value:
// leaving a field out gives the header's default, never a surprise. Three rules get there:
//
//   - A field whose zero value C refuses (a size or count that must be >= 1) means the
//     default when it is 0: DCPSize and InterleaveSize 1, BlockM 8, PCPWorldSize 1, a step
//     plan's Mamba.BlockSize 1.
//   - A field whose C default is not zero and whose zero is also a valid value is either
//     named so that its zero value is the default (CommonAttnMetadata.NonCausal: false is
//     causal; Ranks of type DCPRanks: the zero value is every rank, DCPRank(r) is one), or a
//     pointer whose nil is the default (ExtendAllQueriesByNArgs.N and StepExtendParams.N: nil
//     is 1, SplitOptions.DecodeThreshold: nil is 1); Ptr makes the pointer.
//   - A count whose C default is "derive it" and whose zero is what the derivation gives for
//     the batches where 0 is right: SplitBatch.NumActualTokens and MaxQueryLen, 0 is
//     CATTN_FROM_QUERY_START_LOC (libcattn derives them from QueryStartLocCPU).
//   - Every other field's C default is zero already.
//
// A utility has one rule per value: a one-call helper's parameter that is one of its args
// struct's fields follows that field's rule (FusedPCPQKVSelectOf's pcpWorldSize: 0 means 1,
// as FusedPCPQKVSelectArgs.PCPWorldSize). Other positional parameters
// (GetPCPQueryRestoreIdx's, the one-call helpers' sizes) are passed to libcattn as given, and
// structs that describe data rather than arguments (AttentionLayer,
// PerLayerParameters) have no defaults: their fields are the layer's.

// Ptr returns a pointer to a copy of v, for the optional fields whose nil is the C default:
//
//	cattn.ExtendAllQueriesByNArgs{Metadata: md, Out: md, N: cattn.Ptr[int64](2)}
func Ptr[T any](v T) *T { return &v }

// orDefault returns *p, or def when p is nil.
func orDefault(p *int64, def int64) int64 {
	if p == nil {
		return def
	}
	return *p
}

// nonZero returns v, or def when v is 0 (a value C refuses, standing for its default).
func nonZero(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}
