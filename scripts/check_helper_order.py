#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that the one-call helpers of C++, Rust and Go take their parameters in one order: the
field order of the C args struct of the call they make.

A one-call helper (cattn.hpp's functions documented "One-call", and its size queries; the Rust
crate's and the Go module's helpers listed in HELPERS, every Rust `*_host` and Go `*Host`
function among them) takes host data and returns its outputs. Its parameters stand for fields
of the C call's args struct, and each layer names them in its own case: C snake_case is Rust's
snake_case and Go's camelCase (`query_start_loc`, `queryStartLoc`). A parameter's place is its
field's place in the struct, a nested struct's fields placed inside their field
(`metadata.query_start_loc` under `metadata`); a parameter that holds several fields (a params
struct of the scalars, `params` -> `block_size`, ...) takes its first field's place. The
parameters of every helper must come in strictly increasing place: two plain integers such as
`num_reqs` and `num_new_sampled_tokens` then never swap between the layers. A parameter the
struct has no field for is named in its helper's `aliases` (a field path, or None for a
parameter that is no field, which is then left out of the order); one that neither matches nor
is listed fails, as does a helper of a layer that HELPERS does not list, so that a new helper
is checked from its first commit.

Usage: scripts/check_helper_order.py [--root DIR] [--quiet]
  --root DIR  the tree to check (default: this script's repository)
  --quiet     print only the failures and the summary

Prints each helper's parameters per layer with their fields, then every failure as
"<layer> <helper>: ..." naming the first parameter out of order; ends with a summary line in
ctest's form (one "test" per helper and layer), which scripts/test.sh's ctest_counts reads.
Exit status 1 on any failure. CTest runs it as `one_call_helper_order` (tests/CMakeLists.txt).
"""

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple


@dataclass(frozen=True)
class Helper:
    """One C call's one-call helpers in the three layers."""

    # the C args struct whose field order rules (or a C function of positional parameters);
    # None: a helper of one parameter
    struct: Optional[str]
    cpp: Tuple[str, ...] = ()  # cattn.hpp functions (each One-call overload of the name)
    rust: Tuple[str, ...] = ()  # free functions of bindings/rust/cattn/src
    go: Tuple[str, ...] = ()  # functions of bindings/go
    # parameter (snake_case) -> the field path it stands for, or None: no field (not ordered)
    aliases: Dict[str, Optional[str]] = field(default_factory=dict)


HELPERS: Tuple[Helper, ...] = (
    Helper("cattn_dcp_local_seq_lens_args_t", cpp=("get_dcp_local_seq_lens",),
           rust=("dcp_local_seq_lens", "dcp_local_seq_lens_all_ranks"),
           go=("DCPLocalSeqLens", "DCPLocalSeqLensAllRanks"),
           aliases={"rank": "dcp_rank", "interleave_size": "dcp_kv_cache_interleave_size",
                    "all_ranks": "dcp_rank"}),
    Helper("cattn_pcp_query_restore_idx_args_t", cpp=("get_pcp_query_restore_idx",),
           rust=("pcp_query_restore_idx",), go=("PCPQueryRestoreIdx",)),
    Helper("cattn_fused_pcp_qkv_select_args_t", cpp=("fused_pcp_qkv_select",),
           rust=("pcp_qkv_halves",), go=("FusedPCPQKVSelectOf",), aliases={"in": "q"}),
    Helper("cattn_causal_conv1d_metadata_args_t", cpp=("compute_causal_conv1d_metadata",),
           rust=("causal_conv1d_metadata",), go=("CausalConv1dMetadata",),
           aliases={"query_start_loc": "query_start_loc_cpu"}),
    Helper("cattn_extend_all_queries_by_n_args_t", cpp=("extend_all_queries_by_n",),
           rust=("queries_extended_by_n",), go=("ExtendAllQueriesByNOf",),
           aliases={"dcp": "dcp_size", "positions": None}),
    Helper("cattn_fast_prefill_metadata_args_t",
           cpp=("make_kv_sharing_fast_prefill_common_attn_metadata",),
           rust=("kv_sharing_fast_prefill_metadata",),
           go=("KVSharingFastPrefillCommonAttnMetadata",),
           aliases={"logits_indices": "metadata.logits_indices_padded"}),
    Helper("cattn_local_attention_args_t", cpp=("make_local_attention_virtual_batches",),
           rust=("local_attention_virtual_batches",), go=("LocalAttentionVirtualBatches",),
           aliases={"block_table": "metadata.block_table_tensor"}),
    Helper(None, cpp=("make_block_table",)),  # local_attention_plan's method: one parameter
    Helper("cattn_max_local_attention_virtual_batches_args_t",
           rust=("max_local_attention_virtual_batches",),
           go=("MaxLocalAttentionVirtualBatches",)),
    Helper("cattn_mamba_block_table_args_t", cpp=("mamba_get_block_table_tensor",),
           rust=("mamba_block_table",), go=("MambaBlockTable",),
           aliases={"mode": "mamba_cache_mode"}),
    Helper("cattn_split_decodes_and_prefills_args_t", rust=("split_query_start_loc",),
           go=("SplitQueryStartLoc",), aliases={"query_start_loc": "query_start_loc_cpu"}),
    Helper("cattn_split_decodes_prefills_and_extends_args_t",
           rust=("split_query_start_loc_with_extends",), go=("SplitQueryStartLocWithExtends",),
           aliases={"query_start_loc": "query_start_loc_cpu",
                    "seq_lens_upper_bound": "seq_lens_cpu_upper_bound"}),
    Helper("cattn_split_prefill_chunks_args_t", cpp=("split_prefill_chunks",),
           rust=("split_prefill_chunks",), go=("SplitPrefillChunks",),
           aliases={"seq_lens": "seq_lens_cpu"}),
    Helper("cattn_reorder_batch_args_t", cpp=("reorder_batch_to_split_decodes_and_prefills",),
           rust=("reorder_batch_to_split_decodes_and_prefills",),
           go=("ReorderBatchToSplitDecodesAndPrefills",),
           aliases={"scheduled": "num_scheduled_tokens", "computed": "num_computed_tokens",
                    "prompt": "num_prompt_tokens"}),
    Helper("cattn_naive_query_lens_args_t", cpp=("naive_query_lens",), rust=("query_lens",),
           go=("NaiveQueryLensOf",)),
    Helper("cattn_compute_num_computed_tokens_args_t", cpp=("compute_num_computed_tokens",),
           rust=("num_computed_tokens",), go=("NumComputedTokens",)),
    Helper("cattn_token_to_req_indices_args_t", cpp=("token_to_req_indices",),
           rust=("token_to_req_indices_vec",), go=("TokenToReqIndicesOf", "TokenToReqIndicesInt32"),
           aliases={"num_tokens": "metadata.num_actual_tokens"}),
    Helper("cattn_mm_prefix_range_tensor_args_t", cpp=("compute_mm_prefix_range_tensor",),
           rust=("mm_prefix_range_tensor",), go=("MMPrefixRangeTensor",),
           aliases={"ranges_per_request": "range_offsets", "per_request": "range_offsets"}),
    Helper("cattn_fill_mm_prefix_query_ranges_args_t", cpp=("fill_mm_prefix_query_ranges",),
           rust=("mm_prefix_query_ranges",), go=("MMPrefixQueryRanges",),
           aliases={"per_request": "range_offsets", "query_start_loc": "query_start_loc_cpu",
                    "seq_lens": "seq_lens_cpu"}),
    Helper("cattn_log2_lse_to_ln_args_t", cpp=("log2_lse_to_ln",), rust=("log2_lse_to_ln_vec",),
           go=("Log2LSEToLnOf",)),
    # The step inputs (1.2).
    Helper("cattn_prepare_pos_seq_lens_args_t", cpp=("prepare_pos_seq_lens",),
           rust=("prepare_pos_seq_lens_host",), go=("PreparePosSeqLensHost",)),
    Helper("cattn_gather_block_tables_args_t", cpp=("gather_block_tables",),
           rust=("gather_block_tables_host",), go=("GatherBlockTablesHost",)),
    Helper("cattn_compute_slot_mappings_args_t", cpp=("compute_slot_mappings",),
           rust=("compute_slot_mappings_host",), go=("ComputeSlotMappingsHost",),
           aliases={"params": "contract"}),
    Helper("cattn_combine_sampled_and_draft_tokens_args_t",
           cpp=("combine_sampled_and_draft_tokens",),
           rust=("combine_sampled_and_draft_tokens_host",),
           go=("CombineSampledAndDraftTokensHost",)),
    Helper("cattn_step_batch_check_args_t", cpp=("step_batch_check",),
           rust=("step_batch_check_host",), go=("StepBatchCheckHost",),
           aliases={"batch": "query_start_loc", "args": "query_start_loc"}),
    # The size queries: the 1.1 ones positional in C (their parameter list orders them), the
    # step inputs' positional in C++ and an args struct in Rust and Go.
    Helper("cattn_get_pcp_query_restore_idx_size", cpp=("get_pcp_query_restore_idx_size",),
           rust=("get_pcp_query_restore_idx_size",), go=("GetPCPQueryRestoreIdxSize",)),
    Helper("cattn_fused_pcp_qkv_select_size", cpp=("fused_pcp_qkv_select_size",),
           rust=("fused_pcp_qkv_select_size",)),
    Helper("cattn_compute_causal_conv1d_metadata_size",
           cpp=("compute_causal_conv1d_metadata_size",),
           rust=("compute_causal_conv1d_metadata_size",), go=("ComputeCausalConv1dMetadataSize",)),
    Helper("cattn_step_inputs_size_args_t", cpp=("step_inputs_size",)),
    # Speculative decoding (1.2).
    Helper("cattn_eagle_step_update_slot_mapping_and_metadata_args_t",
           cpp=("eagle_step_update_slot_mapping_and_metadata",),
           rust=("eagle_step_update_slot_mapping_and_metadata_host",),
           go=("EagleStepUpdateSlotMappingAndMetadataHost",), aliases={"params": "block_size"}),
    Helper("cattn_eagle_prepare_inputs_padded_args_t", cpp=("eagle_prepare_inputs_padded",),
           rust=("eagle_prepare_inputs_padded_host",), go=("EaglePrepareInputsPaddedHost",)),
    Helper("cattn_eagle_prepare_next_token_padded_args_t",
           cpp=("eagle_prepare_next_token_padded",),
           rust=("eagle_prepare_next_token_padded_host",),
           go=("EaglePrepareNextTokenPaddedHost",)),
    Helper("cattn_compute_new_slot_mapping_args_t", cpp=("compute_new_slot_mapping",),
           rust=("compute_new_slot_mapping_host",), go=("ComputeNewSlotMappingHost",),
           aliases={"params": "block_size"}),
    Helper("cattn_copy_and_expand_eagle_inputs_args_t", cpp=("copy_and_expand_eagle_inputs",),
           rust=("copy_and_expand_eagle_inputs_host",), go=("CopyAndExpandEagleInputsHost",),
           aliases={"params": "padding_token_id"}),
    Helper("cattn_update_num_computed_tokens_for_batch_change_args_t",
           rust=("update_num_computed_tokens_for_batch_change_host",),
           go=("UpdateNumComputedTokensForBatchChangeHost",)),
)

LAYERS = ("C++", "Rust", "Go")


# --- The C structs -------------------------------------------------------------------------------

def _strip_c_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def c_structs(header: Path) -> Dict[str, List[Tuple[str, str]]]:
    """typedef name (and struct tag) -> [(field, type)] in declaration order."""
    text = _strip_c_comments(header.read_text(encoding="utf-8"))
    structs: Dict[str, List[Tuple[str, str]]] = {}
    for m in re.finditer(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
        fields = []
        for decl in m.group(2).split(";"):
            decl = " ".join(decl.split())
            d = re.match(r"(.*?)(\w+)\s*(?:\[[^\]]*\])?$", decl)
            if d:
                fields.append((d.group(2), d.group(1).strip()))
        structs[m.group(1)] = structs[m.group(3)] = fields
    # typedef cattn_x_t cattn_y_t; (another name for a struct)
    for m in re.finditer(r"typedef\s+(cattn_\w+_t)\s+(cattn_\w+_t)\s*;", text):
        if m.group(1) in structs:
            structs[m.group(2)] = structs[m.group(1)]
    # A call of positional parameters (the 1.1 size queries) orders by its parameter list.
    for m in re.finditer(r"CATTN_API\s+[\w\s\*]*?\b(cattn_\w+)\s*\(([^)]*)\)", text):
        params = []
        for decl in m.group(2).split(","):
            d = re.match(r"(.*?)(\w+)\s*$", " ".join(decl.split()))
            if d and d.group(2) != "void":
                params.append((d.group(2), d.group(1).strip()))
        structs[m.group(1)] = params
    return structs


def field_key(structs, struct: str, path: str) -> Optional[Tuple[int, ...]]:
    """The place of `path` ("metadata.query_start_loc") in `struct`, or None."""
    key = []
    fields = structs[struct]
    for part in path.split("."):
        names = [f for f, _ in fields]
        if part not in names:
            return None
        i = names.index(part)
        key.append(i)
        nested = re.search(r"cattn_\w+_t", fields[i][1])
        fields = structs.get(nested.group(0), []) if nested else []
    return tuple(key)


def resolve(structs, helper: Helper, param: str) -> Tuple[Optional[str], Optional[Tuple[int, ...]]]:
    """The field path a parameter stands for and its place; (None, None) when it is no field,
    ("?", None) when nothing matches."""
    if param in helper.aliases:
        path = helper.aliases[param]
        if path is None:
            return None, None
        return path, field_key(structs, helper.struct, path)
    for path in (param, param + "_cpu"):
        key = field_key(structs, helper.struct, path)
        if key is not None:
            return path, key
    # A field of a nested struct (the metadata), under its field.
    for name, ty in structs[helper.struct]:
        nested = re.search(r"cattn_\w+_t", ty)
        if not nested or nested.group(0) not in structs:
            continue
        for path in (f"{name}.{param}", f"{name}.{param}_cpu"):
            key = field_key(structs, helper.struct, path)
            if key is not None:
                return path, key
    return "?", None


# --- Signatures ----------------------------------------------------------------------------------

def split_top(params: str) -> List[str]:
    """Splits a parameter list at the commas outside brackets."""
    out, depth, cur = [], 0, []
    for ch in params:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur))
    return [p.strip() for p in out if p.strip()]


def _balanced(text: str, start: int) -> Tuple[str, int]:
    """The text inside the parenthesis opening at text[start], and the index after it."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:i], i + 1
    raise ValueError("unbalanced parentheses")


# (file:line, whether it is a one-call helper, parameter names)
Signature = Tuple[str, bool, List[str]]


def cpp_helpers(root: Path) -> Dict[str, List[Signature]]:
    """cattn.hpp's documented functions (a /** */ comment, then the declaration): name ->
    signatures, those documented "One-call" marked."""
    path = root / "include/cattn.hpp"
    text = path.read_text(encoding="utf-8")
    found: Dict[str, List[Signature]] = {}
    for m in re.finditer(
            r"/\*\*((?:(?!\*/).)*)\*/\s*((?:template\s*<[^;{]*?>\s*)?[^;{}()#/]*?\b(\w+)\s*)\(",
            text, re.S):
        doc, name = m.group(1), m.group(3)
        params, _ = _balanced(text, m.end() - 1)
        names = []
        for p in split_top(params):
            p = p.split("=")[0].strip()
            names.append(re.findall(r"\w+", p)[-1])
        line = text[:m.start(3)].count("\n") + 1
        found.setdefault(name, []).append((f"include/cattn.hpp:{line}", "One-call" in doc, names))
    return found


def _skip_generics(text: str, i: int) -> int:
    """The index past the generic parameters `<...>` at text[i] (i itself when there are none)."""
    if text[i] != "<":
        return i
    depth = 0
    for j in range(i, len(text)):
        depth += {"<": 1, ">": -1}.get(text[j], 0)
        if depth == 0:
            return j + 1
    raise ValueError("unbalanced generics")


def rust_helpers(root: Path) -> Dict[str, List[Signature]]:
    """The crate's top-level `pub fn`s: name -> signatures."""
    found: Dict[str, List[Signature]] = {}
    for path in sorted((root / "bindings/rust/cattn/src").glob("*.rs")):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"^pub fn (\w+)\s*", text, re.M):
            start = _skip_generics(text, m.end())
            if text[start] != "(":
                continue
            params, _ = _balanced(text, start)
            names = [p.split(":")[0].strip().removeprefix("mut ") for p in split_top(params)]
            rel = path.relative_to(root).as_posix()
            line = text[:m.start()].count("\n") + 1
            found.setdefault(m.group(1), []).append((f"{rel}:{line}", True, names))
    return found


def go_helpers(root: Path) -> Dict[str, List[Signature]]:
    """The package's exported functions (not methods, not tests): name -> signatures."""
    found: Dict[str, List[Signature]] = {}
    for path in sorted((root / "bindings/go").glob("*.go")):
        if path.name.endswith("_test.go"):
            continue
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"^func ([A-Z]\w*)\s*(?:\[[^\]]*\])?\s*\(", text, re.M):
            params, _ = _balanced(text, m.end() - 1)
            names = [p.split()[0] for p in split_top(params)]
            rel = path.relative_to(root).as_posix()
            line = text[:m.start()].count("\n") + 1
            found.setdefault(m.group(1), []).append((f"{rel}:{line}", True, names))
    return found


def snake(name: str) -> str:
    """A Rust or Go parameter name in C's snake_case: queryStartLoc -> query_start_loc,
    targetTokenIDs -> target_token_ids."""
    s = name.replace("IDs", "Ids")
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


# --- The check -----------------------------------------------------------------------------------

def check_signature(structs, helper: Helper, layer: str, name: str, sig: Signature,
                    quiet: bool) -> List[str]:
    where, _, params = sig
    if helper.struct is None:
        if len(params) > 1:
            return [f"{layer} {name} ({where}): {len(params)} parameters, but HELPERS gives it no "
                    "C struct to order them by"]
        if not quiet:
            print(f"  {layer:4} {name}({', '.join(params)}): one parameter")
        return []
    placed = []
    errors = []
    for p in params:
        path, key = resolve(structs, helper, snake(p))
        if path == "?" or (path is not None and key is None):
            errors.append(f"{layer} {name} ({where}): parameter `{p}` stands for no field of "
                          f"{helper.struct} (add it to the helper's aliases in "
                          "scripts/check_helper_order.py)")
            continue
        placed.append((p, path, key))
    if not quiet:
        shown = ", ".join(f"{p}={path or '-'}" for p, path, _ in placed)
        print(f"  {layer:4} {name}({shown})")
    ordered = [(p, path, key) for p, path, key in placed if key is not None]
    for (prev, prev_path, prev_key), (p, path, key) in zip(ordered, ordered[1:]):
        if key <= prev_key:
            errors.append(
                f"{layer} {name} ({where}): parameter `{p}` ({helper.struct}.{path}) is out of "
                f"order: it follows `{prev}` ({prev_path}), which the struct places "
                f"{'at the same field' if key == prev_key else 'after it'}; order the "
                "parameters by the struct's fields")
            break
    return errors


def self_test(structs) -> List[str]:
    """The check itself, on the case that asked for it: combine's two plain integers
    (`numReqs`, `numNewSampledTokens`) swapped, and a parameter that names no field. Returns
    what it failed to catch."""
    combine = next(h for h in HELPERS
                   if h.struct == "cattn_combine_sampled_and_draft_tokens_args_t")
    missed = []
    for params, want in (
            (["numReqs", "queryStartLoc", "numNewSampledTokens", "numDraftTokens", "idxMapping"],
             "Go CombineSampledAndDraftTokensHost (self-test): parameter `queryStartLoc`"),
            (["numNewSampledTokens", "queryStartLoc", "numLiveRows"],
             "Go CombineSampledAndDraftTokensHost (self-test): parameter `numLiveRows` stands "
             "for no field")):
        errs = check_signature(structs, combine, "Go", "CombineSampledAndDraftTokensHost",
                               ("self-test", True, params), quiet=True)
        if not any(e.startswith(want) for e in errs):
            missed.append(f"self-test: {params} gave {errs}, expected a failure starting "
                          f"\"{want}\"")
    return missed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    root = args.root.resolve()
    structs = c_structs(root / "include/cattn.h")
    found = {"C++": cpp_helpers(root), "Rust": rust_helpers(root), "Go": go_helpers(root)}
    listed = {layer: set() for layer in LAYERS}
    errors: List[str] = self_test(structs)
    tests, failed = 1, 1 if errors else 0
    for helper in HELPERS:
        if helper.struct is not None and helper.struct not in structs:
            errors.append(f"HELPERS names {helper.struct}, which include/cattn.h does not declare")
            failed += 1
            tests += 1
            continue
        if not args.quiet:
            print(f"== {helper.struct or '(one parameter)'}")
        for layer, names in zip(LAYERS, (helper.cpp, helper.rust, helper.go)):
            for name in names:
                listed[layer].add(name)
                tests += 1
                sigs = found[layer].get(name, [])
                # C++: the name's one-call overloads (a size query has no other).
                if layer == "C++" and any(one_call for _, one_call, _ in sigs):
                    sigs = [s for s in sigs if s[1]]
                if not sigs:
                    errors.append(f"{layer} {name}: HELPERS lists it, but the layer has no such "
                                  "helper")
                    failed += 1
                    continue
                errs = []
                for sig in sigs:
                    errs += check_signature(structs, helper, layer, name, sig, args.quiet)
                errors += errs
                failed += 1 if errs else 0
    # Every helper of a layer is listed: C++'s documented one-call helpers and size queries,
    # Rust's *_host and Go's *Host functions.
    unlisted = [("C++", n) for n, sigs in found["C++"].items()
                if n not in listed["C++"] and any(one_call for _, one_call, _ in sigs)]
    unlisted += [("Rust", n) for n in found["Rust"] if n.endswith("_host") and n not in listed["Rust"]]
    unlisted += [("Go", n) for n in found["Go"] if n.endswith("Host") and n not in listed["Go"]]
    for layer, name in unlisted:
        errors.append(f"{layer} {name}: a one-call helper that HELPERS does not list (add it, "
                      "with its C struct, to scripts/check_helper_order.py)")
        tests += 1
        failed += 1
    print(f"== {len(errors)} failure{'' if len(errors) == 1 else 's'}")
    for e in errors:
        print(f"  {e}")
    # ctest's summary line, for scripts/test.sh's ctest_counts.
    print(f"{100 * (tests - failed) // max(tests, 1)}% tests passed, {failed} tests failed out "
          f"of {tests}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
