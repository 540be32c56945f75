"""`tkc run` on the GPU: compile, launch on torch tensors, time, and hand the outputs back.

Inputs arrive as f32 numpy arrays already rounded to their dtypes (tkc.runner.make_inputs);
they travel to the device in the kernel's declared dtype, outputs start poisoned with NaN, and
come back as f32 numpy arrays for the runner's checksums and --check. The launch is timed with
CUDA events (median after warm-up) and reported in TFLOP/s of the kernel's matrix products.
"""

from __future__ import annotations

import statistics
import sys
from typing import TextIO

import numpy as np

from tkc.dialects import tile


def _torch_dtype(element_type: object):  # noqa: ANN202 - torch is imported lazily
    import torch

    names = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "fp8e4m3": torch.float8_e4m3fn}
    return names[tile.element_name(element_type)]


def run_on_gpu(
    path: str,
    kernel: str,
    inputs: dict[str, np.ndarray],
    params: dict[str, int],
    runs: int = 20,
    out: TextIO = sys.stdout,
) -> dict[str, np.ndarray]:
    import torch

    import tkc
    from tkc.flops import count_flops

    compiled = tkc.compile(path, kernel=kernel, **params)
    kernel_op = next(op for op in compiled.module.walk() if isinstance(op, tile.KernelOp))
    args = []
    for name, arg in zip(kernel_op.arg_names, kernel_op.body.block.args, strict=True):
        assert isinstance(arg.type, tile.GlobalType)
        dtype = _torch_dtype(arg.type.element_type)
        args.append(torch.from_numpy(np.ascontiguousarray(inputs[name])).to(device="cuda", dtype=dtype))
    compiled(*args)
    torch.cuda.synchronize()
    outputs = {name: value.float().cpu().numpy() for name, value in zip(kernel_op.arg_names, args, strict=True)}

    times = []
    for i in range(runs + 3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        compiled(*args)
        end.record()
        end.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end))
    milliseconds = statistics.median(times)
    dims: dict[str, int] = {}
    for spec, value in zip(compiled.abi.args, args):
        dims |= {d: int(size) for d, size in zip(spec.dims, value.shape) if isinstance(d, str)}
    flops = count_flops(kernel_op, dims)
    rate = f"  {flops / milliseconds / 1e9:.1f} TFLOP/s" if flops else ""
    print(f"time {milliseconds * 1e3:.1f} us (median of {runs}){rate}", file=out)
    stored = {op.tensor for op in kernel_op.walk() if isinstance(op, tile.StoreOp)}
    names = dict(zip(kernel_op.body.block.args, kernel_op.arg_names))
    return {names[arg]: outputs[names[arg]] for arg in kernel_op.body.block.args if arg in stored}
