"""The tkc runtime: load a compiled kernel and launch it on torch/CuPy/DLPack/numpy arrays.

    kernel = tkc.runtime.load(ptx=text, abi=abi)    # or cubin=bytes
    kernel(A, B, C)                                 # checks, binds dims, encodes tensor maps
    kernel.launch_config(A, B, C)                   # the launch, described, not made

Argument mistakes raise `tkc.diagnostics.TkError` before any launch; driver failures raise
`CudaError`; a machine that cannot run sm_90a code raises `DeviceError`. The CUDA bindings are
imported lazily, so this package imports (and checks arguments) on machines without a GPU.
The runtime knows a kernel through its ABI (tkc.abi) only: it imports nothing of the compiler.
"""

from tkc.runtime.device import CudaError, DeviceError
from tkc.runtime.launch import Kernel, LaunchConfig, ParamSlot, load, plan_launch, synchronize
from tkc.runtime.tensormap import TensorMapSpec

__all__ = [
    "CudaError",
    "DeviceError",
    "Kernel",
    "LaunchConfig",
    "ParamSlot",
    "TensorMapSpec",
    "load",
    "plan_launch",
    "synchronize",
]
