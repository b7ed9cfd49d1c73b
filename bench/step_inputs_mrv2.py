# SPDX-License-Identifier: Apache-2.0
"""The workloads of bench/step_inputs_side_by_side.py, and vLLM's model runner v2 (MRV2) step
input preparation driven through the step-inputs oracle (vLLM's own functions and Triton kernels,
imported from the oracle folder at run time; nothing of vLLM's is copied here).

A workload is one engine step of B live requests over R = 2B persistent request rows:
  - idx_mapping: a random subset of the R rows (gaps), in random order;
  - decode rows first (q = 1, or 1 + D with D drafts), then chunked-prefill rows (q from a random
    split of the prefill tokens, each at least 64), as vLLM's decode-first reorder leaves them;
  - num_computed_tokens: decodes 64 to 16k of context, prefill chunks 0 to 8k; prefill_len
    below a decode's context (its sampled token is written), at or past a chunk's end;
  - per KV-cache group g (block size bs, kernel block = bs) and DCP world S: a persistent table of
    2048 columns holding cdiv(seq_len, bs * S) random block ids below 2^20 per live row (written
    with BlockTables.append_block_ids / apply_staged_writes over random stale entries), its
    num_blocks per row; block ids stay small so that MRV2's int32 slot (id * bs) cannot wrap.

Mrv2Step runs what MRV2's model runner does per step for these products:
  host:   np.cumsum of the scheduled counts into query_start_loc (padded to max_num_reqs + 1
          with the total), its upload into the persistent buffer; the idx_mapping upload; with
          drafts the cumsum of the logits per request (cu_num_logits) and its upload;
  device: prepare_pos_seq_lens, BlockTables.gather_block_tables,
          BlockTables.compute_slot_mappings, combine_sampled_and_draft_tokens, and with drafts
          expand_idx_mapping; without drafts MRV2 launches no expand kernel: cu_num_logits is
          torch.arange, expanded_idx_mapping is idx_mapping and expanded_local_pos torch.zeros.
Uploads are MRV2's async_copy_to_gpu (x.pin_memory(), then a non-blocking copy). For a CUDA
graph, the host part writes persistent pinned staging buffers (staged_host) and the captured part
(staged_device) copies them in and launches the kernels: a graph cannot hold the numpy work.
"""
import numpy as np
import torch

MAX_TOKENS = 65536        # max_num_batched_tokens (vLLM) = max_num_tokens (libcattn)
TABLE_COLS = 2048         # blocks per request in every group's persistent table
BLOCK_ID_LIMIT = 1 << 20  # block ids below this: id * 64 + offset stays far below 2^31
VOCAB = 32000

# name: (B, prefill rows, T): T is the step's scheduled tokens (None: the decodes' own).
WORKLOADS = {
    "B8-decode": (8, 0, None),
    "B8-prefill": (8, 1, 8192),
    "B256-mixed": (256, 16, 16384),
    "B1024-mixed": (1024, 32, MAX_TOKENS),
    # small ones for --dry-run (the Triton interpreter on the CPU)
    "B32-mixed": (32, 4, 1024),
}
GROUP_SETS = {1: [16], 3: [16, 16, 64]}


def cdiv(a, b):
    return -(a // -b)


def split_tokens(rng, total, parts, least=64):
    """`parts` random sizes of at least `least` summing to `total`."""
    assert total >= parts * least
    free = total - parts * least
    cuts = np.sort(rng.integers(0, free + 1, size=parts - 1))
    sizes = np.diff(np.concatenate([[0], cuts, [free]])) + least
    assert sizes.sum() == total and len(sizes) == parts
    return sizes


def make_workload(name, drafts=0, dcp=1, groups=1, seed=0):
    """One step's scheduler output and persistent request state, as numpy arrays."""
    B, P, T = WORKLOADS[name]
    block_sizes = GROUP_SETS[groups]
    rng = np.random.default_rng([seed, B, P, drafts, dcp, groups])
    R = 2 * B
    n_dec = B - P
    q_dec = 1 + drafts
    dec_tokens = n_dec * q_dec
    if P:
        chunks = split_tokens(rng, T - dec_tokens, P)
    else:
        chunks = np.zeros(0, dtype=np.int64)
        T = dec_tokens
    q = np.concatenate([np.full(n_dec, q_dec), chunks]).astype(np.int64)
    d = np.concatenate([np.full(n_dec, drafts), np.zeros(P)]).astype(np.int64)
    nct_live = np.concatenate([rng.integers(64, 16384, n_dec), rng.integers(0, 8193, P)])
    seq = nct_live + q
    # decodes: prefill done (prefill_len <= context), so the sampled token goes in; chunks:
    # the prompt ends at or past the chunk (0 = the last chunk).
    pl_live = np.concatenate([rng.integers(1, nct_live[:n_dec] + 1),
                              seq[n_dec:] + rng.integers(0, 2000, P) * (rng.random(P) < 0.7)])
    idx = rng.choice(R, size=B, replace=False)
    nct = rng.integers(0, 20000, R)
    nct[idx] = nct_live
    prefill_len = rng.integers(1, 20000, R)
    prefill_len[idx] = pl_live
    ids = []  # per group, per batch row: the row's block ids (kernel blocks = manager blocks)
    for bs in block_sizes:
        need = [cdiv(int(s), bs * dcp) for s in seq]
        assert max(need) <= TABLE_COLS
        ids.append([rng.integers(0, BLOCK_ID_LIMIT, n) for n in need])
    i32 = lambda a: np.ascontiguousarray(a, dtype=np.int32)  # noqa: E731
    L = int(B + d.sum())
    cu = np.zeros(B + 1, dtype=np.int64)
    cu[1:] = np.cumsum(1 + d)
    return dict(
        name=name, B=B, R=R, T=int(T), L=L, drafts=drafts, dcp=dcp, groups=groups, prefills=P,
        block_sizes=block_sizes, num_scheduled_tokens=i32(q), num_draft_tokens=i32(d),
        idx_mapping=i32(idx), num_computed_tokens=i32(nct), prefill_len=i32(prefill_len),
        last_sampled_tokens=rng.integers(0, VOCAB, R).astype(np.int64),
        draft_tokens=rng.integers(0, VOCAB, (R, max(drafts, 1))).astype(np.int64),
        seq_lens=i32(seq), query_start_loc=i32(np.concatenate([[0], np.cumsum(q)])),
        cu_num_logits=i32(cu), block_ids=ids)


def async_copy_to_gpu(x, out=None, device=None):
    """MRV2's upload (vllm/v1/worker/gpu/buffer_utils.py): pinned, then a non-blocking copy.
    On the CPU (the dry run) a plain copy."""
    x = torch.from_numpy(x) if isinstance(x, np.ndarray) else x
    if out is None:
        out = torch.empty_like(x, device=device)
    if out.is_cuda:
        x = x.pin_memory()
    return out.copy_(x, non_blocking=True)


class Mrv2Step:
    """vLLM's MRV2 state for one workload (V = vllm_step_inputs), and its step."""

    def __init__(self, V, w, device):
        self.V, self.w = V, w
        self.dev = dev = torch.device(device)
        B, R, G = w["B"], w["R"], len(w["block_sizes"])
        self.B, self.T, self.L, self.D = B, w["T"], w["L"], w["drafts"]
        bs = w["block_sizes"]
        self.bts = V.BlockTables(bs, R, MAX_TOKENS, [TABLE_COLS] * G, dev, list(bs),
                                 cp_size=w["dcp"], cp_rank=0, cp_interleave=1)
        gen = torch.Generator(device="cpu").manual_seed(B * 7 + G)
        for t in self.bts.block_tables:  # stale entries everywhere, then the live rows
            t.gpu.copy_(torch.randint(0, BLOCK_ID_LIMIT, t.gpu.shape, generator=gen,
                                      dtype=torch.int32))
        for b, r in enumerate(w["idx_mapping"].tolist()):
            self.bts.append_block_ids(r, tuple(w["block_ids"][g][b].tolist() for g in range(G)),
                                      True)
        self.bts.apply_staged_writes()
        self.buf = V.InputBuffers(R, MAX_TOKENS, dev)
        self.nct = torch.from_numpy(w["num_computed_tokens"]).to(dev)
        self.prefill_len = torch.from_numpy(w["prefill_len"]).to(dev)
        self.last_sampled = torch.from_numpy(w["last_sampled_tokens"]).to(dev)
        self.draft_tokens = torch.from_numpy(w["draft_tokens"]).to(dev)
        # The scheduler's output, on the host.
        self.nst_np = w["num_scheduled_tokens"]
        self.idx_np = w["idx_mapping"]
        self.nd_np = w["num_draft_tokens"]
        # Persistent staging for the captured step (pinned on a GPU machine).
        pin = dev.type == "cuda"
        host = lambda n: torch.zeros(n, dtype=torch.int32, pin_memory=pin)  # noqa: E731
        self.qsl_pin, self.idx_pin, self.cu_pin = host(R + 1), host(B), host(B + 1)
        self.idx_dev = torch.zeros(B, dtype=torch.int32, device=dev)
        self.cu_dev = torch.zeros(B + 1, dtype=torch.int32, device=dev)
        self.last = None

    # -- MRV2's host work -----------------------------------------------------------------
    def _qsl_np(self, out):
        out[0] = 0
        np.cumsum(self.nst_np, out=out[1:self.B + 1])
        out[self.B + 1:] = self.T  # padded for full CUDA graphs
        return out

    def _cu_np(self, out):
        out[0] = 0
        np.cumsum(self.nd_np + 1, out=out[1:])
        return out

    # -- the step as MRV2's Python issues it ------------------------------------------------
    def plain(self):
        B = self.B
        idx = async_copy_to_gpu(self.idx_np, device=self.dev)
        if self.D:
            cu = async_copy_to_gpu(self._cu_np(np.empty(B + 1, dtype=np.int32)), device=self.dev)
        else:
            cu = torch.arange(B + 1, device=self.dev, dtype=torch.int32)
        qsl_np = self._qsl_np(np.empty(self.buf.query_start_loc.shape[0], dtype=np.int32))
        async_copy_to_gpu(qsl_np, out=self.buf.query_start_loc)
        return self._kernels(idx, self.buf.query_start_loc[:B + 1], cu)

    # -- the same step split for a CUDA graph -----------------------------------------------
    def staged_host(self):
        """The host part: numpy into the persistent pinned staging buffers."""
        self._qsl_np(self.qsl_pin.numpy())
        self.idx_pin.numpy()[:] = self.idx_np
        if self.D:
            self._cu_np(self.cu_pin.numpy())

    def staged_device(self):
        """The capturable part: uploads from the staging buffers, then the kernels."""
        B = self.B
        self.idx_dev.copy_(self.idx_pin, non_blocking=True)
        self.buf.query_start_loc.copy_(self.qsl_pin, non_blocking=True)
        if self.D:
            cu = self.cu_dev.copy_(self.cu_pin, non_blocking=True)
        else:
            cu = torch.arange(B + 1, device=self.dev, dtype=torch.int32)
        return self._kernels(self.idx_dev, self.buf.query_start_loc[:B + 1], cu)

    def _kernels(self, idx, qsl, cu):
        V, B, T, L = self.V, self.B, self.T, self.L
        V.prepare_pos_seq_lens(idx, qsl, self.nct, self.buf.positions, self.buf.seq_lens)
        seq_lens = self.buf.seq_lens[:B]
        tables = self.bts.gather_block_tables(idx, B)
        slots = self.bts.compute_slot_mappings(idx, qsl, self.buf.positions[:T], T)
        logits = V.combine_sampled_and_draft_tokens(
            self.buf.input_ids, idx, self.last_sampled, qsl, seq_lens, self.prefill_len,
            self.draft_tokens, cu, L)
        if self.D:
            e_idx, e_pos = V.expand_idx_mapping(idx, L, cu, 1 + self.D)
        else:
            e_idx, e_pos = idx, torch.zeros(B, dtype=torch.int32, device=self.dev)
        self.last = dict(qsl=qsl, tables=tables, slots=slots, logits=logits, cu=cu,
                         e_idx=e_idx, e_pos=e_pos)
        return self.last

    def poison(self):
        """Overwrites what a step writes, so that a replay is seen to write it again."""
        self.buf.positions.fill_(-3)
        self.buf.seq_lens.fill_(-3)
        self.buf.query_start_loc.fill_(-3)
        for t in self.bts.input_block_tables:
            t.fill_(-3)
        self.bts.slot_mappings.fill_(-3)
        for k in ("logits", "cu", "e_idx", "e_pos"):  # the step makes or uploads them anew
            if self.last is not None:
                self.last[k].fill_(-3)

    def outputs(self):
        """The step's products as host tensors (int64), in the comparison's names."""
        B, T, L, o = self.B, self.T, self.L, self.last
        h = lambda t: t.detach().to("cpu", torch.int64).clone()  # noqa: E731
        return dict(
            query_start_loc=h(o["qsl"]), seq_lens=h(self.buf.seq_lens[:B]),
            positions=h(self.buf.positions[:T]),
            block_tables=[h(t[:B]) for t in self.bts.input_block_tables],
            slot_mappings=[h(self.bts.slot_mappings[g])
                           for g in range(self.bts.num_kv_cache_groups)],
            logits_indices=h(o["logits"][:L]), cu_num_logits=h(o["cu"]),
            expanded_idx_mapping=h(o["e_idx"][:L]), expanded_local_pos=h(o["e_pos"][:L]))
