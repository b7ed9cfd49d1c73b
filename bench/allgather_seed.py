# SPDX-License-Identifier: Apache-2.0
"""The seed's pcp_kv_allgather_and_restore, done the seed's way with torch.distributed, on the
shapes bench_allgather times for libcattn: per call, key[:T] and value[:T] made contiguous, two
all-gathers along dim 0 (all_gather_into_tensor into a fresh output, as vLLM's
GroupCoordinator.all_gather does) and two index_selects. Next to it, two bare all-gathers of the
same bytes into preallocated outputs (the ceiling).

Timing as bench_allgather: the ranks are released together (device sync + barrier), CUDA events
around one call, median over --reps; rank 0's numbers are printed as a table.

    torchrun --nproc-per-node 2 bench/allgather_seed.py [--reps 30] [--filter T4096] [--json F]

Needs torch with CUDA and NCCL, and as many GPUs as processes.
"""
import argparse
import json
import os
import statistics

import torch
import torch.distributed as dist

# name, T (num_actual_tokens per rank), H, D; bf16; 5 slack rows past T.
SHAPES = [
    ("T16 H8 D128", 16, 8, 128),
    ("T256 H8 D128", 256, 8, 128),
    ("T4096 H8 D128", 4096, 8, 128),
    ("T65536 H8 D128", 65536, 8, 128),
    ("T8192 H16 D192", 8192, 16, 192),
]
SLACK = 5


def seed_way(key, value, n, restore_idx, world):
    """What the seed computes, with torch.distributed standing in for the PCP group."""
    outs = []
    for t in (key, value):
        part = t[:n].contiguous()
        gathered = torch.empty((world * n,) + tuple(part.shape[1:]), dtype=part.dtype,
                               device=part.device)
        dist.all_gather_into_tensor(gathered, part)
        outs.append(gathered)
    return (torch.index_select(outs[0], 0, restore_idx),
            torch.index_select(outs[1], 0, restore_idx))


def time_us(fn, reps):
    """Median of `reps` timed calls after 3 warm-ups; every call starts with all ranks ready."""
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    samples = []
    for i in range(3 + reps):
        torch.cuda.synchronize()
        dist.barrier()
        torch.cuda.synchronize()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        if i >= 3:
            samples.append(start.elapsed_time(stop) * 1000.0)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--filter", default=None)
    ap.add_argument("--json", default=None, help="rank 0 writes its numbers here")
    args = ap.parse_args()

    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, world = dist.get_rank(), dist.get_world_size()
    results = {}
    for name, T, H, D in SHAPES:
        if args.filter and args.filter not in name:
            continue
        gen = torch.Generator(device="cuda").manual_seed(1000 * T + rank)
        key = torch.randn((T + SLACK, H, D), device="cuda", dtype=torch.bfloat16, generator=gen)
        value = torch.randn((T + SLACK, H, D), device="cuda", dtype=torch.bfloat16,
                            generator=gen)
        # A permutation of the gathered rows, the same on every rank.
        perm = torch.randperm(world * T, generator=torch.Generator().manual_seed(T))
        restore_idx = perm.to(device="cuda", dtype=torch.int64)
        bare_k = torch.empty((world * T, H, D), device="cuda", dtype=torch.bfloat16)
        bare_v = torch.empty_like(bare_k)
        k_send, v_send = key[:T], value[:T]  # contiguous: the first T rows of a compact tensor

        def bare():
            dist.all_gather_into_tensor(bare_k, k_send)
            dist.all_gather_into_tensor(bare_v, v_send)

        # Check the seed's way against the bare gather before timing it.
        k_out, v_out = seed_way(key, value, T, restore_idx, world)
        bare()
        torch.cuda.synchronize()
        assert torch.equal(k_out, bare_k[restore_idx]) and torch.equal(v_out, bare_v[restore_idx])

        seed_us = time_us(lambda: seed_way(key, value, T, restore_idx, world), args.reps)
        bare_us = time_us(bare, args.reps)
        mib = 2.0 * T * H * D * 2 / (1 << 20)
        results[f"allgather_restore W{world} {name} bf16"] = {
            "seed_us": seed_us, "bare_2x_allgather_us": bare_us, "MiB_per_rank_kv": mib}

    if rank == 0:
        print(f"seed pcp_kv_allgather_and_restore (torch {torch.__version__}), W = {world} "
              f"GPUs, bf16, median of {args.reps} (rank 0), us\n")
        print("| case | MiB per rank (K+V) | seed | bare 2x all-gather | seed / bare 2x |")
        print("|---|---:|---:|---:|---:|")
        for case, r in results.items():
            print(f"| {case} | {r['MiB_per_rank_kv']:.4g} | {r['seed_us']:.1f} | "
                  f"{r['bare_2x_allgather_us']:.1f} | "
                  f"{r['seed_us'] / r['bare_2x_allgather_us']:.2f} |")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
