# SPDX-License-Identifier: Apache-2.0
"""Shared helpers for the vector generators: import the seed oracle and write JSON.

The oracle (the seed's own vLLM functions) lives beside the checkout, in ../shared/oracle, or
wherever CATTN_ORACLE_DIR points. Only the numbers it produces are committed. Run generators with
Debian's /usr/bin/python3 (python3-torch, python3-numpy).
"""
import os
import sys

from vectors_io import REPO, VECTOR_DIR, np, rng, tolist, torch, write  # noqa: F401

ORACLE_DIR = os.environ.get("CATTN_ORACLE_DIR", os.path.join(REPO, "..", "shared", "oracle"))
sys.path.insert(0, ORACLE_DIR)

import vllm_ref as V  # noqa: E402,F401
