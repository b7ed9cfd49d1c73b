// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import (
	"reflect"
	"strings"
)

// Messages in Go terms, from tables. libcattn's messages have the form "<function>:
// <argument> <problem> (got X, expected Y)", naming the C function and the C path of the
// argument ("cattn_get_dcp_local_seq_lens: args->dcp_rank ..."). A frame translates them:
//
//   - the leading function becomes the Go entry point ("cattn.GetDCPLocalSeqLens");
//   - the argument, and any other word of the message that is a C path of the call, is looked
//     up: first in the call's own table (callNames.renames: C path -> Go path, for positional
//     parameters and fields named differently, "args->dcp_rank" -> "args.Ranks"), the longest
//     entry that the path starts with; a path under "args" that no entry covers keeps the root
//     "args". Each "->field" after the matched part then becomes ".Field" through goFieldNames,
//     the table of C field names to Go field names; "[i]" indices are kept.
//
// goFieldNames is built once from the structs themselves: each Go argument struct is paired
// with its C struct, and a C field goes to the Go field whose name is the same but for case
// and underscores ("pcp_world_size" -> "PCPWorldSize"). Fields named differently in Go are
// in the calls' tables; TestGoFieldNames lists the C fields with no Go field.

// callNames is what a frame translates with: the C function, the Go one, and C path -> Go
// path pairs.
type callNames struct {
	c, goName string
	renames   []string // c0, go0, c1, go1, ...; of two equal c, the later wins
}

// The Go argument structs and the C structs they become, for goFieldNames. Nested structs
// (StepPlanDesc's DCP, ...) are paired through the fields that hold them.
var fieldPairs = [][2]reflect.Type{
	{reflect.TypeOf(C.cattn_causal_conv1d_metadata_args_t{}), reflect.TypeOf(CausalConv1dMetadataArgs{})},
	{reflect.TypeOf(C.cattn_causal_conv1d_metadata_capturable_args_t{}), reflect.TypeOf(CausalConv1dMetadataCapturableArgs{})},
	{reflect.TypeOf(C.cattn_extend_all_queries_by_n_args_t{}), reflect.TypeOf(ExtendAllQueriesByNArgs{})},
	{reflect.TypeOf(C.cattn_fused_pcp_qkv_select_args_t{}), reflect.TypeOf(FusedPCPQKVSelectArgs{})},
	{reflect.TypeOf(C.cattn_dcp_local_seq_lens_args_t{}), reflect.TypeOf(DCPLocalSeqLensArgs{})},
	{reflect.TypeOf(C.cattn_kv_cache_layout_args_t{}), reflect.TypeOf(KVCacheLayoutArgs{})},
	{reflect.TypeOf(C.cattn_resolve_kv_cache_layout_args_t{}), reflect.TypeOf(ResolveKVCacheLayoutArgs{})},
	{reflect.TypeOf(C.cattn_fast_prefill_metadata_args_t{}), reflect.TypeOf(FastPrefillMetadataArgs{})},
	{reflect.TypeOf(C.cattn_local_attention_args_t{}), reflect.TypeOf(LocalAttentionArgs{})},
	{reflect.TypeOf(C.cattn_local_attention_capturable_args_t{}), reflect.TypeOf(LocalAttentionCapturableArgs{})},
	{reflect.TypeOf(C.cattn_mamba_block_table_args_t{}), reflect.TypeOf(MambaBlockTableArgs{})},
	{reflect.TypeOf(C.cattn_common_attn_metadata_t{}), reflect.TypeOf(CommonAttnMetadata{})},
	{reflect.TypeOf(C.cattn_pcp_kv_allgather_and_restore_args_t{}), reflect.TypeOf(PCPKVAllgatherAndRestoreArgs{})},
	{reflect.TypeOf(C.cattn_split_decodes_and_prefills_args_t{}), reflect.TypeOf(SplitBatch{})},
	{reflect.TypeOf(C.cattn_split_decodes_and_prefills_args_t{}), reflect.TypeOf(SplitOptions{})},
	{reflect.TypeOf(C.cattn_split_decodes_and_prefills_capturable_args_t{}), reflect.TypeOf(SplitCapturableBatch{})},
	{reflect.TypeOf(C.cattn_step_plan_desc_t{}), reflect.TypeOf(StepPlanDesc{})},
	{reflect.TypeOf(C.cattn_step_batch_t{}), reflect.TypeOf(StepBatch{})},
	{reflect.TypeOf(C.cattn_step_outputs_t{}), reflect.TypeOf(StepOutputs{})},
	{reflect.TypeOf(C.cattn_kv_group_params_t{}), reflect.TypeOf(KVGroupParams{})},
	{reflect.TypeOf(C.cattn_prepare_pos_seq_lens_args_t{}), reflect.TypeOf(PreparePosSeqLensArgs{})},
	{reflect.TypeOf(C.cattn_gather_block_tables_args_t{}), reflect.TypeOf(GatherBlockTablesArgs{})},
	{reflect.TypeOf(C.cattn_compute_slot_mappings_args_t{}), reflect.TypeOf(ComputeSlotMappingsArgs{})},
	{reflect.TypeOf(C.cattn_compute_slot_mappings_args_t{}), reflect.TypeOf(SlotMappingParams{})},
	{reflect.TypeOf(C.cattn_combine_sampled_and_draft_tokens_args_t{}), reflect.TypeOf(CombineSampledAndDraftTokensArgs{})},
	{reflect.TypeOf(C.cattn_step_batch_check_args_t{}), reflect.TypeOf(StepBatchCheckArgs{})},
	{reflect.TypeOf(C.cattn_step_inputs_size_args_t{}), reflect.TypeOf(StepInputsSizeArgs{})},
	{reflect.TypeOf(C.cattn_eagle_step_update_slot_mapping_and_metadata_args_t{}), reflect.TypeOf(EagleStepUpdateSlotMappingAndMetadataArgs{})},
	{reflect.TypeOf(C.cattn_eagle_step_update_slot_mapping_and_metadata_args_t{}), reflect.TypeOf(EagleStepParams{})},
	{reflect.TypeOf(C.cattn_eagle_prepare_inputs_padded_args_t{}), reflect.TypeOf(EaglePrepareInputsPaddedArgs{})},
	{reflect.TypeOf(C.cattn_eagle_prepare_next_token_padded_args_t{}), reflect.TypeOf(EaglePrepareNextTokenPaddedArgs{})},
	{reflect.TypeOf(C.cattn_compute_new_slot_mapping_args_t{}), reflect.TypeOf(ComputeNewSlotMappingArgs{})},
	{reflect.TypeOf(C.cattn_compute_new_slot_mapping_args_t{}), reflect.TypeOf(NewSlotMappingParams{})},
	{reflect.TypeOf(C.cattn_copy_and_expand_eagle_inputs_args_t{}), reflect.TypeOf(CopyAndExpandEagleInputsArgs{})},
	{reflect.TypeOf(C.cattn_copy_and_expand_eagle_inputs_args_t{}), reflect.TypeOf(EagleExpandParams{})},
	{reflect.TypeOf(C.cattn_update_num_computed_tokens_for_batch_change_args_t{}), reflect.TypeOf(UpdateNumComputedTokensForBatchChangeArgs{})},
}

// goFieldNames maps a C field name to its Go field name; unmatched lists, per C struct, the
// fields no Go field matched (for TestGoFieldNames).
var goFieldNames, unmatchedCFields = buildGoFieldNames(fieldPairs)

// fold is a field name without case and underscores, the key C and Go names are matched by.
func fold(name string) string { return strings.ToLower(strings.ReplaceAll(name, "_", "")) }

// cFieldName is the C name of a cgo struct field (cgo prefixes Go keywords with "_").
func cFieldName(f reflect.StructField) string {
	if len(f.Name) > 1 && f.Name[0] == '_' {
		return f.Name[1:]
	}
	return f.Name
}

func buildGoFieldNames(pairs [][2]reflect.Type) (map[string]string, []string) {
	names := map[string]string{}
	var unmatched []string
	var pair func(c, g reflect.Type)
	pair = func(c, g reflect.Type) {
		byFold := map[string]reflect.StructField{}
		for i := 0; i < g.NumField(); i++ {
			if f := g.Field(i); f.IsExported() {
				byFold[fold(f.Name)] = f
			}
		}
		for i := 0; i < c.NumField(); i++ {
			cf := c.Field(i)
			name := cFieldName(cf)
			if name == "_" || name == "struct_size" {
				continue
			}
			gf, ok := byFold[fold(name)]
			if !ok {
				unmatched = append(unmatched, c.Name()+"."+name)
				continue
			}
			if _, seen := names[name]; !seen {
				names[name] = gf.Name
			}
			if cf.Type.Kind() == reflect.Struct && gf.Type.Kind() == reflect.Struct {
				pair(cf.Type, gf.Type)
			}
		}
	}
	for _, p := range pairs {
		pair(p[0], p[1])
	}
	return names, unmatched
}

// The C words of messages that are not paths, and their Go form.
var goWords = map[string]string{
	"NULL": "nil", "CATTN_DCP_ALL_RANKS": "cattn.AllDCPRanks", "DLTensor": "*Tensor",
}

// goRest converts the "->field", ".field" and "[index]" parts after a path's matched prefix.
func goRest(rest string) string {
	var b strings.Builder
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "->"), strings.HasPrefix(rest, "."):
			rest = strings.TrimPrefix(strings.TrimPrefix(rest, "->"), ".")
			n := strings.IndexAny(rest, "-.[")
			if n < 0 {
				n = len(rest)
			}
			field := rest[:n]
			if g, ok := goFieldNames[field]; ok {
				field = g
			}
			b.WriteString("." + field)
			rest = rest[n:]
		case strings.HasPrefix(rest, "["):
			n := strings.IndexByte(rest, ']') + 1
			if n == 0 {
				n = len(rest)
			}
			b.WriteString(rest[:n])
			rest = rest[n:]
		default: // not a path part: leave it
			b.WriteString(rest)
			rest = ""
		}
	}
	return b.String()
}

// goPath returns the Go spelling of one word of a message: a C path of the call, or a word of
// goWords; any other word is returned unchanged.
func (n *callNames) goPath(word string) string {
	if g, ok := goWords[word]; ok {
		return g
	}
	best, goPrefix := -1, ""
	consider := func(c, g string) {
		if len(c) < best || !strings.HasPrefix(word, c) {
			return
		}
		if len(word) > len(c) && !strings.HasPrefix(word[len(c):], "->") &&
			!strings.HasPrefix(word[len(c):], ".") && !strings.HasPrefix(word[len(c):], "[") {
			return // a longer word that merely starts with c
		}
		best, goPrefix = len(c), g
	}
	for i := 0; i+1 < len(n.renames); i += 2 {
		consider(n.renames[i], n.renames[i+1])
	}
	if best < 0 && strings.HasPrefix(word, "args->") {
		best, goPrefix = len("args"), "args"
	}
	if best < 0 {
		return word
	}
	return goPrefix + goRest(word[best:])
}

// translate rewrites a message in C terms into Go terms: the leading function name, the
// argument and every other word that is a path of the call.
func (n *callNames) translate(msg string) string {
	if n == nil || n.goName == "" {
		return msg
	}
	// Every C call a frame makes is on behalf of its Go entry point, so any libcattn function
	// leading the message (a one-call helper makes several) is that entry point's.
	head, rest := "", msg
	if fn, tail, ok := strings.Cut(msg, ": "); ok && (fn == n.c ||
		(strings.HasPrefix(fn, "cattn_") && !strings.ContainsAny(fn, " ()"))) {
		head, rest = "cattn."+n.goName+": ", tail
	}
	words := strings.Split(rest, " ")
	for i, w := range words {
		// The word without the punctuation around it: "(got NULL," has the word NULL, and
		// "args->q's" the path args->q.
		start := len(w) - len(strings.TrimLeft(w, "(\"'"))
		end := start
		for end < len(w) && isPathByte(w[end]) {
			end++
		}
		end = start + len(strings.TrimRight(w[start:end], ".-"))
		if start >= end {
			continue
		}
		words[i] = w[:start] + n.goPath(w[start:end]) + w[end:]
	}
	return head + strings.Join(words, " ")
}

// isPathByte reports whether b may be part of a C path ("args->metadata->seq_lens[3]").
func isPathByte(b byte) bool {
	return b == '_' || b == '-' || b == '>' || b == '.' || b == '[' || b == ']' ||
		'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}
