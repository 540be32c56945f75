"""The CUDA driver seen from tkc: one context (device 0's primary), module loading, checked calls.

`cuda.bindings` is imported on first use, never at import time, so that everything else in tkc
(and the argument checks of the runtime) works on machines without a GPU or without libcuda.
Every driver call goes through `check`, which turns a failed `CUresult` into a `CudaError`
naming the call and the CUDA error (e.g. `cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from tkc.diagnostics import TkError

JIT_LOG_BYTES = 1 << 16


class DeviceError(RuntimeError):
    """The machine cannot run tkc kernels: no driver, no GPU, or not a Hopper (cc 9.0) GPU."""


KERNEL_STOPPED = ("CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ILLEGAL_INSTRUCTION")
"""The errors a kernel that ran `trap` leaves (sm90.TrapOp), or a TMA copy that broke its alignment rule."""
TRAP_HINT = (
    "A tkc kernel stops with this error where an access breaks a rule only the run time can check: a scalar "
    "load (load T[i] : i32) outside its tensor or reading a negative value, a tile load wholly past the end "
    "of a dim that is a whole number of its tiles, an elem(...) start along a tensor's innermost dim that is "
    "not a multiple of 16 bytes (TMA's), or a tile stored at a leading index below 0 or from a column before the "
    "innermost dim's first. "
    "`tkc run --interpret` (or `--check`) on the same shapes names "
    "the access. The CUDA context is unusable after it, as after any device-side assert."
)


class CudaError(DeviceError):
    """A driver call returned an error; `log` holds ptxas's messages for a failed JIT."""

    def __init__(self, call: str, code: int, name: str, description: str, log: str = ""):
        text = f"{call} failed: {name} ({code}): {description}"
        if name in KERNEL_STOPPED:
            text += f"\n{TRAP_HINT}"
        if log:
            text += f"\n{log}"
        super().__init__(text)
        self.call = call
        self.code = code
        self.name = name
        self.log = log


def driver() -> Any:
    """The `cuda.bindings.driver` module (imported lazily: it is heavy and may be absent)."""
    try:
        from cuda.bindings import driver as cu
    except ImportError as e:
        raise DeviceError(f"cuda-python is not installed ({e}); `pip install cuda-python`") from e
    return cu


def check(call: str, result: tuple, log: str = "") -> Any:
    """The value(s) a driver call returned after its CUresult, or `CudaError` if it failed."""
    cu = driver()
    err, *values = result
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        _, desc = cu.cuGetErrorString(err)
        raise CudaError(
            call, int(err), _text(name) or str(err), _text(desc) or "", log
        )
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


@dataclass(frozen=True)
class Device:
    """Device 0 with its primary context current: the context torch's runtime uses too."""

    ordinal: int
    handle: Any
    context: Any
    name: str
    num_sms: int
    smem_optin: int
    """Largest dynamic + static shared memory one block may opt into, in bytes."""

    def activate(self) -> None:
        """Make the context current in the calling thread (contexts are per thread)."""
        check("cuCtxSetCurrent", driver().cuCtxSetCurrent(self.context))


@cache
def device() -> Device:
    """Initialise the driver once and return device 0, checked to be compute capability 9.0."""
    cu = driver()
    try:
        check("cuInit", cu.cuInit(0))
    except CudaError:
        raise
    except Exception as e:  # cuda.pathfinder raises when libcuda.so is missing
        raise DeviceError(f"the CUDA driver (libcuda) could not be loaded: {e}") from e
    if check("cuDeviceGetCount", cu.cuDeviceGetCount()) == 0:
        raise DeviceError("no CUDA device is visible")
    handle = check("cuDeviceGet", cu.cuDeviceGet(0))
    attr = cu.CUdevice_attribute

    def get(a: Any) -> int:
        return int(check("cuDeviceGetAttribute", cu.cuDeviceGetAttribute(a, handle)))

    name = _text(check("cuDeviceGetName", cu.cuDeviceGetName(256, handle))).split("\0")[0]
    major = get(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
    minor = get(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    if (major, minor) != (9, 0):
        # sm_90a code is arch-specific: it runs on cc 9.0 only, not on later GPUs.
        raise DeviceError(
            f"tkc kernels are compiled for sm_90a and need a compute capability 9.0 GPU "
            f"(H100/H200); device 0 ({name}) is {major}.{minor}"
        )
    context = check("cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain(handle))
    check("cuCtxSetCurrent", cu.cuCtxSetCurrent(context))
    return Device(
        ordinal=0,
        handle=handle,
        context=context,
        name=name,
        num_sms=get(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
        smem_optin=get(attr.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
    )


def load_module(ptx: str | None, cubin: bytes | None) -> Any:
    """A CUmodule from PTX (through the driver JIT, ptxas's log on failure) or from a cubin."""
    cu = driver()
    device().activate()
    if cubin is not None:
        return check("cuModuleLoadData", cu.cuModuleLoadData(bytes(cubin)))
    assert ptx is not None
    log = bytearray(JIT_LOG_BYTES)
    opts = [
        cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER,
        cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ]
    result = cu.cuModuleLoadDataEx(ptx.encode() + b"\0", len(opts), opts, [log, len(log)])
    text = bytes(log).split(b"\0", 1)[0].decode(errors="replace").strip()
    return check("cuModuleLoadDataEx", result, log=text)


def get_function(module: Any, entry: str, smem_bytes: int, block: int) -> Any:
    """The kernel `entry`, with its dynamic shared memory limit raised to `smem_bytes`."""
    cu = driver()
    dev = device()
    try:
        fn = check("cuModuleGetFunction", cu.cuModuleGetFunction(module, entry.encode()))
    except CudaError as e:
        raise CudaError(e.call, e.code, e.name, f"no kernel named {entry!r} in the module") from e
    fattr = cu.CUfunction_attribute

    def get(a: Any) -> int:
        return int(check("cuFuncGetAttribute", cu.cuFuncGetAttribute(a, fn)))

    static = get(fattr.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
    if smem_bytes + static > dev.smem_optin:
        raise TkError(
            f"kernel {entry} needs {smem_bytes} bytes of dynamic shared memory"
            + (f" (+ {static} static)" if static else "")
            + f", but {dev.name} allows at most {dev.smem_optin} bytes per block"
        )
    max_threads = get(fattr.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
    if block > max_threads:
        # After register allocation a kernel may fit fewer threads than it was written for.
        raise TkError(
            f"kernel {entry} is launched with {block} threads per block, but with "
            f"{get(fattr.CU_FUNC_ATTRIBUTE_NUM_REGS)} registers per thread it can run at most "
            f"{max_threads}"
        )
    check(
        "cuFuncSetAttribute",
        cu.cuFuncSetAttribute(
            fn, fattr.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem_bytes
        ),
    )
    return fn
