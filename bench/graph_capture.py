# SPDX-License-Identifier: Apache-2.0
"""CUDA-graph capture for the side-by-side benches (step_inputs_side_by_side.py and
spec_decode_side_by_side.py), and the check of its wiring that their --device cpu runs make.

torch is never imported here. The runners import it inside main(), after choosing Triton's
interpreter for a CPU run, and this module is imported before that; each helper takes the torch
the running bench has imported (sys.modules), or the one it is given (the self-check's
stand-in). A helper that read torch from a module global filled by its own script's main() saw
None once another script imported it: spec_decode_side_by_side.py's captures failed that way on
a GPU (issue 39), and the CPU runs could not show it.

A capture fails in one of two ways:
  - refused: torch, or Triton under it, raises a RuntimeError about stream capture (CUDA's
    cudaErrorStreamCapture* errors: "operation not permitted when stream is capturing", "failed
    due to a previous error during capture", a host sync or a generator seed read inside the
    capture; torch.compile failing under capture wraps the same message);
  - anything else: a NameError, AttributeError or TypeError of the harness, libcattn's
    CattnError, a Triton compile error, a missing device. These are always raised as they are,
    and so is a refusal whose chain holds one (torch ends the capture after the body raised, and
    that end can fail in turn, with the body's exception as its context).
capture_optional notes a refusal and goes on (a call whose graph vLLM itself does not rely on);
capture_required turns one into CaptureFailed, which the benches report and exit 1 on.
"""
import re
import sys
import traceback

# A RuntimeError's message that speaks of stream capture.
_CAPTURE_WORDS = re.compile(r"captur", re.IGNORECASE)


class CaptureFailed(Exception):
    """A capture the run needs (libcattn's, or one of vLLM's calls vLLM runs inside its graphs)
    was refused."""


def bound_torch():
    """The torch the running bench imported."""
    torch = sys.modules.get("torch")
    if torch is None:
        raise ImportError("graph_capture: torch is not imported yet (each bench's main() imports "
                          "it, after choosing Triton's interpreter, before any capture)")
    return torch


def _refused_one(e):
    if not isinstance(e, RuntimeError):
        return False
    root = (type(e).__module__ or "").split(".")[0]
    from_torch = type(e) is RuntimeError or root in ("torch", "triton")
    return from_torch and bool(_CAPTURE_WORDS.search(str(e)))


def refused(e):
    """Whether `e` and every exception chained to it is torch refusing a stream capture."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if not _refused_one(e):
            return False
        e = e.__cause__ or e.__context__
    return True


def _describe(e):
    return f"{type(e).__name__}: {str(e).strip()[:300]}"


def capture(body, torch=None):
    """body(stream) captured once into a torch.cuda.CUDAGraph (stream: the capture stream's
    handle, torch's current stream inside); the graph."""
    torch = torch or bound_torch()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        body(torch.cuda.current_stream().cuda_stream)
    return g


def capture_optional(what, body, notes, torch=None):
    """capture() of a call that vLLM does not capture itself: a refusal is appended to `notes`
    and answered with None; every other failure is raised."""
    torch = torch or bound_torch()
    try:
        return capture(body, torch)
    except RuntimeError as e:
        if not refused(e):
            raise
        notes.append(f"{what} could not be captured into a CUDA graph: {_describe(e)}")
        torch.cuda.synchronize()
        return None


def capture_required(what, body, torch=None):
    """capture() that the run needs: a refusal raises CaptureFailed naming `what`; every other
    failure is raised as it is."""
    try:
        return capture(body, torch)
    except RuntimeError as e:
        if not refused(e):
            raise
        raise CaptureFailed(f"{what} could not be captured into a CUDA graph: "
                            f"{_describe(e)}") from e


# ---- the self-check (no GPU needed) ---------------------------------------------------------
class _StandIn:
    """A stand-in for torch with just what capture() calls; `exit_error` is raised when the
    graph's context ends (as torch's capture_end can)."""

    STREAM = 0x5EED

    def __init__(self, exit_error=None):
        self.events, self.exit_error = [], exit_error
        stand_in = self

        class CUDAGraph:
            pass

        class Stream:
            cuda_stream = self.STREAM

        class graph:
            def __init__(self, g):
                self.g = g

            def __enter__(self):
                stand_in.events.append("begin")

            def __exit__(self, *exc):
                stand_in.events.append("end")
                if stand_in.exit_error is not None:
                    raise stand_in.exit_error
                return False

        class cuda:
            pass

        cuda.CUDAGraph, cuda.graph = CUDAGraph, graph
        cuda.current_stream = staticmethod(lambda: Stream())
        cuda.synchronize = staticmethod(lambda: stand_in.events.append("sync"))
        self.cuda = cuda


def _raises(kind, fn):
    try:
        fn()
    except kind as e:
        return e
    except Exception as e:  # noqa: BLE001 - reported as the wrong exception
        raise AssertionError(f"expected {kind.__name__}, got {_describe(e)}") from e
    raise AssertionError(f"expected {kind.__name__}, nothing was raised")


def self_check(torch):
    """Checks the helpers' wiring without a GPU (the --device cpu runs): that they find the
    bench's torch and that it has what they call; that capture() reaches torch's own graph
    object (on a machine without a device torch stops it, and that error is not taken for a
    refusal); and, on a stand-in torch, that a body runs once inside the capture on the capture
    stream, that a refusal is noted (optional) or fails (required), and that the harness's own
    errors are raised, also when the capture's end fails after them. Returns a line saying what
    was checked; raises AssertionError otherwise."""
    assert bound_torch() is torch, "graph_capture finds another torch than the bench imported"
    for name in ("CUDAGraph", "graph", "current_stream", "synchronize"):
        assert callable(getattr(torch.cuda, name, None)), f"torch.cuda.{name} is missing"
    # The real path, as far as this machine goes.
    real = "a device is present: the real capture is left to the GPU run"
    if not torch.cuda.is_available():
        ran = []
        try:
            capture(lambda s: ran.append(s))
        except Exception as e:  # noqa: BLE001 - classified below
            frames = traceback.extract_tb(e.__traceback__)
            assert not isinstance(e, (NameError, AttributeError, TypeError, ImportError)), (
                f"capture() failed before torch: {_describe(e)} at {frames[-1].filename}:"
                f"{frames[-1].lineno}")
            assert not refused(e), f"a machine without a device read as a refusal: {_describe(e)}"
            real = (f"capture() reached torch, which stopped it without a device "
                    f"({type(e).__name__})")
        else:
            raise AssertionError("capture() succeeded without a device")
        assert not ran, "the body ran without a device"
    # The logic, on a stand-in torch.
    refusal = RuntimeError("CUDA error: operation not permitted when stream is capturing")
    t = _StandIn()
    got = []
    g = capture(lambda s: got.append((s, list(t.events))), torch=t)
    assert isinstance(g, t.cuda.CUDAGraph), "capture() did not return its graph"
    assert got == [(_StandIn.STREAM, ["begin"])] and t.events == ["begin", "end"], (
        f"the body ran {got} with the capture {t.events}")

    def fail(e):
        def body(_):
            raise e
        return body

    notes = []
    assert capture_optional("x", fail(refusal), notes, torch=t) is None and len(notes) == 1, (
        "capture_optional did not note a refusal")
    _raises(CaptureFailed, lambda: capture_required("x", fail(refusal), torch=t))
    harness = [NameError("name 'torch' is not defined"),
               AttributeError("'NoneType' object has no attribute 'cuda'"),
               TypeError("body() takes 0 positional arguments but 1 was given")]

    class CattnError(RuntimeError):  # like cattn_ctypes.CattnError: not torch's
        pass

    for e in harness + [CattnError("cattn_x: 2 stream capture unsupported"),
                        RuntimeError("Triton Error [CUDA]: invalid argument")]:
        assert _raises(type(e), lambda: capture_optional("x", fail(e), [], torch=t)) is e, (
            f"capture_optional swallowed {_describe(e)}")
        assert _raises(type(e), lambda: capture_required("x", fail(e), torch=t)) is e, (
            f"capture_required replaced {_describe(e)}")
    # The body's NameError, then the capture's end failing with a capture message.
    for e in harness:
        t = _StandIn(exit_error=RuntimeError("CUDA error: operation failed due to a previous "
                                             "error during capture"))
        r = _raises(RuntimeError, lambda: capture_optional("x", fail(e), [], torch=t))
        assert r.__context__ is e, f"a failed capture end hid {_describe(e)}"
        _raises(RuntimeError, lambda: capture_required("x", fail(e), torch=t))
    return (f"graph_capture self-check: torch {torch.__version__} bound; {real}; stand-in: body "
            f"on the capture stream, refusals noted or failed, {len(harness) + 2} harness and "
            f"library errors raised (also under a failed capture end)")



def _main():
    """python bench/graph_capture.py: the self-check alone, where torch is installed (on a machine
    with a GPU, CUDA_VISIBLE_DEVICES= runs the real path's part too)."""
    import torch
    print(self_check(torch))


if __name__ == "__main__":
    _main()
