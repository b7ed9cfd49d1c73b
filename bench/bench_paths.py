# SPDX-License-Identifier: Apache-2.0
"""Where the side-by-side benches find what this repository does not hold.

- The seed oracle: the vLLM functions libcattn was written from, made importable (a folder
  holding vllm_ref.py, or an installed vLLM's module folder with --module). Option --reference,
  or the environment variable CATTN_ORACLE_DIR.
- The upstream oracle: vLLM's newest helpers (a folder holding vllm_upstream.py and
  _prelude_upstream.py). Option --reference (--oracle in kv_cache_layout_side_by_side.py), or
  CATTN_ORACLE_UPSTREAM_DIR.
- The step-inputs oracle: vLLM's step-input and speculative-decoding code (a folder holding
  vllm_step_inputs.py and _prelude_step_inputs.py, the upstream oracle's vllm_upstream.py in the
  folder above it). Option --oracle, or CATTN_ORACLE_STEP_INPUTS_DIR, else
  ../shared/oracle_upstream/step_inputs beside the checkout.
- The recorded seed numbers: the seed's times measured once on an H200 (a folder holding
  vllm_seed_h200.json), shown next to libcattn's for reference. Option --baseline (the file),
  or CATTN_BASELINE_DIR; optional: without it the column reads "-".

bench/README.md ("Oracles and recorded numbers") says what each holds. A bench that needs one
that is not given, or is given but lacks its files, stops with a message naming the option and
the variable.
"""
import os
import sys

ORACLE_ENV = "CATTN_ORACLE_DIR"
UPSTREAM_ENV = "CATTN_ORACLE_UPSTREAM_DIR"
STEP_INPUTS_ENV = "CATTN_ORACLE_STEP_INPUTS_DIR"
BASELINE_ENV = "CATTN_BASELINE_DIR"
SEED_BASELINE_FILE = "vllm_seed_h200.json"
DEFAULT_STEP_INPUTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                   "..", "shared", "oracle_upstream", "step_inputs")


def _stop(prog, message):
    sys.exit(f"{os.path.basename(prog)}: {message} (bench/README.md, \"Oracles and recorded "
             f"numbers\")")


def _folder(prog, given, option, env, what):
    path = given or os.environ.get(env, "")
    if not path:
        _stop(prog, f"{what} is not given: pass {option} DIR or set {env}")
    how = option if given else env
    if not os.path.isdir(path):
        _stop(prog, f"{what} {path!r} (from {how}) is not a folder")
    return os.path.abspath(path), how


def seed_oracle(prog, given, module="vllm_ref", option="--reference"):
    """The folder of the seed's module `module` (a module file or a package in it)."""
    path, how = _folder(prog, given, option, ORACLE_ENV,
                        f"the seed oracle (a folder holding {module}.py)")
    if not (os.path.isfile(os.path.join(path, module + ".py")) or
            os.path.isfile(os.path.join(path, module, "__init__.py"))):
        _stop(prog, f"the seed oracle {path!r} (from {how}) holds no module {module!r}")
    return path


def upstream_oracle(prog, given, option="--reference"):
    """The folder of vllm_upstream.py and _prelude_upstream.py."""
    path, how = _folder(prog, given, option, UPSTREAM_ENV,
                        "the upstream oracle (a folder holding vllm_upstream.py)")
    for name in ("vllm_upstream.py", "_prelude_upstream.py"):
        if not os.path.isfile(os.path.join(path, name)):
            _stop(prog, f"the upstream oracle {path!r} (from {how}) holds no {name}")
    return path


def step_inputs_oracle(prog, given):
    """The step-inputs oracle's folder: `given` (--oracle), else $CATTN_ORACLE_STEP_INPUTS_DIR,
    else shared/oracle_upstream/step_inputs beside the checkout."""
    env = os.environ.get(STEP_INPUTS_ENV, "")
    path = given or env or DEFAULT_STEP_INPUTS
    how = "--oracle" if given else (STEP_INPUTS_ENV if env else "the default beside the checkout")
    what = f"the step-inputs oracle {os.path.abspath(path)!r} (from {how})"
    if not os.path.isdir(path):
        _stop(prog, f"{what} is not a folder: pass --oracle DIR or set {STEP_INPUTS_ENV}")
    for name in ("vllm_step_inputs.py", "_prelude_step_inputs.py"):
        if not os.path.isfile(os.path.join(path, name)):
            _stop(prog, f"{what} holds no {name}: pass --oracle DIR or set {STEP_INPUTS_ENV}")
    if not os.path.isfile(os.path.join(path, "..", "vllm_upstream.py")):
        _stop(prog, f"{what}: its parent folder holds no vllm_upstream.py (the prelude imports "
                    f"it from there): copy the whole oracle_upstream folder")
    return os.path.abspath(path)


def seed_baseline(prog, given, name=SEED_BASELINE_FILE, option="--baseline"):
    """The recorded seed numbers: the file `given`, else `name` in $CATTN_BASELINE_DIR, else
    None (not given: the numbers are for reference only)."""
    if given:
        if not os.path.isfile(given):
            _stop(prog, f"the recorded seed numbers {given!r} (from {option}) are not a file")
        return given
    folder = os.environ.get(BASELINE_ENV, "")
    if not folder:
        return None
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        _stop(prog, f"the recorded seed numbers: {BASELINE_ENV}={folder!r} holds no {name}")
    return path
