"""The runtime on a real Hopper GPU: load, launch, tensor maps, streams, every array kind.

Each case runs in its own Python process under a timeout (`python test_runtime_gpu.py CASE`):
a TMA mistake hangs rather than fails, and a fault leaves the CUDA context unusable, so one bad
case must not take the rest of the suite with it. The kernels are hand-written PTX, independent of
the compiler: they test the runtime alone (tests/unit/test_runtime.py assembles them with ptxas).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable

import numpy as np
import pytest

from tkc.abi import ArgSpec, DimParam, KernelABI, PointerParam, TensorMapParam

SKIP = 77  # a case's exit status when what it needs is missing
TIMEOUT_S = 120

# k_index: out[r, c] = r * cols + c, one 32-thread block per 32 columns of a row.
# k_tma_dump: one block per 64-row tile of a [R, width] bf16 tensor: TMA-load the tile into
# shared memory (swizzled as the map says) and copy those raw bytes to the tile's place in out.
PTX = """.version 8.0
.target sm_90a
.address_size 64

.extern .shared .align 1024 .b8 smem[];

.visible .entry k_index(
    .param .u64 out,
    .param .u32 cols
)
.maxntid 32, 1, 1
{
    .reg .b32 %r<8>;
    .reg .f32 %f<2>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u32 %r1, [cols];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %ctaid.y;
    mad.lo.u32 %r5, %r2, 32, %r3;       // column
    mad.lo.u32 %r6, %r4, %r1, %r5;      // row * cols + column
    cvt.rn.f32.u32 %f1, %r6;
    mul.wide.u32 %rd2, %r6, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.f32 [%rd3], %f1;
    ret;
}

.visible .entry k_tma_dump(
    .param .align 64 .b8 tmap[128],
    .param .u64 out,
    .param .u32 width
)
.maxntid 128, 1, 1
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    mov.b64 %rd1, tmap;
    cvta.param.u64 %rd2, %rd1;          // TMA wants the generic address of the param
    ld.param.u64 %rd3, [out];
    cvta.to.global.u64 %rd3, %rd3;
    ld.param.u32 %r10, [width];
    shl.b32 %r10, %r10, 7;              // tile bytes: 64 rows * width * 2
    mov.u32 %r13, %ctaid.x;
    mul.wide.u32 %rd6, %r13, %r10;      // this tile's bytes in out
    add.u64 %rd3, %rd3, %rd6;
    shl.b32 %r14, %r13, 6;              // row coordinate of the tile
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, smem;
    add.u32 %r2, %r2, 1023;
    and.b32 %r2, %r2, 0xFFFFFC00;       // 1024-aligned, as 128B swizzle needs
    add.u32 %r4, %r2, 16384;            // mbarrier after the tile
    setp.eq.u32 %p1, %r1, 0;
    @!%p1 bra INIT_DONE;
    mbarrier.init.shared::cta.b64 [%r4], 1;
    fence.mbarrier_init.release.cluster;
    fence.proxy.async.shared::cta;
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r4], %r10;
    mov.u32 %r5, 0;
    cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r2], [%rd2, {%r5, %r14}], [%r4];
INIT_DONE:
    bar.sync 0;
    mov.u32 %r6, 0;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r4], %r6;
    @!%p2 bra WAIT;
    mov.u32 %r7, %r1;
COPY:
    shl.b32 %r8, %r7, 2;
    add.u32 %r9, %r2, %r8;
    ld.shared.u32 %r11, [%r9];
    cvt.u64.u32 %rd4, %r8;
    add.u64 %rd5, %rd3, %rd4;
    st.global.u32 [%rd5], %r11;
    add.u32 %r7, %r7, 128;
    shl.b32 %r12, %r7, 2;
    setp.lt.u32 %p3, %r12, %r10;
    @%p3 bra COPY;
    ret;
}
"""

INDEX_ABI = KernelABI(
    entry="k_index",
    args=(ArgSpec("out", "f32", ("R", "C")),),
    params=(PointerParam("out", "out"), DimParam("cols", "C")),
    grid=(("div", "C", 32), "R", 1),
    block=32,
    smem_bytes=0,
    divisibility=(("C", 32),),
)


def tma_abi(swizzle: int) -> tuple[KernelABI, int]:
    """The dump kernel's ABI for one swizzle, and the tile width: one swizzle span of bf16."""
    width = swizzle // 2 if swizzle else 64
    abi = KernelABI(
        entry="k_tma_dump",
        args=(ArgSpec("X", "bf16", ("R", "W")), ArgSpec("Y", "bf16", ("R", "W"))),
        params=(
            TensorMapParam("tmap", "X", (width, 64), swizzle),
            PointerParam("out", "Y"),
            DimParam("width", "W"),
        ),
        grid=(("div", "R", 64), 1, 1),
        block=128,
        smem_bytes=80 * 1024,  # above the 48 KiB default: exercises the opt-in
        divisibility=(("R", 64),),
    )
    return abi, width


def swizzled(tiles: np.ndarray, swizzle: int) -> np.ndarray:
    """Where TMA puts each byte of each tile (rows of `tiles`) in 1024-aligned shared memory."""
    mask = {0: 0, 32: 1, 64: 3, 128: 7}[swizzle]
    o = np.arange(tiles.shape[1])
    out = np.empty_like(tiles)
    out[:, o ^ (((o >> 7) & mask) << 4)] = tiles[:, o]
    return out


def find_ptxas() -> str | None:
    """ptxas from PATH, the nvidia-cuda-nvcc wheel, or Triton's bundled copy."""
    if found := shutil.which("ptxas"):
        return found
    site = sysconfig.get_paths()["purelib"]
    for pattern in ("nvidia/cu13/bin/ptxas", "nvidia/cuda_nvcc/bin/ptxas", "triton/backends/nvidia/bin/ptxas"):
        for path in glob.glob(os.path.join(site, pattern)):
            return path
    return None


# ---- the cases, each run in a child process ----

CASES: dict[str, Callable[[], None]] = {}


def case(fn: Callable[[], None]) -> Callable[[], None]:
    CASES[fn.__name__.removeprefix("case_")] = fn
    return fn


def skip(why: str) -> None:
    print(f"SKIP: {why}")
    sys.exit(SKIP)


def expected_index(rows: int, cols: int) -> np.ndarray:
    return np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)


@case
def case_index_torch() -> None:
    import torch

    from tkc.runtime import load

    k = load(ptx=PTX, abi=INDEX_ABI)
    out = torch.full((3, 96), -1.0, device="cuda")
    assert k.launch_config(out).grid == (3, 3, 1)
    k(out)  # torch's current stream
    torch.cuda.synchronize()
    assert np.array_equal(out.cpu().numpy(), expected_index(3, 96))

    side = torch.cuda.Stream()
    a = torch.full((2, 64), -1.0, device="cuda")
    b = torch.full((5, 32), -1.0, device="cuda")
    c = torch.full((1, 32), -1.0, device="cuda")
    side.wait_stream(torch.cuda.current_stream())  # the fills come first
    with torch.cuda.stream(side):
        k(out=a)  # picks up the side stream as torch's current one
    k(b, stream=side)  # an explicit torch.cuda.Stream
    side.synchronize()
    assert np.array_equal(a.cpu().numpy(), expected_index(2, 64))
    assert np.array_equal(b.cpu().numpy(), expected_index(5, 32))
    k(c, stream=side.cuda_stream)  # a raw handle
    side.synchronize()
    assert np.array_equal(c.cpu().numpy(), expected_index(1, 32))


@case
def case_index_numpy() -> None:
    from tkc.runtime import load

    k = load(ptx=PTX, abi=INDEX_ABI)
    out = np.full((4, 64), -1.0, np.float32)
    k(out)  # copied in, launched, copied back: synchronous
    assert np.array_equal(out, expected_index(4, 64))
    fortran = np.asfortranarray(np.full((2, 32), -1.0, np.float32))
    k(fortran)  # not row-major: staged through a packed copy, written back
    assert np.array_equal(fortran, expected_index(2, 32))


@case
def case_index_cupy() -> None:
    try:
        import cupy
    except ImportError:
        skip("cupy is not installed")
    from tkc.runtime import load

    k = load(ptx=PTX, abi=INDEX_ABI)
    out = cupy.full((3, 64), -1.0, dtype=cupy.float32)
    stream = cupy.cuda.Stream(non_blocking=True)
    k(out, stream=stream)
    stream.synchronize()
    assert np.array_equal(cupy.asnumpy(out), expected_index(3, 64))


@case
def case_index_dlpack() -> None:
    import torch

    from tkc.runtime import load

    class DLPackOnly:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kw):
            return self.t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    k = load(ptx=PTX, abi=INDEX_ABI)
    t = torch.full((2, 96), -1.0, device="cuda")
    torch.cuda.synchronize()
    k(DLPackOnly(t))
    torch.cuda.synchronize()
    assert np.array_equal(t.cpu().numpy(), expected_index(2, 96))


@case
def case_host_pointer_refused() -> None:
    from tkc.diagnostics import TkError
    from tkc.runtime import load

    host = np.zeros((2, 32), np.float32)

    class HostPretendingDevice:
        __cuda_array_interface__ = {
            "shape": (2, 32), "typestr": "<f4", "data": (host.ctypes.data, False),
            "strides": None, "version": 3,
        }

    k = load(ptx=PTX, abi=INDEX_ABI)
    try:
        k(HostPretendingDevice())
    except TkError as e:
        assert "is not CUDA device memory" in e.message, e.message
    else:
        raise AssertionError("a host pointer was launched on")


@case
def case_other_gpu_refused() -> None:
    import torch

    from tkc.diagnostics import TkError
    from tkc.runtime import load

    if torch.cuda.device_count() < 2:
        skip("one GPU only")
    k = load(ptx=PTX, abi=INDEX_ABI)
    try:
        k(torch.zeros((1, 32), device="cuda:1"))
    except TkError as e:
        assert "cuda:1" in e.message
    else:
        raise AssertionError("a tensor on cuda:1 was launched on")


def run_tma(swizzle: int) -> None:
    import torch

    from tkc.runtime import load

    abi, width = tma_abi(swizzle)
    k = load(ptx=PTX, abi=abi)
    rows = 256
    bits = torch.arange(rows * width, dtype=torch.int32).to(torch.int16).reshape(rows, width)
    x = bits.cuda().view(torch.bfloat16)
    y = torch.zeros_like(x)
    k(x, y)
    torch.cuda.synchronize()
    tile_bytes = 64 * width * 2
    want = swizzled(bits.numpy().view(np.uint8).reshape(-1, tile_bytes), swizzle)
    got = y.view(torch.int16).cpu().numpy().view(np.uint8).reshape(-1, tile_bytes)
    assert np.array_equal(got, want), f"swizzle {swizzle}: {np.count_nonzero(got != want)} bytes differ"
    k(x, y)  # same pointers and shapes: the cached map
    assert len(k._tensor_maps) == 1
    k(x.clone(), y)
    assert len(k._tensor_maps) == 2


@case
def case_tma_swizzle_128() -> None:
    run_tma(128)


@case
def case_tma_swizzle_64() -> None:
    run_tma(64)


@case
def case_tma_swizzle_32() -> None:
    run_tma(32)


@case
def case_tma_no_swizzle() -> None:
    run_tma(0)


@case
def case_tma_numpy_bf16() -> None:
    try:
        import ml_dtypes
    except ImportError:
        skip("ml_dtypes is not installed")
    from tkc.runtime import load

    abi, width = tma_abi(128)
    k = load(ptx=PTX, abi=abi)
    bits = np.arange(128 * width, dtype=np.uint16).reshape(128, width)
    y = np.zeros((128, width), ml_dtypes.bfloat16)
    x = bits.view(ml_dtypes.bfloat16)
    x.flags.writeable = False  # an input only: must not be (and cannot be) copied back into
    k(x, y)
    tile_bytes = 64 * width * 2
    want = swizzled(bits.view(np.uint8).reshape(-1, tile_bytes), 128)
    assert np.array_equal(y.view(np.uint8).reshape(-1, tile_bytes), want)


@case
def case_jit_error_has_ptxas_log() -> None:
    from tkc.runtime import CudaError, load

    bad = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k_index()\n{\n  bogus.op;\n  ret;\n}\n"
    try:
        load(ptx=bad, abi=INDEX_ABI)
    except CudaError as e:
        assert e.call == "cuModuleLoadDataEx" and e.name == "CUDA_ERROR_INVALID_PTX", str(e)
        assert "bogus" in e.log or "line 6" in e.log, e.log
    else:
        raise AssertionError("broken PTX loaded")


@case
def case_missing_entry() -> None:
    from dataclasses import replace

    from tkc.runtime import CudaError, load

    try:
        load(ptx=PTX, abi=replace(INDEX_ABI, entry="k_missing"))
    except CudaError as e:
        assert "k_missing" in str(e), str(e)
    else:
        raise AssertionError("a missing kernel was found")


@case
def case_smem_over_limit() -> None:
    from dataclasses import replace

    from tkc.diagnostics import TkError
    from tkc.runtime import load
    from tkc.runtime.device import device

    try:
        load(ptx=PTX, abi=replace(INDEX_ABI, smem_bytes=300_000))
    except TkError as e:
        assert "300000" in e.message and str(device().smem_optin) in e.message, e.message
    else:
        raise AssertionError("300000 bytes of shared memory were accepted")


@case
def case_cubin() -> None:
    import torch

    from tkc.runtime import load

    ptxas = find_ptxas()
    if ptxas is None:
        skip("no ptxas")
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "k.ptx"), os.path.join(tmp, "k.cubin")
        with open(src, "w") as f:
            f.write(PTX)
        subprocess.run([ptxas, "-arch=sm_90a", src, "-o", dst], check=True)
        with open(dst, "rb") as f:
            cubin = f.read()
    k = load(cubin=cubin, abi=INDEX_ABI)
    out = torch.full((2, 32), -1.0, device="cuda")
    k(out)
    torch.cuda.synchronize()
    assert np.array_equal(out.cpu().numpy(), expected_index(2, 32))


@case
def case_device_facts() -> None:
    from tkc.runtime.device import device

    d = device()
    assert d.num_sms > 0 and d.smem_optin >= 227 * 1024, d
    print(d.name, d.num_sms, "SMs,", d.smem_optin, "bytes of opt-in shared memory per block")


@case
def case_run_gemm_example() -> None:
    """`tkc run`'s GPU path end to end (needs the compiler's GEMM to be right, too)."""
    from pathlib import Path

    from tkc.runner import run_on_gpu

    example = Path(__file__).parents[2] / "examples" / "gemm.tk"
    if not example.exists():
        skip("no examples/gemm.tk")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 128), np.float32)
    b = rng.standard_normal((128, 512), np.float32)
    c = np.full((256, 512), np.nan, np.float32)
    out = run_on_gpu(str(example), "gemm", {"A": a, "B": b, "C": c}, {})
    assert set(out) == {"C"}
    ref = a @ b  # bf16 rounding of the inputs and output stays well inside 1e-2
    rel = np.linalg.norm(out["C"].astype(np.float32) - ref) / np.linalg.norm(ref)
    assert rel < 1e-2, rel


# ---- pytest side ----


def _gpu_available() -> bool:
    try:
        import torch
        from cuda.bindings import driver  # noqa: F401
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu_available(), reason="needs torch, cuda-python and a CUDA GPU")
@pytest.mark.parametrize("name", sorted(CASES))
def test_runtime_on_gpu(name: str) -> None:
    try:
        r = subprocess.run(
            [sys.executable, __file__, name], capture_output=True, text=True, timeout=TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name} did not finish in {TIMEOUT_S} s (a hang: TMA bytes or mbarrier phase?)")
    if r.returncode == SKIP:
        pytest.skip(r.stdout.strip().splitlines()[-1])
    assert r.returncode == 0, f"{name} failed:\n{r.stdout}\n{r.stderr}"


if __name__ == "__main__":
    CASES[sys.argv[1]]()
    print("OK")
