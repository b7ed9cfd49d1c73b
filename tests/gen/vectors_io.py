# SPDX-License-Identifier: Apache-2.0
"""Vector I/O shared by the generators of both oracles (oracle.py, oracle_upstream.py)."""
import json
import os

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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
