# SPDX-License-Identifier: Apache-2.0
"""Vectors for log2_lse_to_ln from the upstream oracle, as bit patterns so that every rounding
is compared exactly: each of "in", "out" and "out_torch" is one string of fixed-width hex digits
per element (4 for the 16-bit types, 8 for float32, 16 for float64), row-major.

"out" is what the oracle computes here (torch 1.13 on the CPU: for float16 and bfloat16 the
scalar ln 2 is first rounded to the tensor's type), libcattn's CATTN_LSE_ROUNDING_TORCH1_CPU.
"out_torch" is torch >= 2.0's product for the half types (CPU and CUDA compute in float32 with
ln 2 as a float32 and round once), libcattn's default CATTN_LSE_ROUNDING_TORCH; it is formed
here with explicit float32 arithmetic, which is exactly that definition. For float32 and float64
both are the oracle's output.
"""
import math

from oracle_upstream import U, rng, torch, write

NAMES = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32",
         torch.float64: "float64"}


def bits_of(t):
    if t.dtype == torch.bfloat16:
        return [int(v) & 0xFFFF for v in t.view(torch.int16).flatten().tolist()]
    if t.dtype == torch.float16:
        return [int(v) & 0xFFFF for v in t.view(torch.int16).flatten().tolist()]
    if t.dtype == torch.float32:
        return [int(v) & 0xFFFFFFFF for v in t.view(torch.int32).flatten().tolist()]
    return [int(v) & 0xFFFFFFFFFFFFFFFF for v in t.view(torch.int64).flatten().tolist()]


def hexes(t):
    """The elements' bit patterns, row-major, as one string of fixed-width hex digits."""
    width = {torch.float16: 4, torch.bfloat16: 4, torch.float32: 8, torch.float64: 16}[t.dtype]
    return "".join("%0*x" % (width, v) for v in bits_of(t))


def case(name, x):
    out = U.log2_lse_to_ln(x)
    if x.dtype in (torch.float16, torch.bfloat16):
        ref2 = (x.float() * torch.tensor(math.log(2.0), dtype=torch.float32)).to(x.dtype)
    else:
        ref2 = out
    return {"name": name, "dtype": NAMES[x.dtype], "shape": list(x.shape), "in": hexes(x),
            "out": hexes(out), "out_torch": hexes(ref2)}


def special(dt):
    fi = torch.finfo(dt)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, float("inf"), float("-inf"), float("nan"),
            fi.max, -fi.max, fi.tiny, -fi.tiny, fi.eps, 1e-3, -37.25, 100.0, 65504.0 / 2]
    t = torch.tensor(vals, dtype=torch.float64).to(dt)
    # The smallest subnormals and a run of them (float16/bfloat16 only; cheap to add for all).
    if dt in (torch.float16, torch.bfloat16):
        sub = torch.arange(1, 40, dtype=torch.int16).view(dt)
        t = torch.cat([t, sub, -sub])
    return t


def all_halves(dt):
    """Every finite and special 16-bit pattern."""
    return torch.arange(-2 ** 15, 2 ** 15, dtype=torch.int32).to(torch.int16).view(dt)


def main():
    g = rng(1521)
    cases = []
    for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        n = NAMES[dt]
        cases.append(case(n + "_special", special(dt)))
        cases.append(case(n + "_empty", torch.zeros(0, dtype=dt)))
        cases.append(case(n + "_scalar", torch.tensor(-12.5, dtype=dt)))
        cases.append(case(n + "_random_2d",
                          torch.tensor(g.normal(0, 30, size=(7, 13))).to(dt)))
        cases.append(case(n + "_random_3d",
                          torch.tensor(g.normal(0, 1e3, size=(2, 5, 9))).to(dt)))
        big = torch.tensor(g.uniform(-1, 1, size=257) * float(torch.finfo(dt).max)).to(dt)
        cases.append(case(n + "_wide_range", big))
    for dt in (torch.float16, torch.bfloat16):
        cases.append(case(NAMES[dt] + "_every_pattern", all_halves(dt)))
    write("log2_lse_to_ln", cases)


if __name__ == "__main__":
    main()
