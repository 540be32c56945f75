"""Stream-K (`@stream_k(1)`): the plan decides it only where a tile is one K loop of
accumulations from zero, refuses the pin elsewhere with the reason, and the lowering walks whole
waves then slices, leaving partial sums behind flags in the scratch parameter the ABI declares."""

from pathlib import Path

import pytest

from tkc.abi import ScratchParam
from tkc.diagnostics import TkError
from tkc.driver import compile_module, load_module, make_context
from tkc.passes.plan import KernelPlan
from tkc.dialects.tile import KernelOp

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _kernel(source: Path, pins: dict[str, int], stage: str = "tile") -> tuple[KernelOp | None, str]:
    module = load_module(source, None, pins, make_context())
    compile_module(module, stage)
    kernel = next((op for op in module.walk() if isinstance(op, KernelOp)), None)
    return kernel, str(module)


def test_gemm_takes_stream_k_where_pinned_and_says_so_otherwise() -> None:
    kernel, _ = _kernel(EXAMPLES / "gemm.tk", {"@stream_k": 1})
    assert kernel is not None
    plan = KernelPlan.of(kernel)
    assert plan.stream_k and plan.persistent
    assert "last partial wave" in plan.reasons["stream_k"]
    kernel, _ = _kernel(EXAMPLES / "gemm.tk", {})
    assert kernel is not None
    plan = KernelPlan.of(kernel)
    assert not plan.stream_k and "@stream_k(1)" in plan.reasons["stream_k"]


def test_a_kernel_whose_tile_is_no_k_loop_of_sums_refuses_the_pin() -> None:
    with pytest.raises(TkError, match="cannot split this kernel's tiles along K"):
        _kernel(EXAMPLES / "layernorm.tk", {"@stream_k": 1})


STORE_IN_THE_K_LOOP = """
kernel s<BM = 128, BN = 128, BK = 64>(A: gl<bf16>[M, K], B: gl<bf16>[K, N], P: gl<f32>[NK, M], C: gl<f32>[M, N]) {
    grid (ceildiv(M, BM), ceildiv(N, BN)) as (i, j)
    var acc = zero<f32>[BM, BN]
    for k in 0 .. ceildiv(K, BK) {
        acc = mma_AB(load A[i, k] : st<bf16>[BM, BK], load B[k, j] : st<bf16>[BK, BN], acc)
        store P[k, i] = row_sum(acc)
    }
    store C[i, j] = acc
}
"""


def test_the_reason_names_what_the_user_wrote_before_what_the_tails_added(tmp_path: Path) -> None:
    """tile-mask-tails puts the loop's row_sum under an if; the reason is the store the user wrote."""
    source = tmp_path / "s.tk"
    source.write_text(STORE_IN_THE_K_LOOP)
    kernel, _ = _kernel(source, {})
    assert kernel is not None
    assert KernelPlan.of(kernel).reasons["stream_k"].endswith("the K loop stores")


def test_the_lowered_gemm_has_a_scratch_parameter_flags_and_partials() -> None:
    _, text = _kernel(EXAMPLES / "gemm.tk", {"@stream_k": 1}, "sm90")
    for op in ("sm90.scratch", "sm90.store_partial", "sm90.add_partial", "sm90.flag_signal", "sm90.flag_wait",
               "sm90.fence_gpu"):
        assert op in text, op
    assert "scratch = scratch" in text  # the #sm90.abi names the parameter and its size


def test_stream_k_ptx_orders_the_flags_at_gpu_scope() -> None:
    from tkc.api import CompiledKernel

    text = CompiledKernel(EXAMPLES / "gemm.tk", "gemm", {"@stream_k": 1}).ptx
    assert "red.release.gpu.global.add.u32" in text
    assert "ld.acquire.gpu.global.u32" in text
    assert "ld.global.cg.v4.f32" in text
    assert "fence.acq_rel.gpu;" in text


def test_scratch_param_is_sized_per_cta() -> None:
    from tkc.api import CompiledKernel

    compiled = CompiledKernel(EXAMPLES / "gemm.tk", "gemm", {"@stream_k": 1})
    (scratch,) = (p for p in compiled.abi.params if isinstance(p, ScratchParam))
    # 2 consumers x 128 threads x 128 f32 registers, plus a u32 flag, per CTA
    assert scratch.nbytes == ("add", ("mul", ("mul", "num_sms", 1), 131076), 16)
