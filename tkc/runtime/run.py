"""One launch of a loaded kernel on numpy inputs, and its median time: `tkc run`'s GPU path.

The caller hands over f32 numpy arrays by argument name (write-only outputs poisoned with NaN);
each is converted to its argument's dtype (ml_dtypes for bf16 and fp8, as the interpreter stores
them), launched through the numpy path of `Kernel` (copied in, copied back), and the arguments
the ABI says the kernel writes are returned in their declared dtypes, so GPU and interpreter
outputs compare directly. Like the rest of the runtime this knows the kernel through its ABI
only; compiling it is the caller's business (tkc.runner).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from tkc.abi import KernelABI
from tkc.diagnostics import TkError
from tkc.dtypes import BY_NAME

Launch = Callable[..., Any]
"""A kernel to launch on arrays: a `tkc.runtime.Kernel`, or anything that launches like one."""


def launch_arrays(abi: KernelABI, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """One packed array per ABI argument, in ABI order, converted to the argument's dtype."""
    missing = [a.name for a in abi.args if a.name not in inputs]
    if missing:
        raise TkError(f"no input array for argument {', '.join(missing)}")
    return [
        np.ascontiguousarray(np.asarray(inputs[a.name]).astype(BY_NAME[a.dtype].numpy_dtype()))
        for a in abi.args
    ]


def written(abi: KernelABI, arrays: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """The arrays (in ABI order, as `launch_arrays` made them) of the arguments the kernel writes."""
    by_name = {a.name: array for a, array in zip(abi.args, arrays, strict=True)}
    return {name: by_name[name] for name in abi.written}


def median_milliseconds(abi: KernelABI, kernel: Launch, arrays: Sequence[np.ndarray], runs: int = 20) -> float | None:
    """The median time of `runs` launches (after 3 warm-up ones; CUDA events) on device-resident
    copies of `arrays`; None without torch, which makes the copies."""
    try:
        import torch
    except ImportError:
        return None
    tensors = [
        torch.from_numpy(np.asarray(a, np.float32)).to(device="cuda", dtype=getattr(torch, BY_NAME[spec.dtype].torch))
        for spec, a in zip(abi.args, arrays, strict=True)
    ]
    times = []
    for i in range(runs + 3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        kernel(*tensors)
        end.record()
        end.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end))
    return statistics.median(times)
