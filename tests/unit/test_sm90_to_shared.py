"""`tile.to_shared` without a GPU: a register tile stored by `sm90.store_fragment` must be the
matrix a wgmma descriptor reads (hopper-ptx.md §4 canonical layouts, run on the one-warpgroup
simulator of test_sm90_to_ptx), the lowering must sync every consumer around the write, and
its shared buffer must sit where plan.smem_plan put it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from test_sm90_to_ptx import (
    BF16,
    F32,
    const,
    decode,
    kernel,
    lower,
    physical,
    simulate,
    write_tile,
)
from tkc.backends.ptx_printer import print_ptx
from tkc.backends.ptxas import ToolNotFound, assemble, find_tool
from tkc.dialects import sm90, tile
from tkc.passes.tile_to_sm90.lowering import KernelLowering
from tkc.passes.plan import WARPGROUP_THREADS, smem_plan
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from tkc.driver import compile_module
from tkc.frontend import parse_tk, read_source

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "linear_attention.tk"
Emit = Callable[[Operation], SSAValue]


def read_operand(memory: dict[int, float], desc: int, k_major: bool, extent: int) -> np.ndarray:
    """The 16 x `extent` (K x MN) bf16 slice one k16 wgmma step reads through `desc`: the canonical
    swizzled layouts of §4, with the swizzle XOR applied to the absolute address."""
    start, lbo, sbo, layout = decode(desc)
    span = {1: 128, 2: 64, 3: 32}[layout]
    out = np.full((16, extent), np.nan)
    for k in range(16):
        for mn in range(extent):
            if k_major:
                addr = start + (mn // 8) * sbo + (mn % 8) * span + 2 * k
            else:
                addr = start + (mn // (span // 2)) * lbo + (k // 8) * sbo + (k % 8) * span + 2 * (mn % (span // 2))
            out[k, mn] = memory.get(physical(addr, span), np.nan)
    return out


def wgmma_operands(
    memory: dict[int, float], calls: list, m: int, n: int, transpose_a: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(A as M x K, B as K x N) as the recorded wgmma calls (one per k16 step) read them."""
    a = np.concatenate([read_operand(memory, args[n // 2], not transpose_a, m) for args in calls]).T
    b = np.concatenate([read_operand(memory, args[n // 2 + 1], False, n) for args in calls])
    return a, b


@pytest.mark.parametrize("rows,cols", [(64, 64), (128, 128), (128, 64)])
def test_fragments_stored_by_every_consumer_are_the_b_operand(rows: int, cols: int) -> None:
    """Each consumer's 64 rows of an f32 tile, converted to bf16 and stored into one shared tile
    (128B swizzle, 64-column panels) as _emit_to_shared does, read back as the whole MN-major B
    of a wgmma (mma_AB(q, bf16(state))), and as an MN-major A (trans-a) from each consumer's
    columns, as mma_AtB(k, v) reads k."""
    rng = np.random.default_rng(rows + cols)
    x = rng.integers(-64, 64, (rows, cols)).astype(np.float64)
    src_ref = sm90.SharedRefType([rows, cols], F32, 128)
    b_ref = sm90.SharedRefType([rows, cols], BF16, 128)
    a_ref = sm90.SharedRefType([64, rows], BF16, 128)
    src_base, b_base, a_base = 0, 1 << 17, 3 << 16  # below 256 KB: descriptors hold 14 bits of addr >> 4

    def body(emit: Emit, base: SSAValue) -> None:
        src = emit(sm90.SmemViewOp(base, src_ref))
        b = emit(sm90.SmemViewOp(emit(arith.AddiOp(base, const(emit, b_base))), b_ref))
        a = emit(sm90.SmemViewOp(emit(arith.AddiOp(base, const(emit, a_base))), a_ref))
        for row0 in range(0, rows, 64):  # the consumers, one after the other
            offset = const(emit, row0)
            state = emit(sm90.LoadFragmentOp(src, offset, sm90.FragmentType([64, cols], F32)))
            packed = emit(sm90.ConvertOp(state, sm90.FragmentType([64, cols], BF16)))
            emit(sm90.StoreFragmentOp(packed, b, offset))
        mma = emit(sm90.WgmmaOp(a, b, None, sm90.FragmentType([64, cols], F32), False, False, const(emit, 0)))
        emit(sm90.WgmmaWaitOp(mma, 0))
        for col0 in range(0, cols, 64):
            mma = emit(sm90.WgmmaOp(b, b, None, sm90.FragmentType([64, cols], F32), True, False, const(emit, col0)))
            emit(sm90.WgmmaWaitOp(mma, 0))

    memory: dict[int, float] = {}
    write_tile(memory, src_base, src_ref, x)
    aq = rng.integers(-4, 4, (64, rows)).astype(np.float64)
    write_tile(memory, a_base, a_ref, aq)
    calls = simulate(lower(kernel(body)), memory)[0]["wgmma"]
    steps = rows // 16
    assert len(calls) == steps * (1 + cols // 64)  # type: ignore[arg-type]
    a, b = wgmma_operands(memory, calls[:steps], 64, cols, False)  # type: ignore[index]
    np.testing.assert_array_equal(b, x)
    np.testing.assert_array_equal(a @ b, aq @ x)
    for c in range(cols // 64):
        at, b = wgmma_operands(memory, calls[steps * (c + 1): steps * (c + 2)], 64, cols, True)  # type: ignore[index]
        np.testing.assert_array_equal(at, x[:, 64 * c: 64 * c + 64].T)
        np.testing.assert_array_equal(b, x)


def sm90_of(params: dict[str, int]) -> tuple[ModuleOp, ModuleOp]:
    """linear_attention after the tile passes, and after convert-tile-to-sm90."""
    source = read_source(str(EXAMPLE))
    planned = compile_module(parse_tk(source, str(EXAMPLE), params))
    lowered = compile_module(parse_tk(source, str(EXAMPLE), params), "sm90")
    return planned, lowered


def constant(value: SSAValue) -> int:
    owner = value.owner
    assert isinstance(owner, arith.ConstantOp)
    return owner.value.value.data  # type: ignore[attr-defined]


@pytest.mark.parametrize("params", [{}, {"BC": 128, "D": 128}], ids=["64", "128"])
def test_linear_attention_syncs_consumers_around_the_write(params: dict[str, int]) -> None:
    """barrier, store_fragment, fence.proxy.async, barrier (all consumers, an id the epilogue does
    not use), then the wgmma reading the tile; every wgmma reading it is waited on at once, so
    the next iteration's first barrier finds the old contents read."""
    planned, lowered = sm90_of(params)
    (kernel_op,) = [op for op in planned.walk() if isinstance(op, tile.KernelOp)]
    consumers = KernelLowering.of(kernel_op).consumers
    (store,) = [
        op
        for op in lowered.walk()
        if isinstance(op, sm90.StoreFragmentOp) and any(isinstance(use.operation, sm90.WgmmaOp) for use in op.dst.uses)
    ]
    before, fence, after = store.prev_op, store.next_op, store.next_op.next_op  # type: ignore[union-attr]
    assert isinstance(before, sm90.NamedBarrierOp) and isinstance(after, sm90.NamedBarrierOp)
    assert isinstance(fence, sm90.FenceProxyAsyncOp)
    for barrier in (before, after):
        assert constant(barrier.barrier_id) == consumers + 1
        assert barrier.threads.value.data == WARPGROUP_THREADS * consumers
    readers = [use.operation for use in store.dst.uses if isinstance(use.operation, sm90.WgmmaOp)]
    assert readers and all(r.parent_block() is store.parent_block() for r in readers)
    ops = list(store.parent_block().ops)  # type: ignore[union-attr]
    for reader in readers:
        assert ops.index(reader) > ops.index(after)
        wait = reader.next_op
        assert isinstance(wait, sm90.WgmmaWaitOp) and wait.acc is reader.result and wait.pending.value.data == 0


@pytest.mark.parametrize("params", [{}, {"BC": 128, "D": 128}], ids=["64", "128"])
def test_to_shared_buffer_sits_where_the_plan_put_it(params: dict[str, int]) -> None:
    planned, _ = sm90_of(params)
    (kernel_op,) = [op for op in planned.walk() if isinstance(op, tile.KernelOp)]
    lowering = KernelLowering.of(kernel_op)
    plan = smem_plan(kernel_op, lowering.plan.stages)
    single = dict(plan.single)
    assert lowering.memory.shared and all(single[op] == buffer.offset for op, buffer in lowering.memory.shared.items())
    assert [ring.base for ring in lowering.memory.rings] == [ring.offset for ring in plan.rings]
    assert [s.offset for s in lowering.memory.staging.values()] == [offset for _, offset in plan.staging]
    assert lowering.memory.smem_bytes == plan.total


@pytest.mark.parametrize("params", [{}, {"BC": 128, "D": 128}], ids=["64", "128"])
def test_linear_attention_assembles_clean(params: dict[str, int]) -> None:
    """No spills, and no setmaxnreg or wgmma-serialisation infos (C7508/C7517/C7519)."""
    try:
        find_tool("ptxas")
    except ToolNotFound:
        pytest.skip("ptxas not installed")
    module = compile_module(parse_tk(read_source(str(EXAMPLE)), str(EXAMPLE), params), "ptx")
    report = assemble(print_ptx(module)).report
    assert report.clean and not report.perf_infos, report.log
    assert report.spill_stores == report.spill_loads == 0


HOISTED = """
kernel hoist(A: gl<bf16>[M, 64], B: gl<bf16>[64, 64], C: gl<bf16>[M, 64]) {
    grid (M / 64) as (i)
    let a = load A[i, 0] : st<bf16>[64, 64]
    let w = bf16(exp(f32(load B[0, 0] : rt<bf16>[64, 64])))
    let b = load B[0, 0] : st<bf16>[64, 64]
    store C[i, 0] = bf16(mma_AB(a, w, mma_AB(a, b)))
}
"""


def test_hoisted_loads_and_to_shared_tiles_share_the_single_region() -> None:
    """The one-stage ring of kernel-level loads and a kernel-level to_shared tile: each where
    smem_plan puts it (program order after the mbarriers), and so the staging too."""
    module = compile_module(parse_tk(HOISTED, "hoist.tk"))
    (kernel_op,) = [op for op in module.walk() if isinstance(op, tile.KernelOp)]
    lowering = KernelLowering.of(kernel_op)
    plan = smem_plan(kernel_op, lowering.plan.stages)
    (ring,) = lowering.memory.rings
    placed = {op: ring.base + buffer.offset for op, buffer in ring.buffers.items()}
    placed |= {op: buffer.offset for op, buffer in lowering.memory.shared.items()}
    assert len(placed) == 3 and placed == dict(plan.single)
    assert [s.offset for s in lowering.memory.staging.values()] == [offset for _, offset in plan.staging]
    assert lowering.memory.smem_bytes == plan.total
