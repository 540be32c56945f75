"""`tkc run` on the GPU: compile a kernel, launch it on numpy inputs, return what it stores.

The runner hands over f32 numpy arrays (write-only outputs poisoned with NaN); each is converted
to its argument's dtype (ml_dtypes for bf16 and fp8, as the interpreter stores them), launched
through the numpy path of `Kernel` (copied in, copied back), and the stored arguments are
returned in their declared dtypes, so GPU and interpreter outputs compare directly.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tkc.abi import KernelABI
from tkc.diagnostics import TkError


def storage_dtype(dtype: str) -> np.dtype:
    """The numpy dtype holding a tensor of the tkc `dtype`."""
    import ml_dtypes

    return np.dtype(
        {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32,
         "fp8e4m3": ml_dtypes.float8_e4m3fn}[dtype]
    )


def launch_arrays(abi: KernelABI, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """One packed array per ABI argument, in ABI order, converted to the argument's dtype."""
    missing = [a.name for a in abi.args if a.name not in inputs]
    if missing:
        raise TkError(f"no input array for argument {', '.join(missing)}")
    return [
        np.ascontiguousarray(np.asarray(inputs[a.name]).astype(storage_dtype(a.dtype)))
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
    return {name: by_name[name] for name in stored_arguments(find_kernel(compiled.module, kernel))}
