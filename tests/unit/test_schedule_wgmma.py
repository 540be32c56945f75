"""sm90-schedule-wgmma (`@schedule_wgmma(1)`): what it moves, that it is idempotent (a compile resumed
from an sm90 dump runs it again), that what it leaves in flight is waited for before the stage it
reads is freed, that it leaves kernels without the pin alone, and that the kernels it changes
assemble clean (no spills, no serialised wgmmas) where ptxas is installed."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import scf

from tkc.backends.ptx_printer import print_ptx
from tkc.backends.ptxas import ToolNotFound, assemble, find_tool
from tkc.dialects import sm90
from tkc.driver import compile_module, load_module, make_context
from tkc.passes.sm90_schedule_wgmma import SCHEDULED, schedule_block

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KERNELS = [("attention_bwd.tk", "attn_bwd_dq"), ("attention_bwd.tk", "attn_bwd_dkdv"), ("fftconv.tk", None),
           ("ssd.tk", "ssd_output"), ("attention.tk", None), ("gemm.tk", None), ("hedgehog.tk", "hh_output")]


PIN = {"@schedule_wgmma": 1}
SPILLS_AT_DEFAULTS = {"attn_bwd_dkdv": {"BQ": 32}}
"""Kernels whose defaults spill with the pin, and the sizes checked instead: dK/dV at BQ = 64 already
holds 240 of its consumers' 240 registers in flight (tile-pipeline's overlap); issuing dP^T beside
S^T adds 48 bytes of spills."""


def _sm90(file: str, kernel: str | None, params: dict[str, int] = PIN) -> sm90.KernelOp:
    ctx = make_context()
    module = compile_module(load_module(EXAMPLES / file, kernel, params, ctx), "sm90", ctx=ctx)
    return next(op for op in module.walk() if isinstance(op, sm90.KernelOp))


def _blocks(kernel: sm90.KernelOp) -> list:
    return [b for op in kernel.walk() for r in op.regions for b in r.blocks]


@pytest.mark.parametrize("file,kernel", KERNELS)
def test_scheduling_again_changes_nothing(file: str, kernel: str | None) -> None:
    scheduled = _sm90(file, kernel)
    before = str(scheduled)
    for block in _blocks(scheduled):
        schedule_block(block)
    assert str(scheduled) == before


@pytest.mark.parametrize("file,kernel", KERNELS)
def test_groups_are_waited_for_before_a_stage_is_freed(file: str, kernel: str | None) -> None:
    """In every block, each group issued there is waited for (wait_group k with at most k later
    groups) before the block's next ring release or the block's end, unless convert-tile-to-sm90
    left it in flight on purpose (a loop that keeps one group across its back edge)."""
    for block in _blocks(_sm90(file, kernel)):
        in_flight: list[sm90.WgmmaOp] = []
        for op in block.ops:
            if isinstance(op, sm90.WgmmaOp):
                in_flight.append(op)
            elif isinstance(op, sm90.WgmmaWaitOp):
                keep = op.pending.value.data
                in_flight = in_flight[len(in_flight) - keep:] if keep else []
            elif isinstance(op, sm90.MbarrierArriveOp | scf.YieldOp) and in_flight:
                assert all(SCHEDULED not in g.attributes and not _waited_later(g, op) for g in in_flight), op


def _waited_later(group: sm90.WgmmaOp, at) -> bool:
    """Whether a wait for `group` that the pass moved lies after `at` in the block."""
    op = at.next_op
    while op is not None:
        if isinstance(op, sm90.WgmmaWaitOp) and op.acc is group.result and SCHEDULED in op.attributes:
            return True
        op = op.next_op
    return False


def test_fftconv_runs_its_real_and_imaginary_products_together() -> None:
    """`br = mma_AB(f128r, x)` and `bi = mma_AB(f128i, x)`: bi is issued above br's wait, which
    then leaves it in flight."""
    kernel = _sm90("fftconv.tk", None)
    ops = [op for op in kernel.walk() if isinstance(op, sm90.WgmmaOp | sm90.WgmmaWaitOp)]
    pairs = [(a, b, c) for a, b, c in zip(ops, ops[1:], ops[2:])
             if isinstance(a, sm90.WgmmaOp) and isinstance(b, sm90.WgmmaOp) and isinstance(c, sm90.WgmmaWaitOp)]
    assert any(SCHEDULED in b.attributes and c.acc is a.result and c.pending.value.data == 1 for a, b, c in pairs)


def test_off_without_the_pin() -> None:
    kernel = _sm90("attention_bwd.tk", "attn_bwd_dq", {})
    assert sm90.SCHEDULE_WGMMA not in kernel.attributes
    assert not any(SCHEDULED in op.attributes for op in kernel.walk())


@pytest.mark.parametrize("file,kernel", KERNELS)
def test_scheduled_kernels_assemble_clean(file: str, kernel: str | None) -> None:
    try:
        find_tool("ptxas")
    except ToolNotFound:
        pytest.skip("ptxas is not installed")
    ctx = make_context()
    params = PIN | SPILLS_AT_DEFAULTS.get(kernel or "", {})
    module = compile_module(load_module(EXAMPLES / file, kernel, params, ctx), "ptx", ctx=ctx)
    report = assemble(print_ptx(module)).report
    assert report.clean, report.log
