"""Runtime checks without a GPU: argument validation, dim binding, grid, tensor maps, params.

The arrays are fakes exposing `__cuda_array_interface__` (or posing as torch tensors), so none
of this touches the driver: every check must happen before the first driver call.
"""

from __future__ import annotations

import ctypes
import dataclasses
import subprocess
import sys
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

from tkc.abi import ArgSpec, DimParam, KernelABI, PointerParam, TensorMapParam
from tkc.diagnostics import TkError
from tkc.runtime import load, plan_launch
from tkc.runtime.arrays import adapt, row_major
from tkc.runtime.launch import PackedParams, ParamSlot, bind, slot_bytes, stream_handle
from tkc.runtime.tensormap import spec_for

BASE = 0x7F00_0000_0000


class FakeCuda:
    """A device array as CuPy or Numba would describe it."""

    def __init__(self, shape, typestr="<f2", ptr=BASE, strides=None, readonly=False):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": typestr,
            "data": (ptr, readonly),
            "strides": strides,
            "version": 3,
        }


class FakeTorchDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


def fake_torch(shape, dtype="bfloat16", device="cuda", index=0, itemsize=2, ptr=BASE, strides=None):
    """An object the runtime takes for a torch.Tensor (recognised by its type's module);
    `strides` in elements, as torch gives them (default: contiguous)."""
    cls = type("Tensor", (), {"__module__": "torch"})
    t = cls()
    t.shape = tuple(shape)
    t.dtype = FakeTorchDtype(dtype)
    t.device = SimpleNamespace(type=device, index=index if device == "cuda" else None)
    t.element_size = lambda: itemsize
    t.stride = lambda: strides or tuple(s // itemsize for s in row_major(tuple(shape), itemsize))
    t.data_ptr = lambda: ptr
    return t


GEMM = KernelABI(
    entry="gemm",
    args=(
        ArgSpec("A", "f16", ("M", "K")),
        ArgSpec("B", "f16", ("K", "N")),
        ArgSpec("C", "f32", ("M", "N")),
    ),
    params=(
        TensorMapParam("tma_A", "A", (64, 128), 128),
        TensorMapParam("tma_B", "B", (64, 64), 128),
        PointerParam("C_ptr", "C"),
        DimParam("K_dim", "K"),
        DimParam("N_dim", "N"),
    ),
    grid=(("div", "N", 256), ("div", "M", 128), 1),
    block=384,
    smem_bytes=160 * 1024,
    divisibility=(("M", 128), ("N", 256), ("K", 64)),
)

# No divisibility and a pointer only: lets the layout checks be reached with odd shapes.
COPY = KernelABI(
    entry="copy",
    args=(ArgSpec("X", "f16", ("R", "W")),),
    params=(PointerParam("x", "X"), DimParam("w", "W")),
    grid=("R", 1, 1),
    block=128,
    smem_bytes=0,
)


# X reached through a tensor map: TMA's row rule applies to it.
MAPPED = KernelABI(
    entry="copy",
    args=(ArgSpec("X", "f16", ("R", "W")),),
    params=(TensorMapParam("tx", "X", (8, 64), 0), DimParam("w", "W")),
    grid=("R", 1, 1),
    block=128,
    smem_bytes=0,
)


def mapped(dtype, dims):
    return KernelABI("k", (ArgSpec("X", dtype, dims),), (TensorMapParam("tx", "X", (16, *[1] * (len(dims) - 1)), 0),),
                     ("R", 1, 1), 128, 0)


def gemm_args(M=256, N=512, K=128):
    return (
        FakeCuda((M, K), ptr=BASE),
        FakeCuda((K, N), ptr=BASE + 0x100000),
        FakeCuda((M, N), "<f4", ptr=BASE + 0x200000),
    )


def error(abi, *args, **named) -> str:
    with pytest.raises(TkError) as e:
        plan_launch(abi, args, named, num_sms=132)
    return e.value.message


# ---- a launch that fits ----


def test_plan_binds_dims_grid_and_params():
    A, B, C = gemm_args(M=256, N=512, K=128)
    cfg = plan_launch(GEMM, (A, B, C), {}, num_sms=132)
    assert cfg.dims == {"M": 256, "K": 128, "N": 512}
    assert cfg.grid == (2, 2, 1)
    assert cfg.block == (384, 1, 1)
    assert cfg.smem_bytes == 160 * 1024
    assert [(p.name, p.kind, p.nbytes) for p in cfg.params] == [
        ("tma_A", "tensormap", 128),
        ("tma_B", "tensormap", 128),
        ("C_ptr", "pointer", 8),
        ("K_dim", "dim", 4),
        ("N_dim", "dim", 4),
    ]
    ta, tb, pc, dk, dn = (p.value for p in cfg.params)
    assert pc == BASE + 0x200000 and dk == 128 and dn == 512
    assert ta.address == BASE and tb.address == BASE + 0x100000
    # innermost first: A is [M=256][K=128] f16
    assert ta.global_dims == (128, 256) and ta.global_strides == (256,)
    assert ta.box == (64, 128) and ta.element_strides == (1, 1)
    assert (ta.data_type, ta.swizzle, ta.interleave, ta.l2_promotion, ta.oob_fill) == (6, 3, 0, 3, 0)


def test_named_and_positional_arguments_mix():
    A, B, C = gemm_args()
    cfg = plan_launch(GEMM, (A,), {"C": C, "B": B}, num_sms=132)
    assert cfg.params[2].value == BASE + 0x200000


def test_num_sms_in_grid():
    abi = KernelABI(
        entry="p",
        args=COPY.args,
        params=COPY.params,
        grid=(("min", "num_sms", ("ceildiv", "R", 4)), 1, 1),
        block=128,
        smem_bytes=0,
    )
    assert plan_launch(abi, (FakeCuda((1000, 64)),), {}, num_sms=132).grid == (132, 1, 1)
    assert plan_launch(abi, (FakeCuda((40, 64)),), {}, num_sms=132).grid == (10, 1, 1)


def test_fixed_dims_accepted_and_checked():
    abi = KernelABI("f", (ArgSpec("X", "f32", ("R", 128)),), (PointerParam("x", "X"),), ("R", 1, 1), 128, 0)
    assert plan_launch(abi, (FakeCuda((4, 128), "<f4"),), {}, 132).dims == {"R": 4}
    assert error(abi, FakeCuda((4, 64), "<f4")) == "argument X: dim 1 must be 128, got 64"


# ---- argument count and names ----


def test_too_many_arguments():
    msg = error(GEMM, *gemm_args(), FakeCuda((1, 1)))
    assert "gemm(A, B, C) takes 3 arguments, 4 were given" in msg


def test_missing_argument():
    A, B, _ = gemm_args()
    assert "missing argument C" in error(GEMM, A, B)


def test_unknown_named_argument():
    msg = error(GEMM, *gemm_args(), D=FakeCuda((1, 1)))
    assert "unknown argument 'D'" in msg and "gemm(A, B, C)" in msg


def test_argument_given_twice():
    A, B, C = gemm_args()
    assert "argument A is given twice" in error(GEMM, A, B, C, A=A)


def test_not_an_array():
    A, B, _ = gemm_args()
    assert error(GEMM, A, B, [1, 2, 3]).startswith("argument C: a list is not an array")


# ---- dtype, rank, dims ----


def test_wrong_dtype_names_argument():
    A, B, _ = gemm_args()
    msg = error(GEMM, A, B, FakeCuda((256, 512), "<f2"))
    assert msg == "argument C: expected dtype f32, got <f2"


def test_bf16_through_cuda_array_interface_gets_a_hint():
    abi = KernelABI("b", (ArgSpec("X", "bf16", ("R", "W")),), (PointerParam("x", "X"),), ("R", 1, 1), 32, 0)
    assert "cannot express it" in error(abi, FakeCuda((8, 64), "<V2"))


def test_wrong_rank():
    A, B, _ = gemm_args()
    msg = error(GEMM, A, B, FakeCuda((256, 512, 1), "<f4"))
    assert msg == "argument C: expected rank 2 [M, N], got shape [256, 512, 1]"


def test_inconsistent_symbolic_dim():
    A = FakeCuda((256, 128))
    B = FakeCuda((192, 512))
    msg = error(GEMM, A, B, FakeCuda((256, 512), "<f4"))
    assert msg == "argument B: dim K is 192 here (dim 0) but 128 in A (dim 1)"


def test_divisibility():
    msg = error(GEMM, *gemm_args(M=1000))
    assert msg.startswith("M = 1000 (from A (dim 0)) is not a multiple of 128: the kernel counts whole tiles of M") and "ceildiv(M, 128)" in msg


def test_a_dim_tile_mask_tails_needs_whole_says_why():
    why = "the store of C at line 9 must not write padding, and the rows of its value need not end where C does"
    abi = KernelABI(**{**GEMM.__dict__, "divisibility": (("M", 128),), "whole_tiles": (("M", 64, why),)})
    msg = error(abi, *gemm_args(M=1000))
    assert msg.startswith(f"M = 1000 (from A (dim 0)) is not a multiple of 64: {why} (the GPU kernel works on whole")
    assert KernelABI.from_json(abi.to_json()) == abi


def test_empty_dim():
    assert "argument X: dim 0 is empty" in error(COPY, FakeCuda((0, 64)))


def test_dim_must_fit_s32():
    assert "does not fit in 31 bits" in error(COPY, FakeCuda((1 << 31, 64)))


def test_addressed_tensor_must_have_fewer_than_2_31_elements():
    # element offsets of pointer accesses are 32-bit signed; a tensor map addresses each dim
    assert error(COPY, FakeCuda((1 << 25, 64))) == (
        "argument X has 2147483648 elements: the kernel addresses it element by element (vectors, scalars "
        "or table entries), with 32-bit signed offsets, so it takes fewer than 2^31")
    assert "elements" not in error(MAPPED, FakeCuda((1 << 25, 12)))


# ---- layout ----


def test_misaligned_base():
    msg = error(COPY, FakeCuda((4, 64), ptr=BASE + 8))
    assert msg.startswith("argument X: address 0x7f0000000008 is not 16-byte aligned")


def test_stride_not_multiple_of_16():
    assert error(MAPPED, FakeCuda((4, 12))) == (
        "argument X: dim W = 12 (its innermost) times 2 bytes is not a multiple of 16: "
        "TMA needs 16-byte aligned rows, so W must be a multiple of 8"
    )


@pytest.mark.parametrize(
    "dtype, typestr, width, multiple",
    [("f32", "<f4", 6, 4), ("f16", "<f2", 4, 8)],
)
def test_row_message_names_the_multiple_for_the_element_size(dtype, typestr, width, multiple):
    msg = error(mapped(dtype, ("R", "W")), FakeCuda((3, width), typestr))
    assert msg.endswith(f"so W must be a multiple of {multiple}"), msg


def test_row_message_for_a_fixed_innermost_dim_names_its_axis():
    assert error(mapped("f16", ("B", "R", 12)), FakeCuda((2, 3, 12))) == (
        "argument X: dim 2 = 12 (its innermost) times 2 bytes is not a multiple of 16: "
        "TMA needs 16-byte aligned rows, so dim 2 must be a multiple of 8"
    )


def test_gemm_with_a_k_tma_cannot_address_names_a_and_k():
    """The compiled GEMM at K = 4001 (bf16 rows of 8002 bytes) is refused before any launch."""
    from pathlib import Path

    import tkc

    abi = tkc.compile(Path(__file__).parents[2] / "examples" / "gemm.tk", kernel="gemm").abi
    m, n, k = 1000, 1000, 4001
    args = [fake_torch(shape, ptr=BASE + (i << 26)) for i, shape in enumerate([(m, k), (k, n), (m, n)])]
    assert error(abi, *args) == (
        "argument A: dim K = 4001 (its innermost) times 2 bytes is not a multiple of 16: "
        "TMA needs 16-byte aligned rows, so K must be a multiple of 8"
    )


def test_rows_of_any_length_through_a_pointer():
    """The 16-byte row rule is TMA's: a vector stored through the argument's address (an attention
    LSE of N = 17 f32, 68-byte rows) needs none."""
    cfg = plan_launch(COPY, (FakeCuda((4, 17)),), {}, 132)
    assert cfg.dims == {"R": 4, "W": 17}


def test_numpy_rows_tma_cannot_address_are_refused_before_staging():
    """The packed copy a numpy argument is staged through has the same rows, so it is refused
    as a device array would be, not by the driver's tensor-map encoder."""
    assert error(MAPPED, np.zeros((4, 12), np.float16)).startswith("argument X: dim W = 12 (its innermost)")


def test_not_contiguous():
    transposed = FakeCuda((64, 32), strides=(2, 128))
    assert error(COPY, transposed) == (
        "argument X is not contiguous row-major: strides [2, 128] bytes, expected [64, 2] for shape [64, 32]; "
        "the kernel reads or writes it element by element through its address, which only a contiguous "
        "tensor gives (use .contiguous())"
    )


def test_padded_rows_are_not_contiguous():
    assert "not contiguous" in error(COPY, FakeCuda((4, 64), strides=(256, 2)))


def test_extent_one_dims_may_have_any_stride():
    assert plan_launch(COPY, (FakeCuda((1, 64), strides=(12345, 2)),), {}, 132).grid == (1, 1, 1)


# ---- devices ----


def test_cpu_torch_tensor_is_refused():
    t = fake_torch((4, 64), dtype="float16", device="cpu")
    assert error(COPY, t).startswith("argument X is on torch device 'cpu'; move it to the GPU")
    meta = fake_torch((4, 64), dtype="float16", device="meta")
    assert error(COPY, meta).startswith("argument X is on torch device 'meta'")


def test_tensor_on_another_gpu_is_refused():
    t = fake_torch((4, 64), dtype="float16", index=1)
    assert error(COPY, t) == "argument X is on cuda:1; tkc launches on cuda:0"


def test_sparse_torch_tensor_is_refused():
    """A sparse tensor's stride() raises in torch: refused by name before anything reads it."""
    t = fake_torch((4, 64), dtype="float16")
    t.layout = "torch.sparse_coo"
    t.stride = lambda: (_ for _ in ()).throw(RuntimeError("Sparse CPU tensors do not have strides"))
    assert error(COPY, t) == (
        "argument X: a torch tensor of layout sparse_coo has no dense rows a kernel can address; "
        "pass a dense tensor (.to_dense())")


GROUPED = KernelABI(
    entry="grouped",
    args=(ArgSpec("Q", "f16", ("H", "W")), ArgSpec("K", "f16", ("HKV", "W"))),
    params=(PointerParam("q", "Q"), PointerParam("k", "K")),
    grid=("H", 1, 1),
    block=128,
    smem_bytes=0,
    requires=((("eq", "H", ("mul", "HKV", 4)), "H == HKV * G (line 3)"), (("gt", ("div", "W", ("sub", "H", "H")), 0), "W / (H - H) > 0")),
)


def test_a_launch_that_breaks_a_requirement_is_refused_naming_it_and_the_dims():
    q, k = FakeCuda((8, 64)), FakeCuda((4, 64), ptr=BASE + 4096)
    assert error(GROUPED, q, k) == (
        "kernel grouped requires H == HKV * G (line 3), and the arguments give H = 8 (from Q (dim 0)), "
        "HKV = 4 (from K (dim 0))")


def test_a_requirement_that_divides_by_zero_is_broken():
    q, k = FakeCuda((8, 64)), FakeCuda((2, 64), ptr=BASE + 4096)
    assert error(GROUPED, q, k).startswith("kernel grouped requires W / (H - H) > 0, and the arguments give W = 64")


def test_torch_tensor_accepted():
    t = fake_torch((4, 64), dtype="float16")
    cfg = plan_launch(COPY, (t,), {}, 132)
    assert cfg.params[0].value == BASE and cfg.dims == {"R": 4, "W": 64}


def test_torch_dtype_checked():
    assert error(COPY, fake_torch((4, 64), dtype="bfloat16")) == (
        "argument X: expected dtype f16, got bfloat16"
    )


WRITES_X = dataclasses.replace(COPY, written=("X",))


def test_read_only_arrays_the_kernel_writes_are_refused():
    # numpy's copy-back skipped a read-only array silently; a device array marked read-only
    frozen = np.zeros((4, 64), np.float16)
    frozen.flags.writeable = False
    assert error(WRITES_X, frozen) == "argument X: the kernel writes it, but the numpy array is read-only"
    assert error(WRITES_X, FakeCuda((4, 64), readonly=True)) == (
        "argument X: the kernel writes it, but the cuda_array_interface array is read-only")
    plan_launch(COPY, (FakeCuda((4, 64), readonly=True),), {}, num_sms=132)  # read only: fine


def test_numpy_arrays_in_the_other_byte_order_are_refused():
    # their bytes went to the device as they were: every value wrong
    swapped = np.zeros((4, 64), np.dtype(">f2"))
    assert error(COPY, swapped) == "argument X: expected dtype f16, got float16 in non-native byte order (>f2)"


def test_numpy_is_staged_later():
    host = np.zeros((4, 12), np.float16)  # odd strides are fine: it gets a fresh packed copy
    cfg = plan_launch(COPY, (host,), {}, 132)
    assert cfg.params[0].value is None and cfg.params[1].value == 12


def test_numpy_bf16_through_ml_dtypes_and_tensor_map_address_pending():
    abi = KernelABI(
        "t", (ArgSpec("X", "bf16", ("R", "W")),), (TensorMapParam("tx", "X", (64, 64), 128),),
        ("R", 1, 1), 128, 0,
    )
    cfg = plan_launch(abi, (np.zeros((64, 64), ml_dtypes.bfloat16),), {}, 132)
    assert cfg.params[0].value.address is None and cfg.params[0].value.data_type == 9


def test_numpy_wrong_dtype():
    assert error(COPY, np.zeros((4, 64), np.float64)) == "argument X: expected dtype f16, got float64"


class DLPackOnly:
    """An array reachable only through DLPack (as a JAX array would be)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kw):
        return self.array.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_capsule_is_read():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)[:, 1:5]
    info = adapt(DLPackOnly(a))
    assert info.dtype == "f32" and info.shape == (4, 4) and info.strides == (24, 4)
    assert info.ptr == a.ctypes.data and info.location == "cpu"


def test_dlpack_host_array_is_refused():
    assert "argument X is in host memory (dlpack)" in error(COPY, DLPackOnly(np.zeros((4, 64), np.float16)))


# ---- grid ----


def test_grid_extent_zero():
    abi = KernelABI("g", COPY.args, COPY.params, (("div", "R", 256), 1, 1), 128, 0)
    msg = error(abi, FakeCuda((128, 64)))
    assert msg == "grid x = ('div', 'R', 256) is 0 with R = 128, W = 64; it must be in 1..2147483647"


def test_grid_y_limit():
    abi = KernelABI("g", COPY.args, COPY.params, (1, "R", 1), 128, 0)
    assert "it must be in 1..65535" in error(abi, FakeCuda((70000, 64)))


# ---- tensor map parameters ----


def test_tensor_map_spec_dtypes_and_swizzles():
    p = TensorMapParam("t", "X", (128, 64, 1), 128)
    s = spec_for(p, "fp8e4m3", (3, 256, 512), BASE)
    assert s.data_type == 0  # fp8 travels as UINT8
    assert s.global_dims == (512, 256, 3) and s.global_strides == (512, 512 * 256)
    for span, enum in [(0, 0), (32, 1), (64, 2), (128, 3)]:
        q = TensorMapParam("t", "X", (16, 8), span)
        assert spec_for(q, "bf16", (64, 64), BASE).swizzle == enum
    assert spec_for(TensorMapParam("t", "X", (32, 8), 128), "f32", (8, 32), BASE).data_type == 7


@pytest.mark.parametrize(
    "box, swizzle, why",
    [
        ((128, 64), 128, "exceeds the 128B swizzle span"),
        ((4, 64), 0, "not 16-aligned"),
        ((64, 512), 128, "outside 1..256"),
        ((64,), 128, "has not rank 2"),
        ((64, 64), 16, "not 0/32/64/128"),
    ],
)
def test_tensor_map_box_rules(box, swizzle, why):
    with pytest.raises(ValueError, match=why):
        spec_for(TensorMapParam("t", "X", box, swizzle), "bf16", (256, 256), BASE)


# ---- parameter packing and streams ----


def test_packed_params_are_a_void_pointer_array():
    tmap = bytes(range(128))
    slots = [
        ParamSlot("t", "tensormap", 128, None),
        ParamSlot("p", "pointer", 8, 0x1122334455667788),
        ParamSlot("n", "dim", 4, 4096),
    ]
    values = [slot_bytes(slots[0], tmap), slot_bytes(slots[1]), slot_bytes(slots[2])]
    packed = PackedParams(values)
    ptrs = (ctypes.c_uint64 * 3).from_address(packed.address)
    assert ctypes.string_at(ptrs[0], 128) == tmap
    assert ctypes.c_uint64.from_address(ptrs[1]).value == 0x1122334455667788
    assert ctypes.c_uint32.from_address(ptrs[2]).value == 4096


def test_stream_forms():
    binding = bind(COPY, (FakeCuda((4, 64)),), {})
    assert stream_handle(None, binding) == 0  # the legacy default stream
    assert stream_handle(0xABC, binding) == 0xABC
    assert stream_handle(SimpleNamespace(cuda_stream=7), binding) == 7  # torch.cuda.Stream
    assert stream_handle(SimpleNamespace(ptr=9), binding) == 9  # cupy.cuda.Stream
    proto = SimpleNamespace(__cuda_stream__=lambda: (0, 11))
    assert stream_handle(proto, binding) == 11


# ---- no GPU needed to import or to be told what is wrong ----


def test_load_needs_exactly_one_image():
    with pytest.raises(ValueError, match="exactly one"):
        load(abi=COPY)
    with pytest.raises(ValueError, match="exactly one"):
        load("x", b"y", abi=COPY)


def test_import_does_not_touch_cuda():
    code = (
        "import sys, tkc.runtime as r\n"
        "from tkc.runtime.launch import plan_launch\n"
        "assert not any(m.startswith('cuda') for m in sys.modules), sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_bad_arguments_stop_before_any_driver_call():
    from tkc.runtime import Kernel

    calls = []
    dev = SimpleNamespace(num_sms=132, activate=lambda: calls.append("activate"))
    k = Kernel(GEMM, dev, module=None, function=None)
    A, B, _ = gemm_args()
    with pytest.raises(TkError, match="argument C: expected dtype f32"):
        k(A, B, FakeCuda((256, 512), "<f2"))
    with pytest.raises(TkError, match="not a multiple of 128"):
        k(*gemm_args(M=1000))
    assert calls == []
    assert k.launch_config(*gemm_args()).grid == (2, 2, 1)


def test_no_driver_is_a_device_error():
    from tkc.runtime import DeviceError
    from tkc.runtime.device import device

    try:
        device()
    except DeviceError as e:
        assert "driver" in str(e) or "device" in str(e)
    else:
        pytest.skip("a CUDA device is present")


def test_gpu_test_kernels_assemble(tmp_path):
    """The PTX of tests/gpu/test_runtime_gpu.py is valid sm_90a (ptxas only, no GPU)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "gpu" / "test_runtime_gpu.py"
    spec = importlib.util.spec_from_file_location("runtime_gpu_cases", path)
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    ptxas = cases.find_ptxas()
    if ptxas is None:
        pytest.skip("no ptxas")
    src = tmp_path / "k.ptx"
    src.write_text(cases.PTX)
    r = subprocess.run(
        [ptxas, "-arch=sm_90a", str(src), "-o", str(tmp_path / "k.cubin")],
        capture_output=True, text=True,
    )
    assert r.returncode == 0, r.stderr


def test_run_on_gpu_converts_inputs_to_argument_dtypes():
    from tkc.runtime.run import launch_arrays

    abi = KernelABI(
        "k",
        (ArgSpec("A", "bf16", ("M",)), ArgSpec("S", "f32", ("M",)), ArgSpec("Q", "fp8e4m3", ("M",))),
        (), (1, 1, 1), 32, 0,
    )
    a, s, q = launch_arrays(abi, {"Q": np.ones(16, np.float32), "S": np.full(16, np.nan, np.float32),
                                  "A": np.arange(16, dtype=np.float32)})
    assert a.dtype == ml_dtypes.bfloat16 and s.dtype == np.float32 and q.dtype == ml_dtypes.float8_e4m3fn
    assert np.array_equal(a.astype(np.float32), np.arange(16)) and np.isnan(s).all()
    with pytest.raises(TkError, match="no input array for argument S"):
        launch_arrays(abi, {"A": np.zeros(16), "Q": np.zeros(16)})


def test_the_outputs_are_the_arguments_the_abi_says_are_written():
    from tkc.runtime.run import written

    abi = KernelABI("k", (ArgSpec("A", "f32", (16,)), ArgSpec("O", "f32", (16,)), ArgSpec("L", "f32", (16,))),
                    (), (1, 1, 1), 32, 0, written=("O", "L"))
    a, o, l = (np.full(16, float(i), np.float32) for i in range(3))
    outputs = written(abi, [a, o, l])
    assert list(outputs) == ["O", "L"] and outputs["O"] is o and outputs["L"] is l


@pytest.mark.parametrize(
    "example, kernel, sizes",
    [
        ("gemm.tk", "gemm", {"M": 256, "N": 512, "K": 128}),
        ("attention.tk", None, {"B": 2, "H": 3, "HKV": 3, "N": 256}),
        ("gemm.tk", "gemm", {"M": 1, "N": 264, "K": 24}),  # tails: ceildiv tile counts take any M
        ("attention.tk", None, {"B": 2, "H": 3, "HKV": 3, "N": 17}),  # LSE rows of 68 bytes: a pointer's
    ],
)
def test_compiler_abi_is_launchable(example, kernel, sizes):
    """The ABI the compiler emits for the examples plans a launch (fake torch tensors)."""
    from pathlib import Path

    import tkc

    path = Path(__file__).parents[2] / "examples" / example
    try:
        abi = tkc.compile(path, kernel=kernel).abi
    except Exception as e:  # the compiler's own tests own its failures
        pytest.skip(f"the compiler does not produce an ABI for {example} yet: {e}")
    names = {"bf16": "bfloat16", "f16": "float16", "f32": "float32", "fp8e4m3": "float8_e4m3fn"}
    args = []
    for i, a in enumerate(abi.args):
        shape = tuple(d if isinstance(d, int) else sizes[d] for d in a.dims)
        es = {"bf16": 2, "f16": 2, "f32": 4, "fp8e4m3": 1}[a.dtype]
        args.append(fake_torch(shape, names[a.dtype], itemsize=es, ptr=BASE + (i << 24)))
    cfg = plan_launch(abi, tuple(args), {}, num_sms=132)
    assert all(1 <= g for g in cfg.grid) and cfg.block[0] == abi.block
    assert [p.name for p in cfg.params] == [p.name for p in abi.params]


def test_vector_tensor_map_is_one_row_of_a_2d_map() -> None:
    """A rank-1 argument is mapped as dims [n, 1] with a 16-byte-aligned row stride (tkc/abi.py)."""
    from tkc.abi import TensorMapParam
    from tkc.runtime.tensormap import spec_for

    spec = spec_for(TensorMapParam("tmap_W_0", "W", (128, 1), 0), "bf16", (1000,), 0)
    assert (spec.rank, spec.global_dims, spec.box) == (2, (1000, 1), (128, 1))
    assert spec.global_strides == (2000,)


# ---- aliasing ----

WRITES_C = KernelABI(
    entry="gemm", args=GEMM.args, params=GEMM.params, grid=GEMM.grid, block=GEMM.block,
    smem_bytes=GEMM.smem_bytes, divisibility=GEMM.divisibility, written=("C",),
)


def test_written_argument_overlapping_another_is_refused():
    A, B, _ = gemm_args()
    # C (256 x 512 f32) starts inside A's bytes
    C = FakeCuda((256, 512), "<f4", ptr=BASE + 0x1000)
    msg = error(WRITES_C, A, B, C)
    assert msg.startswith("arguments C and A overlap in memory, and the kernel writes C: pass distinct tensors")


def test_written_numpy_arguments_overlapping_another_are_refused():
    """numpy arguments are staged in a buffer each and copied back one after another, so
    overlapping ones would come back in whichever order the copies ran: refused as device ones."""
    raw = np.zeros(256 * 512 * 4, np.uint8)
    a = raw[: 256 * 128 * 2].view(np.float16).reshape(256, 128)
    b = np.zeros((128, 512), np.float16)
    c = raw.view(np.float32).reshape(256, 512)  # the bytes of a and more
    assert error(WRITES_C, a, b, c).startswith("arguments C and A overlap in memory, and the kernel writes C")
    plan_launch(WRITES_C, (a, b, np.zeros((256, 512), np.float32)), {}, num_sms=132)


def test_read_only_arguments_may_share_memory():
    A, _, C = gemm_args(M=128, N=256, K=256)
    a_twice = FakeCuda((256, 256), ptr=BASE)  # the same bytes as A, read as B
    plan_launch(WRITES_C, (A, a_twice, C), {}, num_sms=132)


# ---- strided views of arguments reached only through tensor maps ----

# attn_fwd's arguments as examples/attention.tk declares them: Q, K, V, O through tensor maps,
# LSE (stored a vector at a time with st.global) through its address.
ATTENTION = KernelABI(
    entry="attn_fwd",
    args=tuple(ArgSpec(n, "bf16", ("B", "H", "N", 64)) for n in "QKVO") + (ArgSpec("LSE", "f32", ("B", "H", "N")),),
    params=tuple(TensorMapParam(f"tmap_{n}", n, (64, 128, 1, 1), 128) for n in "QKVO")
    + (PointerParam("ptr_LSE", "LSE"), DimParam("dim_N", "N")),
    grid=(("ceildiv", "N", 128), "H", "B"),
    block=384,
    smem_bytes=0,
    written=("O", "LSE"),
)


def bnhd_as_bhnd(b, n, h, d, ptr):
    """`x.transpose(1, 2)` of a contiguous bf16 [B, N, H, D] tensor at `ptr`: shape [B, H, N, D]."""
    return fake_torch((b, h, n, d), ptr=ptr, strides=(n * h * d, d, h * d, 1))


def attention_args(b=2, n=1000, h=3, d=64):
    views = [bnhd_as_bhnd(b, n, h, d, BASE + (i << 28)) for i in range(4)]
    return (*views, fake_torch((b, h, n), "float32", itemsize=4, ptr=BASE + (4 << 28)))


def test_transposed_views_are_mapped_with_their_own_strides():
    """FlashAttention's [B, N, H, D] layout given as a [B, H, N, D] view: each tensor map steps
    over H by D elements and over N by H·D, as the view does; no copy is made."""
    cfg = plan_launch(ATTENTION, attention_args(b=2, n=1000, h=3, d=64), {}, num_sms=132)
    q = cfg.params[0].value
    assert q.global_dims == (64, 1000, 3, 2)
    assert q.global_strides == (3 * 64 * 2, 64 * 2, 1000 * 3 * 64 * 2)  # N, H, B in bytes
    assert q.address == BASE


def test_column_slice_is_mapped_with_the_rows_of_its_base():
    """`big[:, :K]` of a [M, 4096] bf16 tensor: K columns, rows 8192 bytes apart."""
    big_rows = 4096 * 2
    slices = [fake_torch((256, 1000), ptr=BASE, strides=(4096, 1)),
              fake_torch((1000, 512), ptr=BASE + (1 << 28), strides=(4096, 1))]
    c = fake_torch((256, 512), "float32", itemsize=4, ptr=BASE + (2 << 28))
    abi = KernelABI(GEMM.entry, (ArgSpec("A", "bf16", ("M", "K")), ArgSpec("B", "bf16", ("K", "N")), GEMM.args[2]),
                    GEMM.params, GEMM.grid, GEMM.block, GEMM.smem_bytes)
    cfg = plan_launch(abi, (*slices, c), {}, num_sms=132)
    a, b = cfg.params[0].value, cfg.params[1].value
    assert a.global_dims == (1000, 256) and a.global_strides == (big_rows,)
    assert b.global_dims == (512, 1000) and b.global_strides == (big_rows,)


def test_padded_rows_are_mapped():
    """An f32 [B, H, N] view of a [B, H, 1004] buffer (rows padded to 16 bytes), N = 1001 not a
    multiple of 4: refused contiguous (rows of 4004 bytes), mapped as a view of the padded rows."""
    abi = mapped("f32", ("R", "H", "N"))
    padded = fake_torch((2, 3, 1001), "float32", itemsize=4, strides=(3 * 1004, 1004, 1))
    cfg = plan_launch(abi, (padded,), {}, num_sms=132)
    assert cfg.params[0].value.global_strides == (1004 * 4, 3 * 1004 * 4)
    packed = fake_torch((2, 3, 1001), "float32", itemsize=4)
    assert error(abi, packed).endswith("TMA needs 16-byte aligned rows, so N must be a multiple of 4")


def test_attention_backward_reads_padded_lse_rows():
    """attn_bwd_dq reads LSE and Delta by TMA (its ABI maps them): at N = 17, f32 rows of 68 bytes,
    they are passed as views of rows padded to 20 elements (examples/attention_autograd.py)."""
    from pathlib import Path

    import tkc

    abi = tkc.compile(Path(__file__).parents[2] / "examples" / "attention_bwd.tk", kernel="attn_bwd_dq", D=64).abi
    maps = {p.arg for p in abi.params if isinstance(p, TensorMapParam)}
    assert {"LSE", "Delta"} <= maps and not any(isinstance(p, PointerParam) for p in abi.params)
    b, h, n, d = 1, 2, 17, 64
    tiles = [fake_torch((b, h, n, d), ptr=BASE + (i << 24)) for i in range(4)]
    rows = [fake_torch((b, h, n), "float32", itemsize=4, ptr=BASE + ((4 + i) << 24), strides=(h * 20, 20, 1))
            for i in range(2)]
    out = fake_torch((b, h, n, d), ptr=BASE + (6 << 24))
    cfg = plan_launch(abi, (*tiles, *rows, out), {}, num_sms=132)
    lse_map = next(p.value for p in cfg.params if p.name.startswith("tmap_LSE"))
    assert lse_map.global_dims == (17, 2, 1) and lse_map.global_strides[0] == 80
    packed = fake_torch((b, h, n), "float32", itemsize=4, ptr=BASE + (4 << 24))
    assert error(abi, *tiles, packed, rows[1], out).endswith("so N must be a multiple of 4")


def test_mapped_view_must_have_a_dense_innermost_dim():
    columns = FakeCuda((64, 32), strides=(2, 128))  # a transpose: the innermost dim steps 128 bytes
    assert error(MAPPED, columns) == (
        "argument X: its innermost dim must be dense: its stride is 128 bytes, not the element size 2; "
        "a tensor map reads rows of consecutive elements (use .contiguous())"
    )


def test_mapped_view_strides_must_be_multiples_of_16():
    odd = FakeCuda((4, 64), strides=(136, 2))  # rows 136 bytes apart: a view of padded rows, not 16-aligned
    assert error(MAPPED, odd) == (
        "argument X: dim R (dim 0) has stride 136 bytes, not a non-negative multiple of 16: a tensor map "
        "steps over every dim but the innermost by such a byte stride (use .contiguous())"
    )
    assert "dim 0 has stride 24 bytes" in error(mapped("f16", (4, "W")), FakeCuda((4, 64), strides=(24, 2)))


def test_mapped_view_with_a_negative_stride_is_refused():
    """DLPack may describe a reversed view; a tensor map steps forwards only."""
    reversed_rows = FakeCuda((4, 64), ptr=BASE + 3 * 128, strides=(-128, 2))
    assert "dim R (dim 0) has stride -128 bytes, not a non-negative multiple of 16" in error(MAPPED, reversed_rows)


def test_dims_of_one_element_are_mapped_with_a_16_byte_stride():
    """A dim of extent 1 is never stepped over: any stride is taken, and the map gets a valid one."""
    cfg = plan_launch(mapped("f16", ("A", "R", "W")), (FakeCuda((1, 4, 64), strides=(6, 128, 2)),), {}, 132)
    assert cfg.params[0].value.global_strides == (128, 512)


def test_argument_reached_through_its_address_must_be_contiguous():
    """LSE is stored a vector at a time through its pointer: a view of padded rows is refused."""
    *views, _ = attention_args(b=1, n=1001, h=2)
    lse = fake_torch((1, 2, 1001), "float32", itemsize=4, ptr=BASE + (4 << 28), strides=(2 * 1004, 1004, 1))
    msg = error(ATTENTION, *views, lse)
    assert msg.startswith("argument LSE is not contiguous row-major: strides [8032, 4016, 4] bytes")
    assert "element by element through its address" in msg


def test_numpy_view_is_staged_packed_and_mapped_packed():
    """A numpy argument is copied to a packed buffer: its tensor map has row-major strides."""
    view = np.zeros((4, 128), np.float16)[:, :64]
    cfg = plan_launch(MAPPED, (view,), {}, 132)
    assert cfg.params[0].value.global_strides == (128,)


# Spans: a view covers the bytes from its lowest to its highest element, gaps included.


def test_views_of_disjoint_rows_of_one_buffer_do_not_overlap():
    """Q, K, V, O as the four heads of one [B, N, 4, D] buffer would overlap (interleaved rows);
    as views of four separate buffers they do not, however their strides interleave."""
    cfg = plan_launch(ATTENTION, attention_args(), {}, num_sms=132)
    assert cfg.dims == {"B": 2, "H": 3, "N": 1000}


def test_written_view_overlapping_another_by_its_span_is_refused():
    """O = big[:, :, :, :64] and Q = big[:, :, :, 64:] of one [B, H, N, 128] buffer touch no element in
    common, but their spans interleave: refused (the check is conservative)."""
    q, k, v, o, lse = attention_args(b=1, n=256, h=2)
    strides = (2 * 256 * 128, 256 * 128, 128, 1)
    o = fake_torch((1, 2, 256, 64), ptr=BASE + (8 << 28), strides=strides)
    q = fake_torch((1, 2, 256, 64), ptr=BASE + (8 << 28) + 128, strides=strides)
    assert error(ATTENTION, q, k, v, o, lse).startswith("arguments O and Q overlap in memory, and the kernel writes O")


def test_written_view_reaching_into_another_argument_is_refused():
    """A transposed O spans B·N·H·D elements from its base, though it starts before LSE's bytes."""
    q, k, v, _, _ = attention_args(b=1, n=128, h=2)
    o = bnhd_as_bhnd(1, 128, 2, 64, BASE + (8 << 28))
    lse = fake_torch((1, 2, 128), "float32", itemsize=4, ptr=BASE + (8 << 28) + 2 * 128 * 2 * 64 - 1024)
    assert error(ATTENTION, q, k, v, o, lse).startswith("arguments O and LSE overlap in memory")


def test_written_broadcast_view_is_refused():
    q, k, v, _, lse = attention_args(b=2, n=128, h=3)
    o = fake_torch((2, 3, 128, 64), ptr=BASE + (8 << 28), strides=(0, 128 * 64, 64, 1))  # one batch, expanded
    assert error(ATTENTION, q, k, v, o, lse) == (
        "argument O: dim B (dim 0) has stride 0 over 2 elements (a broadcast view), and the kernel writes O: "
        "its elements would share memory; pass a tensor with memory of its own (.contiguous())"
    )


def test_written_view_whose_rows_overlap_is_refused():
    q, k, v, _, lse = attention_args(b=1, n=128, h=1)
    o = fake_torch((1, 1, 128, 64), ptr=BASE + (8 << 28), strides=(128 * 64, 128 * 64, 32, 1))  # 128-byte rows 64 apart
    assert error(ATTENTION, q, k, v, o, lse).startswith(
        "argument O: dim N (dim 2) has stride 64 bytes, less than the 128 bytes its smaller strides span"
    )


def test_read_broadcast_view_is_taken():
    """A tensor the kernel only reads may repeat its elements: K and V shared by every head."""
    q, _, _, o, lse = attention_args(b=1, n=256, h=4)
    shared = fake_torch((1, 4, 256, 64), ptr=BASE + (9 << 28), strides=(256 * 64, 0, 64, 1))
    cfg = plan_launch(ATTENTION, (q, shared, shared, o, lse), {}, num_sms=132)
    assert cfg.params[1].value.global_strides == (128, 0, 4 * 256 * 128)  # B: one element, its packed stride


def test_compiled_kernels_take_arguments_by_name(monkeypatch):
    """`k(A=a, B=b, C=c)` launches as `k(a, b, c)` (it was a Python TypeError); a name the
    kernel lacks is the runtime's message."""
    from pathlib import Path

    import tkc
    from tkc.api import CompiledKernel

    kernel = tkc.compile(Path(__file__).parents[2] / "examples" / "gemm.tk", kernel="gemm")
    monkeypatch.setattr(CompiledKernel, "_call", lambda self, tensors, stream: tensors)
    assert kernel("a", C="c", B="b") == ("a", "b", "c")
    with pytest.raises(TkError, match=r"unknown argument 'BK': the kernel is gemm\(A, B, C\)"):
        kernel("a", "b", "c", BK=32)
