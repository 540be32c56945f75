"""The runtime's driver-side code paths against a fake `cuda.bindings.driver`, without a GPU.

"Device memory" is host memory the fake hands out, and a launch runs a Python stand-in for the
kernel that reads the `void**` params exactly as the driver would. This checks what the real
GPU tests cannot show on a CPU machine: the order and values of the driver calls, numpy staging
and copy-back, the tensor-map cache, and that each driver failure becomes the right error.
"""

from __future__ import annotations

import ctypes
from types import SimpleNamespace

import numpy as np
import pytest

import tkc.runtime.device as device_mod
import tkc.runtime.launch as launch_mod
import tkc.runtime.tensormap as tensormap_mod
from tkc.abi import ArgSpec, DimParam, KernelABI, PointerParam, TensorMapParam
from tkc.diagnostics import TkError
from tkc.runtime import CudaError, DeviceError, load

SUCCESS, INVALID_VALUE, INVALID_PTX, NOT_FOUND = 0, 1, 218, 500
ERROR_NAMES = {
    INVALID_VALUE: "CUDA_ERROR_INVALID_VALUE",
    INVALID_PTX: "CUDA_ERROR_INVALID_PTX",
    NOT_FOUND: "CUDA_ERROR_NOT_FOUND",
}


class Names:
    """An enum stand-in: any attribute is its own name."""

    def __getattr__(self, name: str) -> str:
        return name


class FakeDriver:
    def __init__(self, cc=(9, 0), smem_optin=232448):
        self.calls: list[str] = []
        self.attrs = {
            "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR": cc[0],
            "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR": cc[1],
            "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT": 132,
            "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": smem_optin,
        }
        self.memory: dict[int, np.ndarray] = {}
        self.capturing: set[int] = set()
        """The streams capturing a CUDA graph."""
        self.kernels: dict[str, object] = {}
        self.launches: list[SimpleNamespace] = []
        self.func_attrs: dict[str, int] = {}
        self.encoded: list[tuple] = []
        self.CUresult = SimpleNamespace(CUDA_SUCCESS=SUCCESS)
        self.CUdevice_attribute = self.CUfunction_attribute = Names()
        self.CUjit_option = self.CUpointer_attribute = self.CUevent_flags = self.CUstreamCaptureStatus = Names()
        self.cuuint64_t = self.cuuint32_t = int
        self.CUtensorMapDataType = self.CUtensorMapInterleave = self.CUtensorMapSwizzle = int
        self.CUtensorMapL2promotion = self.CUtensorMapFloatOOBfill = int
        self.CUstream = int
        self.CUlaunchConfig = SimpleNamespace
        self.CUlaunchAttributeID = Names()
        self.CUlaunchAttribute = lambda: SimpleNamespace(value=SimpleNamespace())

    def __getattr__(self, name):  # every cu* call not defined below succeeds with no value
        if name.startswith("cu"):
            return lambda *args: self._record(name, (SUCCESS,))
        raise AttributeError(name)

    def _record(self, name, result):
        self.calls.append(name)
        return result

    def cuGetErrorName(self, err):
        return SUCCESS, ERROR_NAMES[err].encode()

    def cuGetErrorString(self, err):
        return SUCCESS, b"fake description"

    def cuDeviceGetCount(self):
        return self._record("cuDeviceGetCount", (SUCCESS, 1))

    def cuDeviceGet(self, ordinal):
        return self._record("cuDeviceGet", (SUCCESS, ordinal))

    def cuDeviceGetName(self, n, dev):
        return SUCCESS, b"Fake H200\0\0\0"

    def cuDeviceGetAttribute(self, attr, dev):
        return SUCCESS, self.attrs[attr]

    def cuDevicePrimaryCtxRetain(self, dev):
        return self._record("cuDevicePrimaryCtxRetain", (SUCCESS, "ctx"))

    def cuEventCreate(self, flags):
        return self._record("cuEventCreate", (SUCCESS, "event"))

    def cuModuleLoadDataEx(self, image, n, opts, values):
        self.calls.append("cuModuleLoadDataEx")
        assert image.endswith(b"\0") and opts == ["CU_JIT_ERROR_LOG_BUFFER", "CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES"]
        if b"bogus" in image:
            log = b"ptxas application ptx input, line 6; error : Unknown symbol 'bogus'"
            values[0][: len(log)] = log
            return INVALID_PTX, None
        return SUCCESS, "module"

    def cuModuleLoadData(self, image):
        return self._record("cuModuleLoadData", (SUCCESS, "module"))

    def cuModuleGetFunction(self, module, name):
        if name.decode() not in self.kernels:
            return NOT_FOUND, None
        return SUCCESS, name.decode()

    def cuFuncGetAttribute(self, attr, fn):
        defaults = {
            "CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES": 0,
            "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK": 1024,
            "CU_FUNC_ATTRIBUTE_NUM_REGS": 32,
        }
        return SUCCESS, self.func_attrs.get(attr, defaults[attr])

    def cuFuncSetAttribute(self, fn, attr, value):
        self.func_attrs["set " + attr] = value
        return self._record("cuFuncSetAttribute", (SUCCESS,))

    def cuMemAlloc(self, nbytes):
        buf = np.full(nbytes + 256, 0xCD, np.uint8)  # not zeroed, like the GPU's
        addr = (buf.ctypes.data + 255) // 256 * 256
        self.memory[addr] = buf
        return self._record("cuMemAlloc", (SUCCESS, addr))

    def cuMemFree(self, addr):
        del self.memory[addr]
        return self._record("cuMemFree", (SUCCESS,))

    def cuMemsetD8Async(self, dst, value, nbytes, stream):
        ctypes.memset(dst, value, nbytes)
        return self._record("cuMemsetD8Async", (SUCCESS,))

    def cuStreamIsCapturing(self, stream):
        active = stream in self.capturing
        return SUCCESS, "CU_STREAM_CAPTURE_STATUS_ACTIVE" if active else "CU_STREAM_CAPTURE_STATUS_NONE"

    def cuMemcpyHtoDAsync(self, dst, src, nbytes, stream):
        ctypes.memmove(dst, src, nbytes)
        return self._record("cuMemcpyHtoDAsync", (SUCCESS,))

    def cuMemcpyDtoHAsync(self, dst, src, nbytes, stream):
        ctypes.memmove(dst, src, nbytes)
        return self._record("cuMemcpyDtoHAsync", (SUCCESS,))

    def cuPointerGetAttribute(self, attr, ptr):
        assert attr == "CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL"
        owned = any(a <= ptr < a + len(b) - 256 for a, b in self.memory.items())
        return (SUCCESS, 0) if owned else (INVALID_VALUE, None)

    def cuTensorMapEncodeTiled(self, *args):
        self.encoded.append(args)
        _, _, address, dims, _, box, *_ = args
        opaque = [address, *dims, *box]
        return self._record("cuTensorMapEncodeTiled", (SUCCESS, SimpleNamespace(opaque=opaque + [0] * (16 - len(opaque)))))

    def cuLaunchKernelEx(self, cfg, fn, params, extra):
        self.calls.append("cuLaunchKernelEx")
        self.launches.append(cfg)
        self.kernels[fn](params)
        return (SUCCESS,)


@pytest.fixture
def cu(monkeypatch):
    fake = FakeDriver()
    for mod in (device_mod, launch_mod, tensormap_mod):
        monkeypatch.setattr(mod, "driver", lambda: fake)
    monkeypatch.setattr(launch_mod, "_streams", {})  # the fake's streams are ints: keep them from real launches
    device_mod.device.cache_clear()
    yield fake
    device_mod.device.cache_clear()


def param(params: int, index: int, nbytes: int) -> bytes:
    """The bytes of kernel parameter `index`, read through the void** as the driver does."""
    addr = ctypes.c_uint64.from_address(params + 8 * index).value
    return ctypes.string_at(addr, nbytes)


def u64(params: int, index: int) -> int:
    return int.from_bytes(param(params, index, 8), "little")


def u32(params: int, index: int) -> int:
    return int.from_bytes(param(params, index, 4), "little")


# Y = 2 X over f32 [R, W]; a block per row.
SCALE = KernelABI(
    entry="scale",
    args=(ArgSpec("X", "f32", ("R", "W")), ArgSpec("Y", "f32", ("R", "W"))),
    params=(PointerParam("x", "X"), PointerParam("y", "Y"), DimParam("w", "W")),
    grid=("R", 1, 1),
    block=128,
    smem_bytes=64 * 1024,
)


def scale_kernel(cu: FakeDriver):
    """The stand-in for `scale`: one row per block of the launch it is called from."""

    def run(params: int) -> None:
        x, y, w = u64(params, 0), u64(params, 1), u32(params, 2)
        n = cu.launches[-1].gridDimX * w
        src = np.ctypeslib.as_array((ctypes.c_float * n).from_address(x))
        np.ctypeslib.as_array((ctypes.c_float * n).from_address(y))[:] = 2 * src

    return run


def test_load_and_numpy_round_trip(cu):
    cu.kernels["scale"] = scale_kernel(cu)
    k = load(ptx=".version 8.0\n", abi=SCALE)
    assert cu.func_attrs["set CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES"] == 64 * 1024
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    x.flags.writeable = False
    y = np.asfortranarray(np.zeros((3, 4), np.float32))  # staged through a packed copy
    k(x, y)
    assert np.array_equal(y, 2 * x)
    (cfg,) = cu.launches
    assert (cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ) == (3, 1, 1)
    assert (cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ) == (128, 1, 1)
    assert cfg.sharedMemBytes == 64 * 1024 and cfg.hStream == 0 and cfg.numAttrs == 0
    # x is read-only: copied in, never back; both staging buffers freed after the sync
    launch = cu.calls.index("cuLaunchKernelEx")
    assert cu.calls[launch:] == [
        "cuLaunchKernelEx", "cuMemcpyDtoHAsync", "cuStreamSynchronize", "cuMemFree", "cuMemFree",
    ]
    assert cu.memory == {}


def test_dependent_launch_sets_the_programmatic_serialization_attribute(cu):
    cu.kernels["scale"] = scale_kernel(cu)
    k = load(ptx=".version 8.0\n", abi=KernelABI(**{**SCALE.__dict__, "dependent_launch": True}))
    x = np.ones((2, 4), np.float32)
    y = np.zeros_like(x)
    k(x, y)
    assert np.array_equal(y, 2 * x)
    (cfg,) = cu.launches
    (attribute,) = cfg.attrs
    assert cfg.numAttrs == 1 and attribute.id == "CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION"
    assert attribute.value.programmaticStreamSerializationAllowed == 1


def test_device_arrays_launch_on_the_given_stream(cu):
    cu.kernels["scale"] = scale_kernel(cu)
    k = load(ptx="ptx", abi=SCALE)
    x_addr = cu.cuMemAlloc(16 * 4)[1]
    y_addr = cu.cuMemAlloc(16 * 4)[1]
    (ctypes.c_float * 16).from_address(x_addr)[:] = list(range(16))

    class Dev:
        def __init__(self, addr):
            self.__cuda_array_interface__ = {
                "shape": (2, 8), "typestr": "<f4", "data": (addr, False), "strides": None, "version": 3,
            }

    k(Dev(x_addr), Y=Dev(y_addr), stream=SimpleNamespace(cuda_stream=0x5000))
    assert list((ctypes.c_float * 16).from_address(y_addr)) == [2.0 * i for i in range(16)]
    assert cu.launches[-1].hStream == 0x5000
    assert "cuMemcpyHtoDAsync" not in cu.calls  # nothing staged
    assert "cuStreamWaitEvent" not in cu.calls  # no producer stream given


def test_launch_waits_for_the_producers_stream(cu):
    cu.kernels["scale"] = scale_kernel(cu)
    k = load(ptx="ptx", abi=SCALE)
    addr = cu.cuMemAlloc(64)[1]

    class OnStream:  # __cuda_array_interface__ v3 with the stream the producer used
        __cuda_array_interface__ = {"shape": (2, 8), "typestr": "<f4", "data": (addr, False), "version": 3, "stream": 1}

    k(OnStream(), OnStream(), stream=0x5000)
    order = [c for c in cu.calls if c in ("cuEventRecord", "cuStreamWaitEvent", "cuLaunchKernelEx")]
    assert order == ["cuEventRecord", "cuStreamWaitEvent", "cuLaunchKernelEx"]
    cu.calls.clear()
    k(OnStream(), OnStream(), stream=1)  # already the producer's stream: nothing to wait for
    assert "cuStreamWaitEvent" not in cu.calls


def test_host_address_posing_as_device_memory(cu):
    cu.kernels["scale"] = scale_kernel(cu)
    k = load(ptx="ptx", abi=SCALE)
    host = np.zeros((2, 8), np.float32)

    class Liar:
        __cuda_array_interface__ = {"shape": (2, 8), "typestr": "<f4", "data": (host.ctypes.data, False), "version": 3}

    with pytest.raises(TkError, match="argument X: address .* is not CUDA device memory"):
        k(Liar(), Liar())
    assert "cuLaunchKernelEx" not in cu.calls


TMA = KernelABI(
    entry="tma",
    args=(ArgSpec("X", "f16", ("R", "W")),),
    params=(TensorMapParam("tx", "X", (64, 32), 128), DimParam("r", "R")),
    grid=(("div", "R", 32), 1, 1),
    block=128,
    smem_bytes=1024,
)


def test_tensor_maps_are_encoded_once_per_address_and_shape(cu):
    seen = []
    cu.kernels["tma"] = lambda params: seen.append((param(params, 0, 128), u32(params, 1)))
    k = load(cubin=b"\x7fELF", abi=TMA)
    x = np.zeros((64, 64), np.float16)
    k(x)
    k(x)  # the staging buffer may or may not land at the same address
    k(np.zeros((96, 64), np.float16))
    (first, r1), (_, r2), (third, r3) = seen
    assert (r1, r2, r3) == (64, 64, 96)
    opaque = np.frombuffer(first, np.uint64)
    assert list(opaque[1:5]) == [64, 64, 64, 32]  # dims then box, innermost first
    assert list(np.frombuffer(third, np.uint64)[1:3]) == [64, 96]
    dtype, rank, _, dims, strides, box, estrides, inter, swz, l2, oob = cu.encoded[0]
    assert (dtype, rank, dims, strides, box, estrides) == (6, 2, [64, 64], [128], [64, 32], [1, 1])
    assert (inter, swz, l2, oob) == (0, 3, 3, 0)
    assert len({(e[2], tuple(e[3])) for e in cu.encoded}) == len(cu.encoded)  # no repeats
    assert len(k._tensor_maps) == len(cu.encoded)


def test_jit_failure_carries_ptxas_log(cu):
    with pytest.raises(CudaError) as e:
        load(ptx="bogus", abi=SCALE)
    assert e.value.call == "cuModuleLoadDataEx" and e.value.name == "CUDA_ERROR_INVALID_PTX"
    assert "Unknown symbol 'bogus'" in e.value.log and "Unknown symbol" in str(e.value)


def test_missing_entry_is_named(cu):
    with pytest.raises(CudaError, match="no kernel named 'scale'"):
        load(ptx="ptx", abi=SCALE)


def test_shared_memory_over_the_opt_in_limit(cu):
    cu.kernels["scale"] = scale_kernel(cu)
    cu.func_attrs["CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES"] = 2048
    big = KernelABI(**{**SCALE.__dict__, "smem_bytes": 231 * 1024})
    with pytest.raises(TkError) as e:
        load(ptx="ptx", abi=big)
    assert e.value.message == (
        "kernel scale needs 236544 bytes of dynamic shared memory (+ 2048 static), "
        "but Fake H200 allows at most 232448 bytes per block"
    )


def test_too_many_threads_after_register_allocation(cu):
    cu.kernels["scale"] = scale_kernel(cu)
    cu.func_attrs["CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK"] = 64
    with pytest.raises(TkError, match="128 threads per block, but with 32 registers"):
        load(ptx="ptx", abi=SCALE)


def test_not_hopper(monkeypatch):
    fake = FakeDriver(cc=(8, 0))
    monkeypatch.setattr(device_mod, "driver", lambda: fake)
    device_mod.device.cache_clear()
    try:
        with pytest.raises(DeviceError, match=r"compute capability 9.0 GPU .* device 0 \(Fake H200\) is 8.0"):
            device_mod.device()
    finally:
        device_mod.device.cache_clear()


def test_run_on_gpu_returns_the_stored_outputs(cu):
    """`tkc run`'s GPU path over the real GEMM ABI, the kernel replaced by numpy."""
    from pathlib import Path

    import ml_dtypes

    import tkc
    from tkc.runner import run_on_gpu

    example = Path(__file__).parents[2] / "examples" / "gemm.tk"
    try:
        abi = tkc.compile(example, kernel="gemm").abi
    except Exception as e:  # the compiler's own tests own its failures
        pytest.skip(f"the compiler does not produce gemm's ABI yet: {e}")
    sizes = {"M": 256, "N": 512, "K": 128}
    shapes = {a.name: tuple(sizes[d] for d in a.dims) for a in abi.args}

    def gemm(params: int) -> None:
        # Each tensor map's fake opaque starts with the global address (see cuTensorMapEncodeTiled).
        where = {}
        for i, p in enumerate(abi.params):
            if isinstance(p, TensorMapParam):
                where[p.arg] = int(np.frombuffer(param(params, i, 128), np.uint64)[0])
            elif isinstance(p, PointerParam):
                where[p.arg] = u64(params, i)

        def view(name):
            n = int(np.prod(shapes[name]))
            raw = np.ctypeslib.as_array((ctypes.c_uint16 * n).from_address(where[name]))
            return raw.view(ml_dtypes.bfloat16).reshape(shapes[name])

        view("C")[...] = (view("A").astype(np.float32) @ view("B").astype(np.float32)).astype(ml_dtypes.bfloat16)

    cu.kernels["gemm"] = gemm
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shapes["A"], np.float32)
    b = rng.standard_normal(shapes["B"], np.float32)
    out = run_on_gpu(str(example), "gemm", {"A": a, "B": b, "C": np.full(shapes["C"], np.nan, np.float32)}, {})
    assert list(out) == ["C"] and out["C"].dtype == ml_dtypes.bfloat16
    ref = a.astype(ml_dtypes.bfloat16).astype(np.float32) @ b.astype(ml_dtypes.bfloat16).astype(np.float32)
    assert np.allclose(out["C"].astype(np.float32), ref, rtol=1e-2, atol=1e-1)


def test_a_numpy_view_too_large_to_pack_is_refused_by_name(cu, monkeypatch):
    """A broadcast view (np.broadcast_to) packs into its full size for the copy to the GPU: where
    that does not fit in host memory, the launch says so for the argument, not numpy's traceback."""
    cu.kernels["scale"] = scale_kernel(cu)
    k = load(ptx=".version 8.0\n", abi=SCALE)
    x = np.broadcast_to(np.zeros((1, 4), np.float32), (3, 4))

    def no_memory(array: object) -> np.ndarray:
        raise MemoryError

    monkeypatch.setattr(launch_mod.np, "ascontiguousarray", no_memory)
    with pytest.raises(TkError, match="argument X: its packed copy for the GPU needs 48 bytes of host memory"):
        k(x, np.zeros((3, 4), np.float32))
    assert cu.memory == {}
