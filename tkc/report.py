"""`tkc report`: what the tile passes decided for each kernel, and why.

`report(module)` reads the IR after the tile passes (tile-mask-tails, tile-swizzle-select,
tile-bank-conflicts, tile-occupancy-plan, tile-pipeline) and prints, per kernel, the masks of
tiles past the end of a tensor and the dims that must be whole tiles, the plan (threads, warpgroup roles,
registers per role, shared memory per stage and in all, stages, CTAs per SM, grid and tile
order) and the bank table: every shared-memory access, its layout, its conflict ways and the
reason. Every line quotes the `#tile.decision` reasons (the plan's as KernelPlan.of reads them),
so the report never re-derives a decision. With a context it also lowers the kernel: how a
cluster's CTAs split the tiles they multicast (the lowering's decision, quoted from the sm90
IR), and what ptxas makes of the PTX.
"""

from __future__ import annotations

from typing import cast

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue

from tkc.abi import ONE_CTA_FROM_TILES, TensorMapParam
from tkc.diagnostics import line_label
from tkc.dialects.tile import (
    BoundsMaskOp,
    DecisionAttr,
    FenceOp,
    GridOp,
    KernelOp,
    LoadOp,
    MmaOp,
    RegisterVectorType,
    RequireOp,
    SharedTileType,
    SharedVectorType,
    StoreOp,
    ToRegOp,
    ToSharedOp,
    REALIGNED,
    ZERO_PAST_END,
    element_name,
    required_multiples,
)
from tkc.passes.plan import KernelPlan, tile_ring_stages, value_name
from tkc.passes.shared_tiles import buffer_rows


def _decision(op: Operation, name: str) -> DecisionAttr | None:
    attr = op.attributes.get(name)
    return attr if isinstance(attr, DecisionAttr) else None


def _why(op: Operation, name: str) -> str:
    decision = _decision(op, name)
    return decision.reason.data if decision is not None else "not planned"


def _int(op: Operation, name: str) -> int | None:
    attr = op.attributes.get(name)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def _shape(type_: object) -> str:
    if isinstance(type_, SharedTileType):
        return f"{type_.rows}x{type_.cols}x{element_name(type_.element_type)}"
    if isinstance(type_, SharedVectorType):
        return f"{type_.length}x{element_name(type_.element_type)}"
    return str(type_)


def _layout(type_: object, op: Operation | None = None) -> str:
    if not isinstance(type_, SharedTileType):
        return "linear"
    pad = _int(op, "pad") if op is not None else None
    if type_.swizzle.data > 0:
        return f"{type_.swizzle.data}B swizzle"
    return f"no swizzle, +{pad} B/row" if pad else "no swizzle"


def _plan_lines(kernel: KernelOp) -> list[str]:
    plan = KernelPlan.of(kernel)

    def why(name: str) -> str:
        return plan.reasons.get(name, "not planned")

    grid = next(op for op in kernel.body.block.ops if isinstance(op, GridOp))
    names = ", ".join(n.data for n in grid.names.data)
    consumers = f"1-{plan.consumers}" if plan.consumers > 1 else "1"
    rows = [
        ("threads", str(plan.threads), why("threads")),
        ("warpgroups", f"0 producer, {consumers} consumer", why("consumers")),
        ("registers", f"{plan.producer_registers} / {plan.consumer_registers}", why("consumer_registers")),
    ]
    if plan.replicated_rows:
        rows.insert(2, ("replicated", f"rows <= {plan.replicated_rows}", why("replicated_rows")))
    if "band" in plan.reasons:
        rows.insert(3, ("layout", "band" if plan.band else "wgmma", why("band")))
    columns = _decision(kernel, "column_vectors")
    if columns is not None:
        rows.append(("vectors", f"{columns.int_value} per column", columns.reason.data))
    for owner in kernel.walk():  # the ring of each loop and if that loads
        if isinstance(owner, scf.ForOp | scf.IfOp) and _decision(owner, "pipeline") is not None:
            rows.append(("smem/stage", f"{_int(owner, 'stage_bytes')} B", _why(owner, "pipeline")))
    if "stages" in plan.reasons:
        rows.append(("stages", str(plan.stages), why("stages")))
    rows += [
        ("smem total", f"{plan.smem_bytes} B", why("smem_bytes")),
        ("CTAs/SM", str(plan.ctas_per_sm), why("ctas_per_sm")),
        ("grid", f"persistent over ({names})" if plan.persistent else f"({names})", why("persistent")),
    ]
    heavy = grid.names.data[plan.heavy_first].data if plan.heavy_first >= 0 else None
    table = grid.names.data[plan.table_first].data if plan.table_first >= 0 else None
    if heavy is not None and plan.persistent:
        rows.append(("tile order", f"{heavy} slowest, reversed", why("heavy_first")))
        if not why("persistent").startswith("pinned"):
            rows.append(("variant", f"one CTA per tile from {ONE_CTA_FROM_TILES} {heavy}",
                         f"tkc.compile also builds this kernel with @persistent(0) and launches it where the grid holds "
                         f"{ONE_CTA_FROM_TILES} or more tiles along {heavy}: the walk's CTAs would hold as many heads' "
                         f"keys at once, which stop sharing L2 as sequences grow, where one CTA per tile launched "
                         f"heavy-first runs one head's tiles together"))
    elif table is not None:
        rows.append(("tile order", f"{table} slowest, in table order", why("table_first")))
    else:
        rows.append(("tile order", f"group_m = {plan.group_m}", why("group_m")))
    if "stream_k" in plan.reasons:
        rows.append(("work split", "stream-K last wave" if plan.stream_k else "whole tiles", why("stream_k")))
    if "fma_exp2" in plan.reasons:
        rows.append(("exp2", f"1 in {plan.fma_exp2} on FMA" if plan.fma_exp2 else "MUFU", why("fma_exp2")))
    if "whole_staging" in plan.reasons:
        rows.append(("staging", "whole tiles" if plan.whole_staging else "2 chunk buffers", why("whole_staging")))
    if "shared_staging" in plan.reasons:
        rows.append(("staging at", "one region for all stores" if plan.shared_staging else "a region per store",
                     why("shared_staging")))
    if "schedule_wgmma" in plan.reasons:
        rows.append(("wgmma", "issued early, waited late" if plan.schedule_wgmma else "waited at issue",
                     why("schedule_wgmma")))
    if "cluster" in plan.reasons:
        rows.append(("cluster", f"{plan.cluster} CTAs", why("cluster")))
    if heavy is not None and not plan.persistent:
        rows.append(("launch", f"{heavy} reversed", why("heavy_first")))
    elif plan.heavy_first < 0 and "heavy_first" in plan.reasons:
        rows.append(("launch" if not plan.persistent else "heavy-first", "off", why("heavy_first")))
    if "dependent_launch" in plan.reasons:
        rows.append(("dependency", "programmatic" if plan.dependent_launch else "stream order",
                     why("dependent_launch")))
    if (unsplit := _decision(kernel, "split_ring")) is not None:
        rows.append(("split ring", "off", unsplit.reason.data))
    for loop in kernel.walk():
        if isinstance(loop, scf.ForOp) and _decision(loop, "overlap") is not None:
            rows.append(("overlap", "late last mma" if KernelPlan.overlaps(loop) else "off", _why(loop, "overlap")))
        if isinstance(loop, scf.ForOp) and _decision(loop, "turns") is not None:
            rows.append(("turns", "consumers take turns" if KernelPlan.takes_turns(loop) else "off", _why(loop, "turns")))
        if isinstance(loop, scf.ForOp) and (sweep := _decision(loop, "sweep")) is not None:
            rows.append(("sweep", "backwards" if sweep.int_value else "forwards", sweep.reason.data))
        if isinstance(loop, scf.ForOp) and (kept := _decision(loop, "retain")) is not None:
            rows.append(("retain", f"{kept.int_value} tiles" if kept.int_value else "none", kept.reason.data))
        if isinstance(loop, scf.ForOp) and _decision(loop, "split_ring") is not None:
            rows.append(("split ring", "head / late tail" if KernelPlan.splits_ring(loop) else "off", _why(loop, "split_ring")))
    width = max(len(v) for _, v, _ in rows)
    return [f"  {k:<11} {v:<{width}}  {why}" for k, v, why in rows]


def _bank_rows(kernel: KernelOp) -> list[tuple[str, str, str, str]]:
    """(access, layout, ways, why) for every shared access, in program order."""
    rows: list[tuple[str, str, str, str]] = []
    for op in kernel.walk():
        if isinstance(op, LoadOp):
            t = op.result.type
            rows.append((
                f"TMA load {value_name(op.result)} {_shape(t)}",
                _layout(t, op),
                "1",
                "TMA writes whole rows of the swizzle pattern: conflict-free by construction",
            ))
        elif isinstance(op, MmaOp):
            for operand, desc in ((op.a, "a_desc"), (op.b, "b_desc")):
                if isinstance(operand.type, SharedTileType):
                    rows.append((
                        f"wgmma reads {value_name(operand)}",
                        _layout(operand.type),
                        "1",
                        f"descriptor {_why(op, desc)}; conflict-free by construction",
                    ))
        elif isinstance(op, StoreOp) and isinstance(op.value.type, RegisterVectorType):
            rows.append((
                f"store {value_name(op.tensor)}",
                "global",
                "-",
                ("a column vector goes straight to global memory from the first consumer, which holds it "
                 "whole: no shared access" if op.value.type.is_column else
                 "a row vector goes straight to global memory (one lane per quad): no shared access"),
            ))
        elif isinstance(op, ToRegOp | ToSharedOp | StoreOp) and "bank_conflicts" in op.attributes:
            access = op.attributes["smem_access"]
            instruction = access.data if isinstance(access, StringAttr) else str(access)
            if isinstance(op, StoreOp):
                staging = _decision(op, "staging")
                layout = f"{staging.int_value}B swizzle" if staging and staging.int_value else "linear"
                tma = "TMA store" if op.reduce is None else "TMA reduce-add"
                what = f"{instruction} -> staging, {tma} {value_name(op.tensor)}"
            elif isinstance(op, ToRegOp):
                owner = op.source.owner
                layout = _layout(op.source.type, owner if isinstance(owner, Operation) else None)
                what = f"{instruction} {value_name(op.source)}"
            else:
                layout, what = _layout(op.result.type, op), f"{instruction} -> {value_name(op.result)}"
            decision = _decision(op, "bank_conflicts")
            assert decision is not None
            rows.append((what, layout, str(decision.int_value), decision.reason.data))
    return rows


def _tail_lines(kernel: KernelOp) -> list[str]:
    """tile-mask-tails: each mask it inserted and each dim it needs in whole tiles, with why."""
    lines = []
    for op in kernel.walk():
        reason = op.attributes.get("tails")
        if isinstance(op, BoundsMaskOp) and isinstance(reason, StringAttr):
            lines.append(f"  mask {value_name(op.source)} past the end, fill {op.fill.value.data:g}: {reason.data}")
        zero = op.attributes.get(ZERO_PAST_END)
        if isinstance(op, LoadOp) and isinstance(zero, DecisionAttr):
            lines.append(f"  zero the rows of {value_name(op.result)} past its range's end in shared memory: {zero.reason.data}")
    if "tail_masks" in kernel.attributes:
        lines.append("  variant: tkc.compile also builds this kernel with @whole_tiles (no masks of tiles at tile "
                     "coordinates) and launches it where every masked dim is a whole number of tiles")
    whole = kernel.attributes.get("whole_tiles")
    if isinstance(whole, DictionaryAttr):
        for dim, decision in whole.data.items():
            if isinstance(decision, DecisionAttr):
                lines.append(f"  {dim} must be a multiple of {decision.int_value}: {decision.reason.data}")
    for dim, multiple in sorted(required_multiples(kernel).items()):
        lines.append(f"  {dim} is a multiple of {multiple} (the kernel requires it): tiles whose extent divides "
                     f"{multiple} end at {dim}, unmasked")
    return lines or ["  none: every tile past the end of a tensor reads zeros where they are exact"]


def _memory_order_lines(kernel: KernelOp) -> list[str]:
    """tile-memory-order: each fence with the accesses it orders, and each access of a tensor the
    kernel also stores that needs none, with why."""
    lines = []
    for op in kernel.walk():
        at = line_label(op)
        if isinstance(op, FenceOp):
            lines.append(f"  fence at {at}: {op.reason.data}")
            continue
        decision = _decision(op, "memory_order")
        if isinstance(op, LoadOp | StoreOp) and decision is not None and not decision.int_value:
            what = "load" if isinstance(op, LoadOp) else op.statement
            name = kernel.arg_names[kernel.body.block.args.index(op.tensor)]
            lines.append(f"  {what} {name} at {at}: no fence, {decision.reason.data}")
    return lines


def report(module: ModuleOp, ctx: Context | None = None) -> str:
    """The decisions the tile passes recorded on each kernel of `module` (tile IR after the tile
    passes); with `ctx`, then what ptxas makes of it (`ptxas_lines`: the rest of the pipeline runs
    on `module`)."""
    out: list[str] = []
    for kernel in module.walk():
        if not isinstance(kernel, KernelOp):
            continue
        out.append(f"kernel {kernel.sym_name.data}")
        if requirements := [op for op in kernel.body.block.ops if isinstance(op, RequireOp)]:
            out.append("requires (checked from the arguments' shapes before each launch)")
            out += [f"  {op.text.data}  at {line_label(op)}" for op in requirements]
        out.append("tails")
        out += _tail_lines(kernel)
        out.append("plan")
        out += _plan_lines(kernel)
        if memory := _memory_order_lines(kernel):
            out.append("memory order (a load after a store of the same tensor sees what it stored)")
            out += memory
        out.append("shared tiles")
        plan = KernelPlan.of(kernel)
        tile_stages = tile_ring_stages(kernel, plan.stages) if plan.smem_bytes else 1
        for op in kernel.walk():
            if isinstance(op, LoadOp | ToSharedOp) and isinstance(op.result.type, SharedTileType):
                offset = _int(op, "smem_offset")
                where = f"@{offset}" if offset is not None else f"stage +{_int(op, 'stage_offset')}"
                if offset is not None and isinstance(op, LoadOp) and tile_stages > 1:
                    where += f" in the first of {tile_stages} stages of each tile's loads (the next tile's in flight)"
                buffer, tile_rows = buffer_rows(op), op.result.type.rows
                padded = (f"; a {buffer}-row buffer: a wgmma reads {buffer} rows of its A, the rows past {tile_rows} "
                          f"only reaching the product's padding" if buffer > tile_rows else "")
                out.append(
                    f"  {value_name(op.result)} {_shape(op.result.type)}  {_layout(op.result.type, op)}, "
                    f"align {_int(op, 'smem_align')}, {where}  {_why(op, 'swizzle')}{padded}"
                )
            realigned = op.attributes.get(REALIGNED)
            if isinstance(op, LoadOp) and isinstance(realigned, DecisionAttr):
                out.append(f"  {value_name(op.result)} {_shape(op.result.type)}  box from up to {realigned.int_value} "
                           f"elements before its start: {realigned.reason.data}")
        out.append("shared accesses (32 banks x 4 B; ways = wavefronts / ideal of the worst instruction)")
        rows = _bank_rows(kernel)
        widths = [max(len(r[i]) for r in rows) for i in range(3)] if rows else [0, 0, 0]
        for access, layout, ways, why in rows:
            ways = f"{ways}-way" if ways != "-" else ""
            out.append(f"  {access:<{widths[0]}}  {layout:<{widths[1]}}  {ways:>{widths[2] + 4}}  {why}")
        out.append("")
    if ctx is not None:
        out += cluster_lines(module, ctx)
        out += ptxas_lines(module, ctx)
    return "\n".join(out)


def cluster_lines(module: ModuleOp, ctx: Context) -> list[str]:
    """How each kernel whose CTAs form clusters splits the tiles it multicasts: the lowering
    decides it (convert-tile-to-sm90 records it on each multicast TMA load), so a copy of
    `module` is lowered to sm90 to read it."""
    from tkc.dialects import sm90
    from tkc.driver import compile_module
    from tkc.passes.tile_to_sm90.tma import CLUSTER_SHARE

    if all(KernelPlan.of(k).cluster == 1 for k in module.walk() if isinstance(k, KernelOp)):
        return []
    lines: list[str] = []
    for kernel in compile_module(module.clone(), "sm90", ctx=ctx).walk():
        if not isinstance(kernel, sm90.KernelOp) or kernel.cluster is None:
            continue
        args = {p.name: p.arg for p in kernel.kernel_abi().params if isinstance(p, TensorMapParam)}
        shares: dict[tuple[str, str], str] = {}
        for load in kernel.walk():
            share = load.attributes.get(CLUSTER_SHARE)
            if isinstance(load, sm90.TmaLoadOp) and isinstance(share, StringAttr):
                param = cast(sm90.TensorMapParamOp, load.tensor_map.owner).param.data
                shares.setdefault((args[param], line_label(load)), share.data)
        lines.append(f"cluster sharing of kernel {kernel.sym_name.data} (TMA multicast, as convert-tile-to-sm90 splits it)")
        lines += [f"  {arg} at {where}: {share}" for (arg, where), share in shares.items()]
    return lines + [""] if lines else []


def ptxas_lines(module: ModuleOp, ctx: Context) -> list[str]:
    """What ptxas makes of the kernel: registers per thread at entry, spills, and the infos that
    mean lost performance (a plan whose register model missed shows here first); a line saying
    why not where ptxas is not installed."""
    from tkc.backends.ptx_printer import print_ptx
    from tkc.backends.ptxas import PERF_INFO_CODES, ToolNotFound, assemble
    from tkc.driver import compile_module

    try:
        report = assemble(print_ptx(compile_module(module, "ptx", ctx=ctx))).report
    except ToolNotFound:
        return ["ptxas", "  not installed (the `cuda` extra brings it): registers and spills unknown"]
    spilled = report.spill_stores or report.spill_loads or report.stack_frame
    infos = dict.fromkeys(report.perf_infos)
    return [
        "ptxas",
        f"  registers   {report.registers} per thread at entry (setmaxnreg then moves them between the roles)",
        "  spills      " + (f"{report.spill_stores} B stored, {report.spill_loads} B loaded, {report.stack_frame} B stack"
                            if spilled else "none"),
        "  losses      " + ("; ".join(f"{code}: {PERF_INFO_CODES[code]}" for code in infos) if infos else "none"),
    ]
