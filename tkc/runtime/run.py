"""`tkc run` on the GPU: compile a kernel, launch it on numpy inputs, return what it stores.

The runner hands over f32 numpy arrays (write-only outputs poisoned with NaN); each is converted
to its argument's dtype (ml_dtypes for bf16 and fp8, as the interpreter stores them), launched
through the numpy path of `Kernel` (copied in, copied back), and the stored arguments are
returned in their declared dtypes, so GPU and interpreter outputs compare directly.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from tkc.abi import KernelABI
from tkc.diagnostics import TkError
from tkc.dtypes import BY_NAME

if TYPE_CHECKING:
    from tkc.api import CompiledKernel
    from tkc.dialects.tile import KernelOp


def launch_arrays(abi: KernelABI, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """One packed array per ABI argument, in ABI order, converted to the argument's dtype."""
    missing = [a.name for a in abi.args if a.name not in inputs]
    if missing:
        raise TkError(f"no input array for argument {', '.join(missing)}")
    return [
        np.ascontiguousarray(np.asarray(inputs[a.name]).astype(BY_NAME[a.dtype].numpy_dtype()))
        for a in abi.args
    ]


def run_on_gpu(
    path: str, kernel: str | None, inputs: Mapping[str, np.ndarray], params: Mapping[str, int]
) -> dict[str, np.ndarray]:
    """The arguments `kernel` stores to, after one launch on `inputs` (synchronous)."""
    from tkc.api import CompiledKernel
    from tkc.interpreter import find_kernel, stored_arguments

    compiled = CompiledKernel(path, kernel, dict(params))
    arrays = launch_arrays(compiled.abi, inputs)
    compiled(*arrays)
    by_name = {a.name: array for a, array in zip(compiled.abi.args, arrays)}
    kernel_op = find_kernel(compiled.module, kernel)
    report_speed(compiled, kernel_op, arrays)
    return {name: by_name[name] for name in stored_arguments(kernel_op)}


def report_speed(compiled: CompiledKernel, kernel_op: KernelOp, arrays: list[np.ndarray], runs: int = 20) -> None:
    """Time the kernel on device-resident copies of `arrays` (CUDA events, median after warm-up)
    and print the time and the TFLOP/s of its matrix products. Needs torch for the copies."""
    try:
        import torch
    except ImportError:
        return
    from tkc.flops import count_flops

    tensors = [
        torch.from_numpy(np.asarray(a, np.float32)).to(device="cuda", dtype=getattr(torch, BY_NAME[spec.dtype].torch))
        for spec, a in zip(compiled.abi.args, arrays, strict=True)
    ]
    times = []
    for i in range(runs + 3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        compiled(*tensors)
        end.record()
        end.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end))
    milliseconds = statistics.median(times)
    dims = {d: int(n) for spec, t in zip(compiled.abi.args, tensors) for d, n in zip(spec.dims, t.shape)
            if isinstance(d, str)}
    flops = count_flops(kernel_op, dims)
    rate = f"  {flops / milliseconds / 1e9:.1f} TFLOP/s" if flops else ""
    print(f"time {milliseconds * 1e3:.1f} us (median of {runs} launches){rate}", flush=True)
