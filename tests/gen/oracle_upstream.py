# SPDX-License-Identifier: Apache-2.0
"""Shared helpers for the 1.1 vector generators: import the upstream oracle and write JSON.

The upstream oracle (vLLM's newest versions of these helpers) lives beside the checkout, in
../shared/oracle_upstream, or wherever CATTN_ORACLE_UPSTREAM_DIR points. As with oracle.py, only
the numbers it produces are committed. Run generators with Debian's /usr/bin/python3
(python3-torch, python3-numpy).
"""
import os
import sys

from vectors_io import REPO, VECTOR_DIR, np, rng, tolist, torch, write  # noqa: F401

UPSTREAM_DIR = os.environ.get("CATTN_ORACLE_UPSTREAM_DIR",
                              os.path.join(REPO, "..", "shared", "oracle_upstream"))
sys.path.insert(0, UPSTREAM_DIR)

import vllm_upstream as U  # noqa: E402,F401
import _prelude_upstream as P  # noqa: E402,F401
