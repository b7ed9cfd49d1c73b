"""Shared helpers for the vector generators: import the seed oracle and write JSON.

The oracle (the seed's own vLLM functions) lives beside the checkout, in ../shared/oracle, or
wherever CATTN_ORACLE_DIR points. Only the numbers it produces are committed. Run generators with
Debian's /usr/bin/python3 (python3-torch, python3-numpy).
"""
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORACLE_DIR = os.environ.get("CATTN_ORACLE_DIR", os.path.join(REPO, "..", "shared", "oracle"))
sys.path.insert(0, ORACLE_DIR)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import vllm_ref as V  # noqa: E402,F401

VECTOR_DIR = os.path.join(REPO, "tests", "vectors")


def tolist(x):
    if isinstance(x, torch.Tensor):
        return x.tolist()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.integer,)):
        return int(x)
    return x


def write(utility, cases):
    """Writes {"utility":..., "cases":[...]} to tests/vectors/<utility>.json."""
    path = os.path.join(VECTOR_DIR, utility + ".json")
    with open(path, "w") as f:
        json.dump({"utility": utility, "generator": "tests/gen/gen_%s.py" % utility,
                   "cases": cases}, f, separators=(",", ":"))
        f.write("\n")
    print("wrote %d cases to %s" % (len(cases), os.path.relpath(path, REPO)))


def rng(seed):
    return np.random.default_rng(seed)
