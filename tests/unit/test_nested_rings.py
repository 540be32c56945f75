"""Loads in nested loops and under ifs: a ring per loop or if that loads (plan.ring_owners), laid
out the same before tile-pipeline hoists and after, counted alike by both roles, and the cases
the GPU backend refuses, each with a located error."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import scf

from tkc.diagnostics import TkError
from tkc.dialects import sm90
from tkc.dialects.tile import KernelOp
from tkc.driver import compile_module, ir_after_each_pass, load_module
from tkc.frontend import parse_tk
from tkc.passes.plan import KernelPlan, ring_loads, ring_owners, smem_plan

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "tests" / "gpu" / "kernels"
NESTED = [REPO / "examples" / "mlp.tk", KERNELS / "row_panel.tk", KERNELS / "two_level.tk", KERNELS / "if_load.tk",
          KERNELS / "concat_k.tk"]


def kernel_of(module) -> KernelOp:
    return next(op for op in module.walk() if isinstance(op, KernelOp))


def test_rings_of_loops_and_ifs() -> None:
    """if_load.tk: the K loop's ring (A), the ring of the if in it (B0 or B1), and the ring of
    the kernel-level if (R), in program order; each branch's load from the stage's first byte."""
    kernel = kernel_of(load_module(KERNELS / "if_load.tk"))
    owners = ring_owners(kernel)
    assert [type(owner) for owner in owners] == [scf.ForOp, scf.IfOp, scf.IfOp]
    assert [[load.tensor.name_hint for load in ring_loads(owner)] for owner in owners] == [["A"], ["B0", "B1"], ["R"]]
    (_, in_loop, _) = smem_plan(kernel, 2).rings
    assert ([offset for _, offset in in_loop.loads], in_loop.stage_bytes) == ([0, 0], 16384)


def test_a_loop_that_loads_only_in_an_ifs_branches_gets_the_stages_of_a_loop() -> None:
    """concat_k.tk's K loop loads only in the branches of an if: the if's ring fills a stage per
    iteration, so the plan gives it as many stages as fit (it had one), and @stages pins them."""
    kernel = kernel_of(compile_module(load_module(KERNELS / "concat_k.tk"), "tile"))
    assert [type(owner) for owner in ring_owners(kernel)] == [scf.IfOp]
    assert KernelPlan.of(kernel).stages == 4
    kernel = kernel_of(compile_module(load_module(KERNELS / "concat_k.tk", None, {"@stages": 2}), "tile"))
    assert KernelPlan.of(kernel).stages == 2
    assert KernelPlan.of(kernel).reasons["stages"].startswith("pinned by @stages(2)")


def test_a_load_hoisted_out_of_an_inner_loop_is_planned_in_the_outer_ring() -> None:
    """The occupancy plan sizes shared memory before tile-pipeline hoists: a load that does not
    depend on the inner loop is already counted in the outer loop's ring, so the layout after
    hoisting has the bytes the plan decided."""
    source = """
kernel k<BM = 64, BN = 64>(X: gl<bf16>[M, N], W: gl<bf16>[N, N], Y: gl<f32>[M, N]) {
    grid (M / BM) as (i)
    for j in 0 .. N / BN {
        var acc = zero<f32>[BM, BN]
        for k in 0 .. N / BN {
            acc = mma_AB(load X[i, k] : st<bf16>[BM, BN], load W[0, j] : st<bf16>[BN, BN], acc)
        }
        store Y[i, j] = acc
    }
}
"""
    stages = {}
    for name, snapshot in ir_after_each_pass(parse_tk(source, "k.tk")):
        if name in ("tile-occupancy-plan", "tile-pipeline"):
            kernel = kernel_of(snapshot)
            stages[name] = smem_plan(kernel, KernelPlan.of(kernel).stages)
    before, after = stages["tile-occupancy-plan"], stages["tile-pipeline"]
    assert before.total == after.total
    assert [len(ring.loads) for ring in after.rings] == [1, 1]  # W in the j loop's ring, X in the k loop's
    assert [[load.tensor.name_hint for load, _ in ring.loads] for ring in after.rings] == [["W"], ["X"]]


@pytest.mark.parametrize("path", NESTED, ids=lambda p: p.stem)
def test_both_roles_handle_every_ring_in_the_same_places(path: Path) -> None:
    """Per ring, the producer acquires stages where the consumers wait for them: as many ring
    ops, under ifs and loops of the same nest."""
    module = compile_module(load_module(path), emit="sm90")
    roles = next(op for op in module.walk() if isinstance(op, sm90.RolesOp))

    def nest(op) -> tuple[str, ...]:
        kinds = []
        while (parent := op.parent_op()) is not roles:
            if isinstance(parent, scf.ForOp | scf.IfOp):
                kinds.append(parent.name)
            op = parent
        return tuple(kinds)

    fills = [nest(op) for op in roles.producer.walk() if isinstance(op, sm90.MbarrierArriveOp) and op.tx_bytes is not None]
    waits = [nest(op) for op in roles.consumer.walk() if isinstance(op, sm90.MbarrierWaitOp)]
    assert fills and all(fill in waits for fill in fills)


SPAN = """
kernel k<BM = 64, BN = 64>(X: gl<f32>[M, N], Z: gl<f32>[M, N], Y: gl<f32>[M, N]) {
    grid (M / BM) as (i)
    for j in 0 .. N / BN {
        let a = load X[i, j] : rt<f32>[BM, BN]
        var t = zero<f32>[BM, BN]
        for k in 0 .. N / BN {
            t = t + load X[i, k] : rt<f32>[BM, BN]
        }
        store Y[i, j] = a + t + load Z[i, j] : rt<f32>[BM, BN]
    }
}
"""


@pytest.mark.parametrize(("source", "where", "message"), [
    (SPAN, (7, 9), "a loop or if that loads or fences cannot come between them"),
    ("@cluster(2)\n" + (REPO / "examples" / "mlp.tk").read_text(), (10, 9),
     r"@cluster\(2\) multicasts the stages of top-level loops only"),
    # a triangular K loop: the pair's CTAs (i = 2p, 2p + 1) would run different stages and hang
    ((REPO / "examples" / "gemm.tk").read_text().replace("kernel gemm", "@cluster(2)\nkernel gemm", 1)
     .replace("ceildiv(K, BK)", "i + 1"), (6, 5), r"@cluster\(2\) groups CTAs along i, .* this loop's bounds depend on i"),
])
def test_refusals_are_located(source: str, where: tuple[int, int], message: str) -> None:
    with pytest.raises(TkError, match=message) as error:
        compile_module(parse_tk(source, "k.tk"), emit="ptx")
    assert (error.value.line, error.value.col) == where


def test_a_one_stage_ring_frees_each_stage_in_its_own_iteration() -> None:
    """A wgmma left in flight (GEMM's accumulation, attention's late P.V) frees its stage one
    iteration late; with one stage the next iteration would wait for that very stage, so neither
    is done (and @overlap(1) is refused there)."""
    gemm = (REPO / "examples" / "gemm.tk").read_text().replace("    for k in", "    @stages(1) for k in")
    sm90_ir = str(compile_module(parse_tk(gemm, "gemm.tk"), emit="sm90"))
    assert "wgmma_in_flight" not in sm90_ir
    attention = (REPO / "examples" / "attention.tk").read_text()
    one_stage = attention.replace("    for kv in", "    @stages(1) for kv in")
    assert "softmax_overlap" not in str(compile_module(parse_tk(one_stage, "attention.tk"), emit="sm90"))
    with pytest.raises(TkError, match="@overlap\\(1\\) needs a ring of at least 2 stages"):
        compile_module(parse_tk(attention.replace("    for kv in", "    @stages(1) @overlap(1) for kv in"), "a.tk"))
