# SPDX-License-Identifier: Apache-2.0
"""EAGLE's speculative-decoding metadata side by side on one GPU: vLLM's six helpers of
vllm/v1/spec_decode/utils.py as its Python issues them, against libcattn's six calls
(include/cattn.h, "Speculative decoding (1.2)") through ctypes, on the same torch tensors, at
B = 1, 8, 64 and 256 requests with 1, 3 and 7 drafts per decode.

One drafter step, in the order an engine runs it (EAGLE with parallel drafting and a padded
drafter batch: P = drafts slots per request, shift_input_ids, N = P - 1 new tokens a request):
  1. update_num_computed_tokens_for_batch_change  (torch.compile; the oracle's backend, eager
     unless CATTN_ORACLE_COMPILE_BACKEND or --compile-backend says otherwise; vLLM's CUDA
     platform uses inductor)
  2. _eagle_prepare_next_token_padded              (Triton)
  3. _eagle_prepare_inputs_padded                  (Triton; reads 2's valid counts)
  4. _copy_and_expand_eagle_inputs                 (Triton; reads 2's next tokens)
  5. compute_new_slot_mapping                      (torch; reads 4's positions and rejected mask)
  6. eagle_step_update_slot_mapping_and_metadata   (Triton; the next drafting step)
(at d = 1 vLLM's EAGLE has no new slots, N = 0, and skips 4 and 5; they run here at every d, so
that every row times the same six calls), and libcattn's
cattn_update_num_computed_tokens_for_batch_change,
cattn_eagle_prepare_next_token_padded, cattn_eagle_prepare_inputs_padded,
cattn_copy_and_expand_eagle_inputs, cattn_compute_new_slot_mapping and
cattn_eagle_step_update_slot_mapping_and_metadata, one kernel each, args structs built once.
vLLM's functions and kernels are imported from the step-inputs oracle (block E); nothing of
vLLM's is copied here. Each side has its own outputs and its own copy of the state the calls
update in place (seq_lens, num_computed_tokens, num_accepted_tokens), and chains its own outputs
into its later calls; the step's inputs are shared. vLLM's glue between the calls
(query_end_loc = query_start_loc[1:] - 1 - num_rejected, its torch.empty of two outputs, the
CommonAttentionMetadata) is done once, outside the step, which favours vLLM.

The workload (fixed seed): B requests, B // 8 of them chunked-prefill rows at the end (16 to 128
tokens, no drafts, half of them partial: discarded), the others decodes of 1 + d tokens with a
random number of accepted drafts; contexts up to max_model_len 32768, block size 16, a
[B, 2048] int32 block table of ids below 2^20 (so vLLM's 32-bit `block * block_size` cannot wrap
and its slots equal libcattn's int64 ones); from B = 8 one decode ends at max_model_len, so the
clamps and -1 slots are exercised. The batch change: the previous batch had B rows, B // 8 rows
are new (-1) and a few pairs swapped; num_computed_tokens has 1024 rows. dtypes are vLLM's
(tests/gen/gen_spec_decode.py): int32 ids, counts and indices, int64 positions and slots, bool
masks.

Before anything is timed every output is checked equal, whole buffers (poisoned beforehand):
after one plain step from the same state, then after one replay of each side's captured step
from the state reset and the outputs poisoned again. vLLM's valid counts and rejected counts
are also checked against this script's numpy (the step's query_end_loc is built from them).
Any difference prints MISMATCH and exits 1; a libcattn error prints the library's message and
exits 1. Every capture must succeed but one: libcattn's, and vLLM's Triton kernels and
compute_new_slot_mapping (torch ops with no host sync, their outputs padded for CUDA graphs):
torch refusing one prints ERROR and exits 1. vLLM's torch.compile'd batch change is the
exception: vLLM does not rely on capturing it, and torch.compile under a capture can be refused,
so a refusal of it (or of the step holding it) is noted under the table, its graph columns read
"-" and the step's check uses vLLM's plain step. Only torch's own capture errors count as a
refusal (bench/graph_capture.py); any other exception is raised. Launches that torch.profiler
cannot count also fail the run, after the table.

The drafter products of the step plan run the same step as three plans (the batch change's;
the chain of next token, prepare inputs, copy and expand and new slot mapping in one launch;
the drafting step's), checked against vLLM after a plain step and a graph replay (past the
step the chain writes its sentinels), and timed in two more rows: "chain (plan: 1 launch)"
against vLLM's four chained calls, "step (3 plans)" against vLLM's six.

Timing, per call and for the whole step (median over --reps):
  plain  CUDA events around N Python iterations (vLLM: its functions; libcattn: the ctypes
         calls) / N, all on one non-default stream;
  graph  each side's launches captured once into a torch.cuda.CUDAGraph (the six calls in one,
         and each call alone in its own), events around N replays / N.
The table: B, drafts, call, vLLM plain us, libcattn plain us, ratio, vLLM graph us, libcattn
graph us, ratio (vLLM / libcattn). Goals (issue): the step at least 10x plain and 2x in graphs;
the last lines say where a step row falls short (reported, not a failure).

    python3 bench/spec_decode_side_by_side.py --lib build/libcattn.so [--oracle DIR] \\
        [--out F.md] [--json F.json]

The table also goes to --out (default: $OUT/spec_decode_side_by_side.md when $OUT is set).
Without a GPU (checks only: graph_capture.py's self-check of the capture helpers the GPU run
uses; vLLM's kernels under Triton's interpreter, libcattn's host calls on the same CPU tensors;
then every libcattn args struct again on views marked as CUDA memory, which a CPU-only build
must accept up to CATTN_NOT_SUPPORTED):

    /tmp/cattn-step-inputs-venv/bin/python bench/spec_decode_side_by_side.py \\
        --lib build-cpu/libcattn.so --device cpu

--oracle (default: $CATTN_ORACLE_STEP_INPUTS_DIR, else ../shared/oracle_upstream/step_inputs
beside the checkout) is the step-inputs oracle's folder: vllm_step_inputs.py and
_prelude_step_inputs.py, with vllm_upstream.py in the folder above it.
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_paths import STEP_INPUTS_ENV, step_inputs_oracle  # noqa: E402
from graph_capture import CaptureFailed, capture_optional, capture_required  # noqa: E402

# include/cattn.h
CATTN_NOT_SUPPORTED = 5
KDL_BOOL = 6

BLOCK_SIZE = 16
MAX_MODEL_LEN = 32768
TABLE_COLS = -(MAX_MODEL_LEN // -BLOCK_SIZE)  # 2048: cdiv(max_model_len, block_size)
BLOCK_ID_LIMIT = 1 << 20  # id * 16 + 15 stays far below 2^31
MAX_NUM_REQS = 1024       # rows of the persistent num_computed_tokens
VOCAB = 32000
PADDING_TOKEN_ID = 0
PARALLEL_DRAFTING_TOKEN_ID = VOCAB  # vLLM: the draft model's ptd token
POISON = -3
SLACK = 8                 # output entries past what a call writes, checked untouched

N_STEPS = 50              # Python iterations (or replays) between two events
DEVICE = "cuda"           # where the timed run puts its tensors

# (key, vLLM's function, libcattn's call, label in the table)
CALLS = [
    ("batch_change", "update_num_computed_tokens_for_batch_change",
     "cattn_update_num_computed_tokens_for_batch_change", "batch change"),
    ("next_token", "_eagle_prepare_next_token_padded", "cattn_eagle_prepare_next_token_padded",
     "next token"),
    ("prepare_inputs", "_eagle_prepare_inputs_padded", "cattn_eagle_prepare_inputs_padded",
     "prepare inputs"),
    ("copy_expand", "_copy_and_expand_eagle_inputs", "cattn_copy_and_expand_eagle_inputs",
     "copy and expand"),
    ("new_slots", "compute_new_slot_mapping", "cattn_compute_new_slot_mapping",
     "new slot mapping"),
    ("eagle_step", "eagle_step_update_slot_mapping_and_metadata",
     "cattn_eagle_step_update_slot_mapping_and_metadata", "eagle step"),
]
STEP_LABEL = "step (all six)"
# The step plan's drafter products (include/cattn.h): the chain of next token, prepare inputs,
# copy and expand and new slot mapping in one launch; the batch change and the drafting step
# each a plan of its own.
STEP_DRAFT_CHAIN = (1 << 13) | (1 << 14) | (1 << 15) | (1 << 16)
STEP_DRAFT_STEP, STEP_BATCH_CHANGE = 1 << 17, 1 << 18
CHAIN_KEYS = ("next_token", "prepare_inputs", "copy_expand", "new_slots")
CHAIN_LABEL = "chain (plan: 1 launch)"
PLANS_LABEL = "step (3 plans)"
CALLS_BY_KEY = {k: fn for k, _, fn, _ in CALLS}

# Filled by main() once torch, numpy, the oracle and the ctypes mirror are imported (the Triton
# interpreter has to be chosen before triton is imported).
torch = np = C = None


def cdiv(a, b):
    return -(a // -b)


def next_power_of_2(n):
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


# ---- the workload -----------------------------------------------------------------------------
def make_workload(B, d, seed=0):
    """One drafter step's inputs and starting state, as numpy arrays (see the docstring)."""
    rng = np.random.default_rng([seed, B, d])
    n_pre = B // 8
    n_dec = B - n_pre
    slots = d                      # P: the bonus token and d - 1 parallel drafts
    shift = 1                      # EAGLE passes hidden states: the first token is dropped
    N = slots - shift              # new tokens per request
    drafts = np.concatenate([np.full(n_dec, d), np.zeros(n_pre)]).astype(np.int64)
    q = np.concatenate([np.full(n_dec, 1 + d), rng.integers(16, 129, n_pre)]).astype(np.int64)
    qsl = np.concatenate([[0], np.cumsum(q)]).astype(np.int64)
    T = int(qsl[-1])
    # The rejection sampler's output: a accepted drafts + one sampled token, -1 after them;
    # a partial prefill is discarded (its row is ignored), a last chunk samples one token.
    accepted = rng.integers(0, d + 1, n_dec)
    if B >= 8:
        accepted[1] = d  # the row that ends at max_model_len (below) keeps every token
    discard = np.concatenate([np.zeros(n_dec, bool), rng.random(n_pre) < 0.5])
    S = d + 1
    sampled = np.full((B, S), -1, dtype=np.int64)
    for i in range(n_dec):
        sampled[i, :accepted[i] + 1] = rng.integers(0, VOCAB, accepted[i] + 1)
    for i in range(n_dec, B):
        if not discard[i]:
            sampled[i, 0] = rng.integers(0, VOCAB)
    valid = np.where(discard, 0, np.concatenate([accepted + 1, np.ones(n_pre, np.int64)]))
    backup = rng.integers(0, VOCAB, B)
    rejected = np.where(drafts > 0, drafts + 1 - valid, 0)
    qel = qsl[1:] - 1 - rejected
    # Contexts: the target positions of request i are ctx[i] + 0 .. q[i] - 1, below
    # max_model_len; from B = 8 decode row 1 ends at max_model_len - 1 with every draft
    # accepted, so its parallel drafts and its next drafting step pass max_model_len.
    ctx = rng.integers(64, MAX_MODEL_LEN - 512, B)
    if B >= 8:
        ctx[1] = MAX_MODEL_LEN - q[1]
    target_positions = np.concatenate([c + np.arange(n) for c, n in zip(ctx, q)])
    target_ids = rng.integers(0, VOCAB, T)
    # The next drafting step: each request at its last new token (the bonus token and the
    # parallel drafts follow its valid tokens), seq_lens one past it.
    v = qel - qsl[:-1]             # valid tokens kept with shift
    step_positions = ctx + v + slots - 1
    seq_lens = np.minimum(step_positions + 1, MAX_MODEL_LEN)
    block_table = rng.integers(0, BLOCK_ID_LIMIT, (B, TABLE_COLS))
    # The batch change: the previous batch had B rows; B // 8 rows are new, some pairs swapped.
    prev_positions = np.arange(B)
    for _ in range(B // 16):
        a, b = rng.integers(0, B, 2)
        prev_positions[[a, b]] = prev_positions[[b, a]]
    prev_positions[rng.permutation(B)[:B // 8]] = -1
    prev_drafts = drafts.copy()
    prev_valid = np.where(prev_drafts > 0, rng.integers(1, d + 2, B), 1)
    i32 = lambda a: np.ascontiguousarray(a, dtype=np.int32)  # noqa: E731
    i64 = lambda a: np.ascontiguousarray(a, dtype=np.int64)  # noqa: E731
    return dict(
        B=B, d=d, T=T, S=S, slots=slots, shift=shift, N=N, n_out=T + B * N,
        max_query_len=int(q.max()),
        # the step's inputs
        sampled_token_ids=i32(sampled), discard_request_mask=discard,
        backup_next_token_ids=i32(backup), cu_num_draft_tokens=i32(np.cumsum(drafts)),
        query_start_loc=i32(qsl), query_end_loc=i32(qel), target_token_ids=i32(target_ids),
        target_positions=i64(target_positions), block_table=i32(block_table),
        step_positions=i64(step_positions), prev_positions=i64(prev_positions),
        valid_sampled_token_count=i32(prev_valid), prev_num_draft_tokens=i32(prev_drafts),
        cpu_num_computed_tokens=i32(rng.integers(0, MAX_MODEL_LEN // 2, B)),
        # the state the step updates in place
        seq_lens=i32(seq_lens),
        num_computed_tokens=i32(rng.integers(0, MAX_MODEL_LEN // 2, max(MAX_NUM_REQS, B))),
        num_accepted_tokens=i32(rng.integers(0, d + 1, B)),
        # what calls 2 and 3 must give (numpy), from which query_end_loc was built
        expect_valid=i64(valid), expect_rejected=i64(rejected))


INPUTS = ["sampled_token_ids", "discard_request_mask", "backup_next_token_ids",
          "cu_num_draft_tokens", "query_start_loc", "query_end_loc", "target_token_ids",
          "target_positions", "block_table", "step_positions", "prev_positions",
          "valid_sampled_token_count", "prev_num_draft_tokens", "cpu_num_computed_tokens"]
STATE = ["seq_lens", "num_computed_tokens", "num_accepted_tokens"]


def to_torch(a, dev):
    """A copy on `dev`: never the numpy array's memory (each side updates its own state)."""
    return torch.from_numpy(np.ascontiguousarray(a)).to(dev, copy=True)


class Step:
    """The step's shared inputs on `dev`, and the numbers every call needs."""

    def __init__(self, w, dev):
        self.w, self.dev = w, dev
        self.inp = {k: to_torch(w[k], dev) for k in INPUTS}
        self.state0 = {k: to_torch(w[k], dev) for k in STATE}
        # vLLM's copy-and-expand launch shape (eagle.py, set_inputs_first_pass).
        per_req = w["max_query_len"] + w["N"]
        self.block_tokens = min(256, next_power_of_2(per_req))
        self.num_blocks = cdiv(per_req, self.block_tokens)


def make_outputs(w, dev):
    """One side's outputs and in-place state: outputs poisoned (masks all True), state copied
    from the workload."""
    B, n_out, T, P = w["B"], w["n_out"], w["T"], w["slots"]
    full = lambda n, dt: torch.full((n,), POISON, dtype=dt, device=dev)  # noqa: E731
    i32, i64 = torch.int32, torch.int64
    o = dict(next_token_ids=full(B + SLACK, i32), valid_sampled_tokens_count=full(B + SLACK, i32),
             token_indices_to_sample=full(B + SLACK, i32),
             num_rejected_tokens=full(B + SLACK, i32),
             out_input_ids=full(n_out + SLACK, i32), out_positions=full(n_out + SLACK, i64),
             out_is_rejected_token_mask=torch.ones(n_out + SLACK, dtype=torch.bool, device=dev),
             out_is_masked_token_mask=torch.ones(n_out + SLACK, dtype=torch.bool, device=dev),
             out_new_token_indices=full(B * P + SLACK, i32),
             out_hidden_state_mapping=full(T + SLACK, i32),
             out_clamped_positions=full(B + SLACK, i64), out_slot_mapping=full(B + SLACK, i64))
    o.update({k: to_torch(w[k], dev) for k in STATE})
    return o


def reset(o, step):
    """Poisons the outputs and restores the in-place state (before a checked run)."""
    for k, t in o.items():
        if k in step.state0:
            t.copy_(step.state0[k])
        elif t.dtype == torch.bool:
            t.fill_(True)
        else:
            t.fill_(POISON)


# ---- vLLM -------------------------------------------------------------------------------------
class VllmSide:
    """vLLM's six helpers as its Python calls them (V: the oracle's vllm_step_inputs)."""

    def __init__(self, V, step):
        self.V, self.s, w = V, step, step.w
        self.o = make_outputs(w, step.dev)
        self.new_slot_mapping = None  # compute_new_slot_mapping returns a new tensor
        inp, o = step.inp, self.o
        B = w["B"]
        # The drafter's CommonAttentionMetadata of the verified batch (its seq_lens are the
        # ones eagle_step updates; compute_new_slot_mapping reads query_start_loc and the table).
        qsl = inp["query_start_loc"]
        self.cad = V.CommonAttentionMetadata(
            query_start_loc=qsl, query_start_loc_cpu=torch.from_numpy(w["query_start_loc"]),
            seq_lens=o["seq_lens"], num_reqs=B, num_actual_tokens=w["T"],
            max_query_len=w["max_query_len"], max_seq_len=MAX_MODEL_LEN,
            block_table_tensor=inp["block_table"],
            slot_mapping=torch.zeros(w["T"], dtype=torch.int64, device=step.dev))
        # vLLM passes a Python bool; Triton's interpreter wants an int (same branch).
        self.shift = bool(w["shift"]) if step.dev.type == "cuda" else int(w["shift"])
        self.fns = {k: getattr(self, k) for k, _, _, _ in CALLS}

    def batch_change(self):
        i, o = self.s.inp, self.o
        self.V.update_num_computed_tokens_for_batch_change(
            o["num_computed_tokens"], o["num_accepted_tokens"], i["prev_positions"],
            i["valid_sampled_token_count"], i["prev_num_draft_tokens"],
            i["cpu_num_computed_tokens"])

    def next_token(self):
        i, o, w = self.s.inp, self.o, self.s.w
        sampled = i["sampled_token_ids"]
        self.V._eagle_prepare_next_token_padded(
            sampled, i["discard_request_mask"], i["backup_next_token_ids"], o["next_token_ids"],
            o["valid_sampled_tokens_count"], VOCAB, w["S"], w["B"], sampled.stride(0),
            BLOCK_SIZE_TOKENS=self.V.next_power_of_2(w["S"]))

    def prepare_inputs(self):
        i, o, B = self.s.inp, self.o, self.s.w["B"]
        self.V._eagle_prepare_inputs_padded(
            i["cu_num_draft_tokens"], o["valid_sampled_tokens_count"][:B], i["query_start_loc"],
            o["token_indices_to_sample"], o["num_rejected_tokens"], B)

    def copy_expand(self):
        i, o, s, w = self.s.inp, self.o, self.s, self.s.w
        self.V._copy_and_expand_eagle_inputs(
            i["target_token_ids"], i["target_positions"], o["next_token_ids"][:w["B"]],
            o["out_input_ids"], o["out_positions"], o["out_is_rejected_token_mask"],
            o["out_is_masked_token_mask"], o["out_new_token_indices"],
            o["out_hidden_state_mapping"], i["query_start_loc"], i["query_end_loc"],
            PADDING_TOKEN_ID, PARALLEL_DRAFTING_TOKEN_ID, w["T"], w["slots"], self.shift,
            BLOCK_SIZE_TOKENS=s.block_tokens, batch_size=w["B"], num_blocks=s.num_blocks)

    def new_slots(self):
        o, w = self.o, self.s.w
        n = w["n_out"]
        self.new_slot_mapping = self.V.compute_new_slot_mapping(
            self.cad, o["out_positions"][:n], o["out_is_rejected_token_mask"][:n], BLOCK_SIZE,
            w["N"], MAX_MODEL_LEN)

    def eagle_step(self):
        i, o, B = self.s.inp, self.o, self.s.w["B"]
        self.V.eagle_step_update_slot_mapping_and_metadata(
            i["step_positions"], self.cad.block_table_tensor, self.cad.seq_lens, BLOCK_SIZE,
            MAX_MODEL_LEN, o["out_clamped_positions"][:B], o["out_slot_mapping"][:B], B)

    def step(self):
        self.batch_change()
        self.next_token()
        self.prepare_inputs()
        self.copy_expand()
        self.new_slots()
        self.eagle_step()

    def results(self):
        r = host(self.o)
        r["new_slot_mapping"] = host1(self.new_slot_mapping)
        return r


# ---- libcattn ---------------------------------------------------------------------------------
class View:
    """A DLTensor view of a torch tensor (strides in elements); fake_cuda marks CPU memory as
    device memory (the CPU run's argument checks of the device path)."""

    def __init__(self, t, fake_cuda=False):
        code, bits = {torch.int32: (C.kDLInt, 32), torch.int64: (C.kDLInt, 64),
                      torch.bool: (KDL_BOOL, 8)}[t.dtype]
        n = max(t.dim(), 1)
        self._shape = (ctypes.c_int64 * n)(*t.shape)
        self._strides = (ctypes.c_int64 * n)(*t.stride())
        self.dl = C.DLTensor()
        self.dl.data = t.data_ptr()
        cuda = t.is_cuda or fake_cuda
        self.dl.device = C.DLDevice(C.kDLCUDA if cuda else C.kDLCPU,
                                    (t.device.index or 0) if t.is_cuda else 0)
        self.dl.ndim = t.dim()
        self.dl.dtype = C.DLDataType(code, bits, 1)
        self.dl.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        self.dl.strides = ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64))
        self.dl.byte_offset = 0
        self.dl._keep = (t, self._shape, self._strides)


def view_pointer(t, keep, fake_cuda=False):
    """A pointer to a DLTensor view of t, the view kept alive in keep."""
    d = View(t, fake_cuda)
    keep.append(d)
    return ctypes.pointer(d.dl)


class LibSide:
    """libcattn's six calls over the same inputs, args structs built once."""

    def __init__(self, lib, step, fake_cuda=False):
        self.lib, self.s = lib, step
        w, i = step.w, step.inp
        self.o = o = make_outputs(w, step.dev)
        B, n = w["B"], w["n_out"]
        self.new_slot_mapping = torch.full((n + SLACK,), POISON, dtype=torch.int64,
                                           device=step.dev)
        keep = self.keep = []

        def v(t):
            return view_pointer(t, keep, fake_cuda)

        self.args = {
            "batch_change": C.new(
                C.cattn_update_num_computed_tokens_for_batch_change_args_t,
                num_computed_tokens=v(o["num_computed_tokens"]),
                num_accepted_tokens=v(o["num_accepted_tokens"]),
                prev_positions=v(i["prev_positions"]),
                valid_sampled_token_count=v(i["valid_sampled_token_count"]),
                prev_num_draft_tokens=v(i["prev_num_draft_tokens"]),
                cpu_num_computed_tokens=v(i["cpu_num_computed_tokens"])),
            "next_token": C.new(
                C.cattn_eagle_prepare_next_token_padded_args_t, vocab_size=VOCAB,
                sampled_token_ids=v(i["sampled_token_ids"]),
                discard_request_mask=v(i["discard_request_mask"]),
                backup_next_token_ids=v(i["backup_next_token_ids"]),
                next_token_ids=v(o["next_token_ids"]),
                valid_sampled_tokens_count=v(o["valid_sampled_tokens_count"])),
            "prepare_inputs": C.new(
                C.cattn_eagle_prepare_inputs_padded_args_t,
                cu_num_draft_tokens=v(i["cu_num_draft_tokens"]),
                valid_sampled_tokens_count=v(o["valid_sampled_tokens_count"][:B]),
                query_start_loc=v(i["query_start_loc"]),
                token_indices_to_sample=v(o["token_indices_to_sample"]),
                num_rejected_tokens=v(o["num_rejected_tokens"])),
            "copy_expand": C.new(
                C.cattn_copy_and_expand_eagle_inputs_args_t, padding_token_id=PADDING_TOKEN_ID,
                parallel_drafting_token_id=PARALLEL_DRAFTING_TOKEN_ID,
                num_padding_slots_per_request=w["slots"],
                max_tokens_per_request=step.num_blocks * step.block_tokens,
                shift_input_ids=w["shift"], reserved0=0,
                target_token_ids=v(i["target_token_ids"]),
                target_positions=v(i["target_positions"]),
                next_token_ids=v(o["next_token_ids"][:B]),
                query_start_loc=v(i["query_start_loc"]), query_end_loc=v(i["query_end_loc"]),
                out_input_ids=v(o["out_input_ids"]), out_positions=v(o["out_positions"]),
                out_is_rejected_token_mask=v(o["out_is_rejected_token_mask"]),
                out_is_masked_token_mask=v(o["out_is_masked_token_mask"]),
                out_new_token_indices=v(o["out_new_token_indices"]),
                out_hidden_state_mapping=v(o["out_hidden_state_mapping"])),
            "new_slots": C.new(
                C.cattn_compute_new_slot_mapping_args_t, block_size=BLOCK_SIZE,
                num_new_tokens=w["N"], max_model_len=MAX_MODEL_LEN,
                query_start_loc=v(i["query_start_loc"]), block_table=v(i["block_table"]),
                new_positions=v(o["out_positions"][:n]),
                is_rejected_token_mask=v(o["out_is_rejected_token_mask"][:n]),
                new_slot_mapping=v(self.new_slot_mapping)),
            "eagle_step": C.new(
                C.cattn_eagle_step_update_slot_mapping_and_metadata_args_t,
                block_size=BLOCK_SIZE, max_model_len=MAX_MODEL_LEN, input_batch_size=B,
                positions=v(i["step_positions"]), block_table=v(i["block_table"]),
                seq_lens=v(o["seq_lens"]), out_clamped_positions=v(o["out_clamped_positions"]),
                out_slot_mapping=v(o["out_slot_mapping"])),
        }
        # (key, C function, the struct by reference): built once, so a call costs ctypes' own
        # overhead only.
        self.calls = [(k, getattr(lib, fn), ctypes.byref(self.args[k]), fn)
                      for k, _, fn, _ in CALLS]
        self.fns = {c[0]: (lambda c=c: self._call(*c)) for c in self.calls}

    def set_stream(self, handle):
        for a in self.args.values():
            a.stream = handle

    def _call(self, key, f, ref, name):
        status = f(ref)
        if status:
            C.check(self.lib, name, status)

    def step(self):
        for key, f, ref, name in self.calls:
            status = f(ref)
            if status:
                C.check(self.lib, name, status)

    def statuses(self):
        """Each call's status and message (the CPU run's fake-device check)."""
        out = []
        for key, f, ref, name in self.calls:
            status = f(ref)
            out.append((name, status, self.lib.cattn_last_error_message().decode()))
        return out

    def results(self):
        r = host(self.o)
        r["new_slot_mapping"] = host1(self.new_slot_mapping)
        return r


class PlanSide:
    """The drafter step as step plans over the same inputs: the batch change's plan, the chain's
    (the four calls in one launch, query_end_loc formed inside) and the drafting step's."""

    def __init__(self, lib, step, fake_cuda=False):
        self.lib, self.s = lib, step
        w, i = step.w, step.inp
        self.o = o = make_outputs(w, step.dev)
        B, n, T, P = w["B"], w["n_out"], w["T"], w["slots"]
        self.new_slot_mapping = torch.full((n + SLACK,), POISON, dtype=torch.int64,
                                           device=step.dev)
        keep = self.keep = []

        def v(t):
            return view_pointer(t, keep, fake_cuda)

        def plan(products, **draft):
            d = C.new(C.cattn_step_plan_desc_t, products=products, max_num_reqs=B,
                      max_num_tokens=T, max_num_blocks_per_req=TABLE_COLS)
            for k, val in draft.items():
                setattr(d.draft, k, val)
            p = ctypes.c_void_p()
            C.check(lib, "cattn_step_plan_create",
                    lib.cattn_step_plan_create(ctypes.byref(d), ctypes.addressof(p)))
            return p

        self.plans = {
            "batch_change": plan(STEP_BATCH_CHANGE),
            "chain": plan(STEP_DRAFT_CHAIN, vocab_size=VOCAB, num_padding_slots_per_request=P,
                          padding_token_id=PADDING_TOKEN_ID,
                          parallel_drafting_token_id=PARALLEL_DRAFTING_TOKEN_ID,
                          max_tokens_per_request=step.num_blocks * step.block_tokens,
                          block_size=BLOCK_SIZE, max_model_len=MAX_MODEL_LEN,
                          shift_input_ids=w["shift"]),
            "eagle_step": plan(STEP_DRAFT_STEP, block_size=BLOCK_SIZE,
                               max_model_len=MAX_MODEL_LEN),
        }
        new_b = lambda **f: C.new(C.cattn_step_batch_t, **f)  # noqa: E731
        new_o = lambda **f: C.new(C.cattn_step_outputs_t, **f)  # noqa: E731
        self.structs = {
            "batch_change": (
                new_b(prev_positions=v(i["prev_positions"]),
                      num_computed_tokens=v(o["num_computed_tokens"]),
                      num_accepted_tokens=v(o["num_accepted_tokens"]),
                      valid_sampled_token_count=v(i["valid_sampled_token_count"]),
                      prev_num_draft_tokens=v(i["prev_num_draft_tokens"]),
                      cpu_num_computed_tokens=v(i["cpu_num_computed_tokens"])),
                new_o(carried_num_computed_tokens=v(o["num_computed_tokens"]),
                      carried_num_accepted_tokens=v(o["num_accepted_tokens"]))),
            "chain": (
                new_b(query_start_loc=v(i["query_start_loc"]), block_table=v(i["block_table"]),
                      sampled_token_ids=v(i["sampled_token_ids"]),
                      discard_request_mask=v(i["discard_request_mask"]),
                      backup_next_token_ids=v(i["backup_next_token_ids"]),
                      cu_num_draft_tokens=v(i["cu_num_draft_tokens"]),
                      target_token_ids=v(i["target_token_ids"]),
                      target_positions=v(i["target_positions"])),
                new_o(next_token_ids=v(o["next_token_ids"]),
                      valid_sampled_tokens_count=v(o["valid_sampled_tokens_count"]),
                      token_indices_to_sample=v(o["token_indices_to_sample"]),
                      num_rejected_tokens=v(o["num_rejected_tokens"]),
                      draft_input_ids=v(o["out_input_ids"]), draft_positions=v(o["out_positions"]),
                      is_rejected_token_mask=v(o["out_is_rejected_token_mask"]),
                      is_masked_token_mask=v(o["out_is_masked_token_mask"]),
                      new_token_indices=v(o["out_new_token_indices"]),
                      hidden_state_mapping=(v(o["out_hidden_state_mapping"]) if w["shift"]
                                            else None),
                      draft_slot_mapping=v(self.new_slot_mapping))),
            "eagle_step": (
                new_b(positions=v(i["step_positions"]), block_table=v(i["block_table"]),
                      seq_lens=v(o["seq_lens"])),
                new_o(draft_positions=v(o["out_clamped_positions"]),
                      draft_seq_lens=v(o["seq_lens"]),
                      draft_slot_mapping=v(o["out_slot_mapping"][:B]))),
        }
        self.stream = None
        self.fns = {k: (lambda k=k: self.run(k)) for k in self.plans}

    def set_stream(self, handle):
        self.stream = handle

    def run(self, key):
        b, o = self.structs[key]
        C.check(self.lib, "cattn_step_plan_run",
                self.lib.cattn_step_plan_run(self.plans[key], ctypes.byref(b), ctypes.byref(o),
                                             self.stream))

    def step(self):
        self.run("batch_change")
        self.run("chain")
        self.run("eagle_step")

    def statuses(self):
        """Each plan run's status and message (the CPU run's fake-device check)."""
        out = []
        for key, (b, o) in self.structs.items():
            status = self.lib.cattn_step_plan_run(self.plans[key], ctypes.byref(b),
                                                  ctypes.byref(o), None)
            out.append((f"cattn_step_plan_run ({key})", status,
                        self.lib.cattn_last_error_message().decode()))
        return out

    def results(self):
        r = host(self.o)
        r["new_slot_mapping"] = host1(self.new_slot_mapping)
        return r

    def destroy(self):
        for p in self.plans.values():
            self.lib.cattn_step_plan_destroy(p)
        self.plans = {}


def compare_plans(w, ref, got):
    """vLLM's results against the plans': equal where vLLM writes; past the step the chain's
    sentinels (padding token, position 0, rejected, not masked, -1), the rest left poisoned."""
    B, n, T, P = w["B"], w["n_out"], w["T"], w["slots"]
    written = dict(next_token_ids=B, valid_sampled_tokens_count=B, token_indices_to_sample=B,
                   num_rejected_tokens=B, out_input_ids=n, out_positions=n,
                   out_is_rejected_token_mask=n, out_is_masked_token_mask=n,
                   out_new_token_indices=B * P, out_hidden_state_mapping=T,
                   out_clamped_positions=B, out_slot_mapping=B, new_slot_mapping=n)
    past = dict(out_input_ids=PADDING_TOKEN_ID, out_positions=0, out_is_rejected_token_mask=1,
                out_is_masked_token_mask=0, out_new_token_indices=-1,
                out_hidden_state_mapping=-1 if w["shift"] else POISON, new_slot_mapping=-1)
    bad = []
    for k, a in ref.items():
        b = got[k]
        m = written.get(k, a.numel())
        diff = (a[:m] != b[:m]).nonzero().reshape(-1)
        if len(diff):
            i = int(diff[0])
            bad.append(f"{k}: {len(diff)} of {m} entries differ, the first at {i}: vLLM "
                       f"{int(a[i])}, the plans {int(b[i])}")
        want = past.get(k, POISON)
        if m < b.numel() and not bool((b[m:] == want).all()):
            bad.append(f"{k}: past its {m} entries the plans did not leave {want}")
    return bad


# ---- the checks -------------------------------------------------------------------------------
def host1(t):
    return t.detach().to("cpu", torch.int64).clone()


def host(o):
    return {k: host1(t) for k, t in o.items()}


def compare(w, ref, got):
    """vLLM's results (ref) against libcattn's (got): whole buffers, the same poison before.
    libcattn's new slot mapping is longer by SLACK entries that must stay poisoned. Returns the
    differences."""
    bad = []
    n = w["n_out"]
    tail = got["new_slot_mapping"][n:]
    if not bool((tail == POISON).all()):
        bad.append(f"new_slot_mapping: libcattn wrote past the {n} tokens")
    got = dict(got, new_slot_mapping=got["new_slot_mapping"][:n])
    for k, a in ref.items():
        b = got[k]
        if a.shape != b.shape:
            bad.append(f"{k}: {tuple(a.shape)} entries (vLLM) against {tuple(b.shape)} "
                       f"(libcattn)")
            continue
        diff = (a != b).nonzero().reshape(-1)
        if len(diff):
            i = int(diff[0])
            bad.append(f"{k}: {len(diff)} of {a.numel()} entries differ, the first at {i}: "
                       f"vLLM {int(a[i])}, libcattn {int(b[i])}")
    return bad


def sanity(w, ref):
    """vLLM's own outputs against this script's numpy and the written ranges: a step that
    wrote nothing would compare equal on both sides."""
    bad = []
    B, n, T, P = w["B"], w["n_out"], w["T"], w["slots"]
    for k, want in (("valid_sampled_tokens_count", w["expect_valid"]),
                    ("num_rejected_tokens", w["expect_rejected"])):
        if not torch.equal(ref[k][:B], torch.from_numpy(want)):
            bad.append(f"vLLM's {k} {ref[k][:B].tolist()[:16]} is not the workload's "
                       f"{want.tolist()[:16]} (query_end_loc was built from it)")
    for k, m in (("next_token_ids", B), ("token_indices_to_sample", B), ("out_input_ids", n),
                 ("out_positions", n), ("out_new_token_indices", B * P),
                 ("out_hidden_state_mapping", T), ("new_slot_mapping", n),
                 ("out_clamped_positions", B), ("out_slot_mapping", B)):
        if bool((ref[k][:m] == POISON).any()):
            bad.append(f"vLLM left {k} unwritten within its first {m} entries")
    return bad


def verify(tag, w, ref, got):
    bad = sanity(w, ref) + compare(w, ref, got)
    if bad:
        print(f"MISMATCH {tag}")
        for line in bad[:20]:
            print("  " + line)
        sys.exit(1)


def config_name(w):
    return (f"B {w['B']} drafts {w['d']} (tokens {w['T']} -> {w['n_out']}, P {w['slots']}, "
            f"N {w['N']})")


def checked_step(V, lib, step, sides=None):
    """Runs one plain step on each side from the same state and compares. Returns the sides."""
    vs, ls = sides or (VllmSide(V, step), LibSide(lib, step))
    reset(vs.o, step)
    reset(ls.o, step)
    ls.new_slot_mapping.fill_(POISON)
    vs.step()
    ls.step()
    if step.dev.type == "cuda":
        torch.cuda.synchronize()
    verify(f"{config_name(step.w)}: plain step", step.w, vs.results(), ls.results())
    return vs, ls


def dry_run(V, lib, configs, seed):
    """The CPU run: vLLM under Triton's interpreter against libcattn's host calls, then every
    args struct on fake device views (accepted up to CATTN_NOT_SUPPORTED)."""
    failures = 0
    for B, d in configs:
        t0 = time.perf_counter()
        step = Step(make_workload(B, d, seed), torch.device("cpu"))
        vs, ls = checked_step(V, lib, step)
        # A second step on the state the first left (the in-place updates chain).
        vs.step()
        ls.step()
        verify(f"{config_name(step.w)}: second plain step", step.w, vs.results(), ls.results())
        fake = LibSide(lib, step, fake_cuda=True)
        plans = PlanSide(lib, step, fake_cuda=True)
        wrong = [(n, s, m) for n, s, m in fake.statuses() + plans.statuses()
                 if s != CATTN_NOT_SUPPORTED]
        plans.destroy()
        for name, status, msg in wrong:
            print(f"ERROR {config_name(step.w)}: {name} on device views: status {status}: {msg}")
        failures += len(wrong)
        print(f"ok  {config_name(step.w)}: every output equal, two steps "
              f"({time.perf_counter() - t0:.1f} s); "
              f"{9 - len(wrong)} of 9 args structs and plan runs accepted on device views",
              flush=True)
    return failures


# ---- timing -----------------------------------------------------------------------------------
def events_us(fn, n, reps):
    """CUDA events around fn() n times / n, median over reps (one warm-up round first)."""
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(n):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000 / n)
    return statistics.median(times)


# vLLM's calls whose capture may be refused without failing the run: the torch.compile'd batch
# change, which vLLM does not rely on capturing. The others are Triton kernels and torch ops with
# no host sync, made for CUDA graphs (eagle_step pads to input_batch_size "for cudagraph
# padding"): a refusal there is this harness's fault or a real regression.
MAY_REFUSE = {"batch_change"}


def capture_vllm(key, what, body, notes):
    """vLLM's side of a row: capture_optional for MAY_REFUSE (the note printed), else
    capture_required."""
    if key not in MAY_REFUSE:
        return capture_required(f"vLLM's {what}", body)
    g = capture_optional(f"vLLM's {what}", body, notes)
    if g is None:
        print("NOTE", notes[-1], flush=True)
    return g


def timed(key_plain_v, key_plain_l, g_v, g_l, reps):
    return dict(vllm_plain=events_us(key_plain_v, N_STEPS, reps),
                lib_plain=events_us(key_plain_l, N_STEPS, reps),
                vllm_graph=None if g_v is None else events_us(g_v.replay, N_STEPS, reps),
                lib_graph=events_us(g_l.replay, N_STEPS, reps))


def measure(V, lib, w, reps, stream, dry, notes):
    """Checks one configuration (a plain step, then a replay of each side's captured step),
    then times it: the configuration's rows of the table."""
    step = Step(w, torch.device(DEVICE))
    name = config_name(w)
    vs, ls = VllmSide(V, step), LibSide(lib, step)
    ls.set_stream(stream)
    checked_step(V, lib, step, (vs, ls))
    # The step captured once on each side; a replay from the reset state must give it again.
    captured = {}

    def vllm_body(_):
        vs.step()
        captured["new_slot_mapping"] = vs.new_slot_mapping

    def lib_body(h):
        ls.set_stream(h)
        ls.step()

    # The step holds the batch change: it may be refused as that call may.
    g_v = capture_vllm("batch_change", f"step (B {w['B']}, drafts {w['d']})", vllm_body, notes)
    g_l = capture_required(f"libcattn's step ({name})", lib_body)
    ls.set_stream(stream)
    reset(vs.o, step)
    reset(ls.o, step)
    ls.new_slot_mapping.fill_(POISON)
    if g_v is not None:
        vs.new_slot_mapping = captured["new_slot_mapping"]
        vs.new_slot_mapping.fill_(POISON)
        g_v.replay()
    else:  # the reference is vLLM's plain step from the same state
        vs.step()
    g_l.replay()
    torch.cuda.synchronize()
    verify(f"{name}: graph replay", w, vs.results(), ls.results())
    replays = "both graph replays" if g_v is not None else "libcattn's graph replay"
    print(f"ok  {name}: every output equal (plain step, {replays})", flush=True)
    if dry:
        return []
    rows = [dict(B=w["B"], drafts=w["d"], call=STEP_LABEL,
                 **timed(vs.step, ls.step, g_v, g_l, reps))]
    del g_v, g_l
    for key, vllm_name, _, label in CALLS:
        gv = capture_vllm(key, f"{vllm_name} (B {w['B']}, drafts {w['d']})",
                          lambda _h, key=key: vs.fns[key](), notes)
        gl = capture_required(f"libcattn's {CALLS_BY_KEY[key]} ({name})",
                              lambda h, key=key: (ls.set_stream(h), ls.fns[key]()))
        ls.set_stream(stream)
        rows.append(dict(B=w["B"], drafts=w["d"], call=label,
                         **timed(vs.fns[key], ls.fns[key], gv, gl, reps)))
        del gv, gl
    rows += measure_plans(vs, lib, step, rows[0], reps, stream, notes)
    for r in rows:
        r["ratio_plain"] = r["vllm_plain"] / r["lib_plain"]
        r["ratio_graph"] = None if r["vllm_graph"] is None else r["vllm_graph"] / r["lib_graph"]
    return rows


def measure_plans(vs, lib, step, step_row, reps, stream, notes):
    """The drafter step as step plans: checked against vLLM after a plain step and after a
    replay of their captured step, then two rows: the chain (one launch) against vLLM's four
    calls, and the three plans against vLLM's step (step_row's vLLM numbers)."""
    w, name = step.w, config_name(step.w)
    ps = PlanSide(lib, step)
    try:
        ps.set_stream(stream)

        def check(tag, run_plans):
            reset(vs.o, step)
            reset(ps.o, step)
            ps.new_slot_mapping.fill_(POISON)
            vs.step()
            run_plans()
            torch.cuda.synchronize()
            bad = sanity(w, vs.results()) + compare_plans(w, vs.results(), ps.results())
            if bad:
                print(f"MISMATCH {name}: {tag}")
                for line in bad[:20]:
                    print("  " + line)
                sys.exit(1)

        check("the plans' plain step", ps.step)
        g_p = capture_required(f"libcattn's plans ({name})",
                               lambda h: (ps.set_stream(h), ps.step()))
        ps.set_stream(stream)
        check("the plans' graph replay", g_p.replay)
        print(f"ok  {name}: the three plans equal vLLM (plain step, graph replay)", flush=True)
        four = lambda: [vs.fns[k]() for k in CHAIN_KEYS]  # noqa: E731
        gv = capture_vllm("chain", f"next token to new slot mapping ({name})",
                          lambda _h: four(), notes)
        gc = capture_required(f"libcattn's chain plan ({name})",
                              lambda h: (ps.set_stream(h), ps.fns["chain"]()))
        ps.set_stream(stream)
        rows = [dict(B=w["B"], drafts=w["d"], call=CHAIN_LABEL,
                     **timed(four, ps.fns["chain"], gv, gc, reps))]
        del gv, gc
        rows.append(dict(B=w["B"], drafts=w["d"], call=PLANS_LABEL,
                         vllm_plain=step_row["vllm_plain"], vllm_graph=step_row["vllm_graph"],
                         lib_plain=events_us(ps.step, N_STEPS, reps),
                         lib_graph=events_us(g_p.replay, N_STEPS, reps)))
        del g_p
        return rows
    finally:
        torch.cuda.synchronize()
        ps.destroy()


def count_launches(V, lib, w, stream):
    """GPU operations one plain step of each side enqueues (torch.profiler), or None."""
    from step_side_by_side import gpu_ops
    step = Step(w, torch.device(DEVICE))
    vs, ls = VllmSide(V, step), LibSide(lib, step)
    ls.set_stream(stream)
    vs.step()
    ls.step()
    torch.cuda.synchronize()
    return gpu_ops(vs.step), gpu_ops(ls.step)


def table(rows):
    us = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
    ratio = lambda x: "-" if x is None else f"{x:.1f}x"  # noqa: E731
    lines = ["| B | drafts | call | vLLM plain us | libcattn plain us | ratio | vLLM graph us | "
             "libcattn graph us | ratio |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['B']} | {r['drafts']} | {r['call']} | {us(r['vllm_plain'])} | "
                     f"{us(r['lib_plain'])} | {ratio(r['ratio_plain'])} | "
                     f"{us(r['vllm_graph'])} | {us(r['lib_graph'])} | "
                     f"{ratio(r['ratio_graph'])} |")
    return lines


def goal_lines(rows):
    """The step rows against the issues' goals: the calls >= 10x plain and >= 2x in graphs;
    the plans >= 15x plain and >= 3x in graphs."""
    lines = []
    for label, plain, graph in ((STEP_LABEL, 10, 2), (PLANS_LABEL, 15, 3), (CHAIN_LABEL, 15, 3)):
        lines += goal_lines_of(rows, label, plain, graph)
    return lines


def goal_lines_of(rows, label, plain_goal, graph_goal):
    steps = [r for r in rows if r["call"] == label]
    out, short = [], []
    for what, key, goal in (("plain", "ratio_plain", plain_goal),
                            ("graph", "ratio_graph", graph_goal)):
        got = [r[key] for r in steps if r[key] is not None]
        out.append(f"{what} {min(got):.1f}x to {max(got):.1f}x (goal >= {goal}x)" if got else
                   f"{what}: not measured")
        short += [f"B {r['B']} drafts {r['drafts']}: {what} {r[key]:.1f}x < {goal}x"
                  for r in steps if r[key] is not None and r[key] < goal]
    return ([f"{label}, vLLM / libcattn: " + "; ".join(out)] +
            ([f"  short of a goal: {x}" for x in short] if short else
             ["  every measured step row meets its goal"]))


def report(rows, launches, setting, notes, failures=()):
    """The markdown written to the terminal and to --out."""
    ops = lambda n: "?" if n is None else str(n)  # noqa: E731
    lines = ["# Speculative decoding: vLLM's six helpers against libcattn's six calls", "",
             setting, ""] + table(rows) + [""]
    if launches:
        lines.append("GPU operations of one plain step (torch.profiler, B = 8): " + ", ".join(
            f"drafts {d}: vLLM {ops(a)}, libcattn {ops(b)}" for d, (a, b) in launches.items()))
        lines.append("")
    lines += goal_lines(rows)
    if notes:
        lines += [""] + [f"note: {n}" for n in notes]
    if failures:
        lines += [""] + [f"ERROR {x}" for x in failures]
    return "\n".join(lines)


# ---- main -------------------------------------------------------------------------------------
def parse_list(text):
    return [int(x) for x in text.split(",") if x]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="libcattn.so (a CUDA build; --device cpu: any)")
    ap.add_argument("--oracle", default=None,
                    help=f"the step-inputs oracle's folder (default: ${STEP_INPUTS_ENV}, else "
                         f"../shared/oracle_upstream/step_inputs beside the checkout)")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                    help="cpu: checks only (Triton's interpreter, libcattn's host calls)")
    ap.add_argument("--dry-run", action="store_true",
                    help="checks only on the GPU, nothing timed (implied by --device cpu)")
    ap.add_argument("--batches", default="1,8,64,256", help="requests per step")
    ap.add_argument("--drafts", default="1,3,7", help="drafts per decode request (>= 1)")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compile-backend", default=None,
                    help="torch.compile backend of update_num_computed_tokens_for_batch_change "
                         "(sets CATTN_ORACLE_COMPILE_BACKEND; default: the oracle's, eager; "
                         "vLLM's CUDA platform uses inductor)")
    ap.add_argument("--out", default=None,
                    help="also write the table here (default: $OUT/spec_decode_side_by_side.md "
                         "when $OUT is set)")
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args()

    oracle = step_inputs_oracle(sys.argv[0], args.oracle)
    cpu = args.device == "cpu"
    if cpu:  # before torch and triton are imported
        os.environ["TRITON_INTERPRET"] = "1"
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    if args.compile_backend:
        os.environ["CATTN_ORACLE_COMPILE_BACKEND"] = args.compile_backend
    global torch, np, C
    import numpy as np  # noqa: F811
    import torch  # noqa: F811
    import triton
    sys.path.insert(0, oracle)
    import vllm_step_inputs as V
    import cattn_ctypes as C  # noqa: F811
    if not cpu and not torch.cuda.is_available():
        sys.exit("spec_decode_side_by_side.py: no CUDA device (--device cpu runs the checks "
                 "without one)")
    lib = C.load(args.lib)
    print_sizes = os.path.join(os.path.dirname(os.path.abspath(args.lib)), "bench",
                               "cattn_print_sizes")
    if os.path.exists(print_sizes):
        problems = C.check_layout_with(print_sizes)
        if problems:
            sys.exit("the ctypes mirror differs from the header:\n  " + "\n  ".join(problems))
        layout = "ctypes mirror checked against cattn_print_sizes"
    else:
        layout = f"no {print_sizes}: the ctypes mirror is not checked against the compiler"
    batches, drafts = parse_list(args.batches), parse_list(args.drafts)
    if not batches or min(batches) < 1 or not drafts or min(drafts) < 1:
        sys.exit("--batches and --drafts take positive integers")
    configs = [(B, d) for B in batches for d in drafts]
    backend = V.current_platform.simple_compile_backend
    print(f"torch {torch.__version__}, triton {triton.__version__}, device "
          f"{'cpu (Triton interpreter)' if cpu else torch.cuda.get_device_name()}; "
          f"libcattn {lib.cattn_version_string().decode()} {os.path.abspath(args.lib)}; "
          f"oracle {oracle} (torch.compile backend {backend}); {layout}; "
          f"{len(configs)} configurations", flush=True)
    if cpu:
        # The GPU run's capture helpers, as far as they go without a device.
        import graph_capture
        print(graph_capture.self_check(torch), flush=True)
        try:
            failures = dry_run(V, lib, configs, args.seed)
        except C.CattnError as e:
            print(f"ERROR {e}")
            sys.exit(1)
        print(f"dry run: every configuration checked, {failures} args struct(s) refused on "
              f"device views; nothing timed (no GPU)")
        sys.exit(1 if failures else 0)

    # One non-blocking stream for everything (the legacy default stream synchronises).
    side = torch.cuda.Stream()
    torch.cuda.set_stream(side)
    stream = side.cuda_stream
    rows, notes = [], []
    for B, d in configs:
        w = make_workload(B, d, args.seed)
        try:
            rows += measure(V, lib, w, args.reps, stream, args.dry_run, notes)
        except C.CattnError as e:
            print(f"ERROR {config_name(w)}: {e}")
            sys.exit(1)
        except CaptureFailed as e:
            print(f"ERROR {e}")
            sys.exit(1)
        torch.cuda.empty_cache()
    if args.dry_run:
        print("dry run: every configuration checked on the GPU; nothing timed")
        sys.exit(0)
    # Launch counts last: the profiler leaves hooks behind that slow later launches. A count
    # that fails (gpu_ops prints why) fails the run after the table.
    launches, failures = {}, []
    for d in drafts:
        launches[d] = count_launches(V, lib, make_workload(8, d, args.seed), stream)
        failures += [f"drafts {d}: {side}'s launches could not be counted"
                     for side, n in zip(("vLLM", "libcattn"), launches[d]) if n is None]
    setting = (f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton "
               f"{triton.__version__}, libcattn {lib.cattn_version_string().decode()}; "
               f"vLLM's update_num_computed_tokens_for_batch_change compiled with backend "
               f"{backend}. us per call or per step: CUDA events around {N_STEPS} Python "
               f"iterations (plain) or graph replays, median of {args.reps}; ratio = vLLM / "
               f"libcattn. Each side's graph holds its launches of the row's calls.")
    text = report(rows, launches, setting, notes, failures)
    print("\n" + text)
    out = args.out or (os.path.join(os.environ["OUT"], "spec_decode_side_by_side.md")
                       if os.environ.get("OUT") else None)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
        print(f"\ntable written to {out}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                           triton=triton.__version__, compile_backend=backend,
                           n_steps=N_STEPS, reps=args.reps, rows=rows, notes=notes,
                           failures=failures,
                           launches={str(d): v for d, v in launches.items()}), f, indent=1)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
