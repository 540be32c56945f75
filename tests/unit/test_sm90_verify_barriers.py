"""sm90-verify-barriers: the kernels convert-tile-to-sm90 generates pass unchanged; each rule of
the barrier protocol, broken by hand in generated IR, fails with a message that names it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TypeVar

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Operation

from tkc import driver
from tkc.diagnostics import TkError
from tkc.dialects import sm90, tile
from tkc.passes.convert_tile_to_sm90 import ConvertTileToSm90Pass
from tkc.passes.plan import KernelPlan
from tkc.passes.sm90_build_rings import Sm90BuildRingsPass
from tkc.passes.tile_pipeline import TilePipelinePass
from tkc.passes.sm90_verify_barriers import Sm90VerifyBarriersPass, barriers_of

T = TypeVar("T", bound=Operation)
INPUTS = Path(__file__).resolve().parents[1] / "lit/sm90_verify_barriers/Inputs"


def lowered(name: str, **plan: int) -> ModuleOp:
    """The sm90 IR of Inputs/<name>.mlir under the given plan decisions."""
    module = driver.load_module(INPUTS / f"{name}.mlir")
    kernel = next(op for op in module.walk() if isinstance(op, tile.KernelOp))
    for key, value in plan.items():
        KernelPlan.decide(kernel, key, value, "the test's plan")
    TilePipelinePass().apply(Context(), module)  # the shared-memory layout the lowering reads
    ConvertTileToSm90Pass().apply(Context(), module)
    Sm90BuildRingsPass().apply(Context(), module)
    return module


def check(module: ModuleOp) -> None:
    Sm90VerifyBarriersPass().apply(Context(), module)


def violation(module: ModuleOp, message: str) -> None:
    with pytest.raises(TkError) as info:
        check(module)
    assert info.value.message.startswith("internal mbarrier protocol violation in the generated kernel @")
    assert re.search(message, info.value.message), info.value.message


def ops_of(where: Operation | ModuleOp, cls: type[T]) -> list[T]:
    return [op for op in where.walk() if isinstance(op, cls)]


def roles(module: ModuleOp) -> sm90.RolesOp:
    return ops_of(module, sm90.RolesOp)[0]


def producer_wait(module: ModuleOp) -> sm90.MbarrierWaitOp:
    return next(op for op in roles(module).producer.walk() if isinstance(op, sm90.MbarrierWaitOp))


def consumer_wait(module: ModuleOp) -> sm90.MbarrierWaitOp:
    return next(op for op in roles(module).consumer.walk() if isinstance(op, sm90.MbarrierWaitOp))


def expect_tx(module: ModuleOp) -> sm90.MbarrierArriveOp:
    return next(op for op in ops_of(module, sm90.MbarrierArriveOp) if op.tx_bytes is not None)


GEMM_3 = {"stages": 3, "consumers": 2}


@pytest.mark.parametrize(
    ("name", "plan"),
    [
        ("gemm", {}),
        ("gemm", GEMM_3),
        ("gemm", {"stages": 3, "consumers": 2, "persistent": 1, "group_m": 8}),
        ("gemm", {"stages": 2, "consumers": 1}),
        ("attention", {}),
        ("attention", {"stages": 2, "consumers": 2, "persistent": 1}),
    ],
)
def test_generated_kernels_pass_unchanged(name: str, plan: dict[str, int]) -> None:
    module = lowered(name, **plan)
    before = str(module)
    check(module)
    assert str(module) == before


def test_the_pipeline_runs_it_after_the_lowering() -> None:
    names = driver.pipeline_for("sm90")
    assert names[-4:] == ["convert-tile-to-sm90", "sm90-build-rings", "sm90-schedule-wgmma", "sm90-verify-barriers"]


def test_barriers_are_the_ring_stages_of_their_group() -> None:
    module = lowered("gemm", **GEMM_3)
    assert barriers_of(consumer_wait(module).barrier) == {(0, 0), (0, 1), (0, 2)}  # full: 3 stages at smem+0
    assert barriers_of(producer_wait(module).barrier) == {(24, 0), (24, 1), (24, 2)}  # empty: after them
    init = ops_of(module, sm90.MbarrierInitOp)[-1]
    assert barriers_of(init.barrier) == {(24, 2)}
    loop = consumer_wait(module).parent_op()
    assert isinstance(loop, scf.ForOp)
    assert barriers_of(loop.body.block.args[0]) is None


def test_wrong_expect_tx_bytes() -> None:
    module = lowered("gemm", **GEMM_3)
    arrive = expect_tx(module)
    assert arrive.tx_bytes is not None
    stage = arrive.tx_bytes.value.data
    arrive.tx_bytes = IntegerAttr(stage - 8192, 32)
    violation(module, f"expect_tx {stage - 8192} expects TMA loads of {stage - 8192} bytes .* found {stage} bytes")


def test_tma_load_without_expect_tx() -> None:
    module = lowered("attention")
    del expect_tx(module).properties["tx_bytes"]
    violation(module, r"a TMA load completing on the barrier 0 of the group at smem\+0 expects an sm90.mbarrier_arrive expect_tx")


def test_wrong_empty_init_count() -> None:
    module = lowered("gemm", **GEMM_3)
    init = next(op for op in ops_of(module, sm90.MbarrierInitOp) if op.count.value.data == 8)  # a lane per consumer warp
    init.count = IntegerAttr(4, 32)
    violation(module, r"the barrier 0 of the group at smem\+24 expects 4 arrivals per phase, found an arrive executed by 8 threads")


def test_wrong_full_init_count() -> None:
    module = lowered("gemm", **GEMM_3)
    ops_of(module, sm90.MbarrierInitOp)[0].count = IntegerAttr(2, 32)
    violation(module, r"the barrier 0 of the group at smem\+0 expects 2 arrivals per phase, found an arrive executed by 1 thread$")


def test_missing_init() -> None:
    module = lowered("gemm", **GEMM_3)
    ops_of(module, sm90.MbarrierInitOp)[-1].detach()
    violation(module, r"expected every barrier sm90.mbarrier_\w+ may use to be initialised, found no init of the barrier 2 of the group at smem\+24")


def test_inits_without_fence_or_sync() -> None:
    module = lowered("gemm")
    ops_of(module, sm90.FenceBarrierInitOp)[0].detach()
    violation(module, "expected sm90.fence_barrier_init after sm90.mbarrier_init")
    module = lowered("gemm")
    ops_of(module, sm90.SyncBlockOp)[0].detach()
    violation(module, "expected sm90.sync_block after the barrier inits and before sm90.roles")
    module = lowered("gemm")
    sync = ops_of(module, sm90.SyncBlockOp)[0]
    sync.detach()
    ops_of(module, sm90.KernelOp)[0].body.block.add_op(sync)  # after the roles: too late
    violation(module, "expected sm90.sync_block after the barrier inits and before sm90.roles")


def test_parity_not_a_phase_bit() -> None:
    module = lowered("gemm", **GEMM_3)
    wait = consumer_wait(module)
    phase = wait.parity.owner
    assert isinstance(phase, arith.AndIOp)
    wait.operands = (wait.barrier, phase.lhs)
    violation(module, "expected the parity of sm90.mbarrier_wait to be a phase bit .* found the result of arith.divui")


def test_phase_of_another_ring_size() -> None:
    module = lowered("gemm", **GEMM_3)
    phase = consumer_wait(module).parity.owner
    assert isinstance(phase, arith.AndIOp)
    lap = phase.lhs.owner
    assert isinstance(lap, arith.DivUIOp)
    lap.operands = (lap.lhs, phase.rhs)
    violation(module, r"expected the phase of sm90.mbarrier_wait to be \(it / 3\) & 1 for its stage it % 3, found \(it / 1\) & 1")


def test_producer_waits_with_the_plain_phase() -> None:
    module = lowered("gemm", **GEMM_3)
    wait = producer_wait(module)
    flipped = wait.parity.owner
    assert isinstance(flipped, arith.XOrIOp)
    wait.operands = (wait.barrier, flipped.lhs)
    violation(module, "the producer waits with the flipped phase bit, found the plain one")


def test_producer_waits_on_full() -> None:
    module = lowered("gemm", **GEMM_3)
    wait = producer_wait(module)
    wait.operands = (expect_tx(module).barrier, wait.parity)
    violation(module, r"the producer waits on empty barriers, found a wait on the barriers 0, 1, 2 of the group at smem\+0, which TMA completes")


def test_consumer_waits_on_empty() -> None:
    module = lowered("gemm", **GEMM_3)
    wait = consumer_wait(module)
    at = wait.barrier.owner  # one mbarrier_at gives the stage's full and empty barriers
    assert isinstance(at, sm90.MbarrierAtOp)
    wait.operands = (at.barriers[1], wait.parity)
    violation(module, r"consumers wait on full barriers, found a wait on the barriers 0, 1, 2 of the group at smem\+24, which no TMA completes")


def test_wait_without_arrive() -> None:
    module = lowered("gemm", **GEMM_3)
    for arrive in roles(module).consumer.walk():
        if isinstance(arrive, sm90.MbarrierArriveOp):
            arrive.detach()
    violation(module, r"found none on the barriers 0, 1, 2 of the group at smem\+24: the wait would never complete")


def test_unknown_stage() -> None:
    module = lowered("gemm", **GEMM_3)
    at = consumer_wait(module).barrier.owner
    loop = consumer_wait(module).parent_op()
    assert isinstance(at, sm90.MbarrierAtOp) and isinstance(loop, scf.ForOp)
    at.operands = (*at.groups, loop.body.block.args[0])
    violation(module, "expected the stage of the barrier of sm90.mbarrier_wait to be a constant or it % S, found a block argument")
