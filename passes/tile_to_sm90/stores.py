"""Stores of register tiles and vectors, and register tiles moved to shared memory.

- **Epilogue.** Each consumer stages its rows of an output tile one swizzle panel of columns at
  a time (64 bf16 columns: a 64x64 chunk) through chunk buffers of its own, and one of its
  threads stores each chunk with TMA while the others write the next; where the plan gives
  every chunk a buffer (@whole_staging), the consumer writes them all between one pair of syncs
  and stores them as one bulk group. Two small buffers per
  consumer instead of a whole output tile is what leaves room for a deep input ring. Consumers
  sync only their own warpgroup (named barrier 1 + consumer). A store waits for the TMA reads of
  a buffer only just before it rewrites the buffer: before its first chunk, until every store
  the consumer issued has read its staging (an earlier run of the same store in a loop may have
  left its last chunk in either buffer, whatever the parity of its chunk count); before a later
  chunk, until the store `buffers` chunks back has. So the last reads of a store in a loop
  (a state kernel writing one small tile per iteration) run under the next iteration's work
  rather than on its path, and the consumers wait for all of them once before they exit (the
  block's shared memory must outlive its reads). Staging in the bytes of the kernel-level loads
  (attention's Q) first meets all consumers, past their last wgmma, and is read whole before
  the store ends: the next tile's loads write those bytes.
  A tile every consumer holds whole (the plan's replicated_rows) is stored by the first alone.
- **store_add** (`tile.store reduce add`) takes the same path, each box a TMA reduce-add
  (`sm90.tma_store reduce add`, of the tensor map's f32 or bf16 elements): the staging, its
  reuse, the one-row boxes before an element range's end (TMA clips only at the tensor's end, so
  nothing past `end` is added; each row starts on a 128-byte line of the staging chunk, as TMA
  needs, which tile-bank-conflicts' staging layout guarantees) and the first consumer's store of a replicated tile (which keeps
  the sum from doubling) are the store's. A vector store_add adds each f32 element with
  red.global.add.f32 where a store would st.global it (the same writers, so a replicated or
  column vector is added once); other dtypes are refused.
- **Vectors** are stored element-wise through a pointer: a row vector by every consumer (its
  rows), a column vector or replicated row vector, which every consumer holds whole, by the first. Each store is limited
  to the elements before the end of the tensor's last dim (dim - coord * extent, less the
  consumer's first row for a row vector; 0 where a leading coordinate is past its dim; the
  start is the coordinate itself along an `elem` axis, and an element range's end bounds it as
  the dim does), as TMA clips a tile's: a vector may run past the end. A row vector of fewer than 64 rows stores no
  more than its rows (its fragment's rows past them are padding), as a staged tile's chunk and a
  tile.to_shared buffer have the tile's own rows, which sm90.store_fragment fills.
- **tile.to_shared** (a register tile as a wgmma operand, e.g. bf16(state) as B): wgmma reads B
  only from shared memory, so every consumer writes its rows into the tile's one buffer that
  each consumer's wgmma then reads whole (the first consumer writes a tile every consumer holds
  whole). All consumers sync before the write (the wgmmas reading the previous contents are
  waited on) and after it (each writer's proxy fence first), on named barrier consumers + 1;
  1..consumers are the epilogue's.
- **tile.retain / tile.recall** (tile-retain-sweep) write a register tile into a slot of its
  retention buffer (`smem_offset` + slot x the slot's bytes, in the layout of the load it
  stands for) and read it back: sm90.store_fragment and sm90.load_fragment of the same fragment
  layout, so each thread reads only what it wrote, in program order, and no barrier is needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import Float32Type, IndexType
from xdsl.ir import Block, Region, SSAValue

from tkc.diagnostics import defect_at, error_at
from tkc.dialects import sm90, tile
from tkc.dialects.tile import TMA_SMEM_ALIGN
from tkc.passes.plan import WARPGROUP_THREADS, may_start_before, retention_slot_bytes
from tkc.passes.signs import never_negative
from tkc.passes.tile_to_sm90.shared_memory import Staging, offset_of, swizzle_of
from tkc.passes.tile_to_sm90.tma import box, element_coords

if TYPE_CHECKING:
    from tkc.passes.tile_to_sm90.consumer import ConsumerEmitter


def _all_consumers_meet(c: ConsumerEmitter, block: Block) -> None:
    consumers = c.lowering.consumers
    c.op(sm90.NamedBarrierOp(c.const(consumers + 1, block), WARPGROUP_THREADS * consumers), block)


def emit_store(c: ConsumerEmitter, op: tile.StoreOp, block: Block) -> None:
    value_type = op.value.type
    tensor_type = cast(tile.GlobalType, op.tensor.type)
    coords = [c.values[v] for v in op.coords]
    if isinstance(value_type, tile.RegisterVectorType):
        if op.reduce is not None and not isinstance(value_type.element_type, Float32Type):
            raise error_at(op, f"the GPU backend adds f32 vectors only (red.global.add.f32), not "
                               f"{tile.element_name(value_type.element_type)}: add them in f32, or as a tile")
        _emit_vector_store(c, op, tensor_type, coords, block)
        return
    if not isinstance(value_type, tile.RegisterTileType):
        raise error_at(op, "the GPU backend stores register tiles and vectors; load shared tiles into registers first")
    if tensor_type.rank - 1 in tile.element_ends(op):
        # TMA clips a box only at the tensor's end; rows stop at an element range's end through
        # one-row boxes, but no box is narrower than the tile
        raise error_at(op, "the GPU backend ends a stored tile's rows at an element range's end, not its columns "
                           "(TMA clips a box only at the tensor's end): give the column coordinate without an end "
                           "(tkc run --interpret runs it as written)")
    # a TMA store box at a negative coordinate stops the kernel (TMA clips a store only at a
    # tensor's end): its rows are stored from row 0 on (_emit_staged_store), but a column before
    # the first or a leading index below 0 is an error of the language (the interpreter reports
    # it), so the kernel stops here by that rule rather than by the fault
    for axis in [*range(tensor_type.rank - 2), tensor_type.rank - 1]:
        if not never_negative(op.coords[axis]):
            c.trap_if(c.op(arith.CmpiOp(coords[axis], c.const(0, block), "slt"), block).results[0], block)
    staging = c.memory.staging[op]
    if staging.reuses_single_tiles:
        _all_consumers_meet(c, block)
    with c.writer_of(value_type, block) as writer:
        _emit_staged_store(c, op, staging, tensor_type, coords, writer)


def _emit_staged_store(c: ConsumerEmitter, op: tile.StoreOp, staging: Staging, tensor_type: tile.GlobalType,
                       coords: list[SSAValue], block: Block) -> None:
    value_type = cast(tile.RegisterTileType, op.value.type)
    chunk_rows, chunk_cols = staging.chunk.get_shape()
    base = c.add(
        c.add(c.smem_base, c.const(staging.offset, block), block),
        c.mul(c.consumer_index, c.const(staging.consumer_stride, block), block),
        block,
    )
    barrier_id = c.add(c.consumer_index, c.const(1, block), block)
    consumers = c.lowering.consumers
    # where the consumers split a tile of padded rows, the last one's chunk ends in padding rows
    # (plan.fragment_rows), which its box leaves out; a replicated tile's chunk has its own rows
    last_rows = chunk_rows if c.lowering.replicated(value_type.rows) else (
        value_type.rows - (consumers - 1) * chunk_rows)
    boxes = {rows: c.lowering.params.tensor_map(op.tensor, box(staging.chunk, tensor_type.rank, rows),
                                                staging.chunk.swizzle.data)
             for rows in dict.fromkeys([last_rows if consumers == 1 else chunk_rows, last_rows])}
    element = element_coords(c, op, coords, block)
    # TMA faults on a store box at a negative coordinate (it clips only at a tensor's end), so
    # a tile whose rows may start before the tensor's first (elem(t * BT - 3)) is stored from
    # row 0 on
    before = may_start_before(op)
    element[1] = c.add(element[1], c.row0(value_type), block)
    zero = c.const(0, block)
    end = tile.element_ends(op).get(tensor_type.rank - 2)
    row_bytes = chunk_cols * tile.element_bytes(value_type.element_type)
    if (end is not None or before) and row_bytes % TMA_SMEM_ALIGN:
        where = "of a tile that may start before row 0 (a row coordinate not provably at least 0)" if end is None \
            else "before the end of its range (elem(x, end), or where the rows of the tile its value was computed from end)"
        tile_bytes = value_type.cols * tile.element_bytes(value_type.element_type)
        staged = f"its rows are {tile_bytes} bytes" if tile_bytes < TMA_SMEM_ALIGN else \
            f"it is staged in rows of {row_bytes} bytes"
        hint = "; where the start is never negative, say so with max(start, 0)" if end is None else ""
        raise error_at(op, f"the GPU backend stores the rows {where} one TMA box each, which starts on a "
                           f"{TMA_SMEM_ALIGN}-byte line of shared memory, and {staged}: store tiles whose rows are a "
                           f"multiple of {TMA_SMEM_ALIGN} bytes (32 f32 or 64 bf16 columns) there{hint} "
                           "(tkc run --interpret runs it as written)")
    row_map = None if end is None and not before else c.lowering.params.tensor_map(
        op.tensor, box(staging.chunk, tensor_type.rank, 1), staging.chunk.swizzle.data
    )
    chunks = value_type.cols // chunk_cols

    def store_chunk(chunk: int, addr: SSAValue, inner: Block) -> None:
        """The issuing thread's TMA store of the staged chunk at `addr`."""
        def store_box(rows: int, name: str, into: Block) -> None:
            tmap = c.op(sm90.TensorMapParamOp(name), into).results[0]
            column = c.add(element[0], c.const(chunk * chunk_cols, into), into)
            if row_map is None:
                c.op(sm90.TmaStoreOp(tmap, addr, [column, *element[1:]], op.reduce), into)
            else:
                _store_rows_inside(c, None if end is None else c.values[end], before, tmap, row_map,
                                   addr, [column, *element[1:]], rows, staging.chunk, op.reduce, into)

        if len(boxes) == 1:
            (rows, name), = boxes.items()
            store_box(rows, name, inner)
        else:
            last = c.const(consumers - 1, inner)
            for (rows, name), predicate in zip(boxes.items(), ("ne", "eq")):
                branch = Block()
                store_box(rows, name, branch)
                c.emit_if_then(c.op(arith.CmpiOp(c.consumer_index, last, predicate), inner).results[0], branch, inner)

    # groups of chunks written between one pair of syncs: each chunk alone, or where every chunk
    # has a buffer of its own (plan.whole_staging), all of them
    whole = c.lowering.plan.whole_staging and chunks > 1
    if whole and staging.reuses_single_tiles:
        raise defect_at(op, "whole-tile staging in the kernel-level loads' bytes: smem_plan gives it a region of its own")
    for group in ([list(range(chunks))] if whole else [[chunk] for chunk in range(chunks)]):
        first = group[0]
        addrs, views = [], []
        for chunk in group:
            addrs.append(c.add(base, c.const((chunk % staging.buffers) * staging.chunk_bytes, block), block))
            views.append(c.op(sm90.SmemViewOp(addrs[-1], staging.chunk), block).results[0])
        if not staging.reuses_single_tiles and (first == 0 or first >= staging.buffers):
            # the stores that read this buffer before are done reading it: at the first chunk,
            # every store this consumer issued (an earlier run of this store, in a loop, may
            # have left its last chunks in any buffer); later, the one `buffers` chunks back
            waiter = sm90.SingleThreadOp("warpgroup")
            c.op(waiter, block)
            c.op(sm90.TmaStoreWaitOp(0 if first == 0 else staging.buffers - 1, read=True), waiter.body.block)
        c.op(sm90.NamedBarrierOp(barrier_id, WARPGROUP_THREADS), block)
        for chunk, view in zip(group, views, strict=True):
            c.op(sm90.StoreFragmentOp(c.values[op.value], view, zero, chunk * chunk_cols), block)
        c.op(sm90.FenceProxyAsyncOp(), block)
        c.op(sm90.NamedBarrierOp(barrier_id, WARPGROUP_THREADS), block)
        issue = sm90.SingleThreadOp("warpgroup")
        c.op(issue, block)
        for chunk, addr in zip(group, addrs, strict=True):
            store_chunk(chunk, addr, issue.body.block)
        c.op(sm90.TmaStoreCommitOp(), issue.body.block)
        if staging.reuses_single_tiles:
            # the buffers are the kernel-level loads' bytes, which the next tile loads into:
            # each chunk is read before the next is written, and the last before the store ends
            c.op(sm90.TmaStoreWaitOp(staging.buffers - 1 if first + 1 < chunks else 0, read=True), issue.body.block)


def _store_rows_inside(c: ConsumerEmitter, end: SSAValue | None, may_start_before: bool, tmap: SSAValue,
                       row_map: str, addr: SSAValue, element: list[SSAValue], rows: int, chunk: sm90.SharedRefType,
                       reduce: tile.StoreReductionAttr | None, block: Block) -> None:
    """The staged chunk at `addr` to the tensor at `element` (innermost first), its box of `rows`
    rows, no row at or past `end` (an element range's end, elem(x, end), where TMA does not
    clip) and, where the box `may_start_before` the tensor's first row, none before it (TMA
    faults on a store at a negative coordinate): the whole box where it lies inside both, else
    one row-high box (tensor map `row_map`) per row inside."""
    start = element[1]
    insides: list[SSAValue] = []
    valid = None if end is None else c.sub(end, start, block)
    if valid is not None:
        insides.append(c.op(arith.CmpiOp(valid, c.const(rows, block), "sge"), block).results[0])
    if may_start_before:
        insides.append(c.op(arith.CmpiOp(start, c.const(0, block), "sge"), block).results[0])
    whole = insides[0] if len(insides) == 1 else c.op(arith.AndIOp(insides[0], insides[1]), block).results[0]
    full_store = Block()
    c.op(sm90.TmaStoreOp(tmap, addr, element, reduce), full_store)
    full_store.add_op(scf.YieldOp())
    rows_store = Block()
    first = c.op(arith.MaxSIOp(c.sub(c.const(0, rows_store), start, rows_store), c.const(0, rows_store)),
                 rows_store).results[0] if may_start_before else c.const(0, rows_store)
    last = c.const(rows, rows_store) if valid is None else c.op(
        arith.MinSIOp(valid, c.const(rows, rows_store)), rows_store).results[0]
    body = Block(arg_types=[IndexType()])
    row = body.args[0]
    one_row = c.op(sm90.TensorMapParamOp(row_map), body).results[0]
    row_bytes = chunk.panel_cols * tile.element_bytes(chunk.element_type)
    row_addr = c.add(addr, c.mul(row, c.const(row_bytes, body), body), body)
    c.op(sm90.TmaStoreOp(one_row, row_addr, [element[0], c.add(start, row, body), *element[2:]], reduce), body)
    body.add_op(scf.YieldOp())
    c.op(scf.ForOp(first, last, c.const(1, rows_store), [], body), rows_store)
    rows_store.add_op(scf.YieldOp())
    c.op(scf.IfOp(whole, [], Region(full_store), Region(rows_store)), block)


def _emit_vector_store(c: ConsumerEmitter, op: tile.StoreOp, tensor_type: tile.GlobalType, coords: list[SSAValue],
                       block: Block) -> None:
    base = c.op(sm90.PointerParamOp(c.lowering.params.pointer(op.tensor)), block).results[0]
    scales = tile.coord_scales(op)
    dims = tensor_type.get_dims()

    def size(axis: int) -> SSAValue:
        dim = dims[axis]
        return c.dims[dim] if isinstance(dim, str) else c.const(dim, block)

    offset: SSAValue | None = None
    element: SSAValue | None = None
    for axis, (coord, scale) in enumerate(zip(coords, scales)):
        element = coord if scale == 1 else c.mul(coord, c.const(scale, block), block)
        offset = element if offset is None else c.add(c.mul(offset, size(axis), block), element, block)
    assert offset is not None and element is not None
    # the vector may run past the end of the tensor's last dim (a partial last tile), and stand
    # past the end of a leading one (a cluster's extra tile past the grid): then nothing is stored
    limit = c.sub(size(len(dims) - 1), element, block)
    end = tile.element_ends(op).get(len(dims) - 1)
    if end is not None:
        # an element range's end stops the vector as the tensor's end does (TMA does not know it)
        limit = c.op(arith.MinSIOp(limit, c.sub(c.values[end], element, block)), block).results[0]
    for axis, coord in enumerate(coords[:-1]):
        inside = c.op(arith.CmpiOp(coord, size(axis), "ult"), block).results[0]
        limit = c.op(arith.SelectOp(inside, limit, c.const(0, block)), block).results[0]
    # an element coordinate that may be negative: the elements before the tensor's first are
    # not stored, as a tile's rows are not (the pointer would reach the row before)
    start = None if never_negative(op.coords[-1]) else c.sub(c.const(0, block), element, block)
    value = c.values[op.value]
    fragment = cast(sm90.FragmentType, value.type)
    if not fragment.is_column:
        with c.writer_of(op.value.type, block) as writer:
            row0 = c.row0(op.value.type)
            first = c.add(offset, row0, writer)
            left = c.sub(limit, row0, writer)
            valid = c.valid_rows(op.value.type, writer)
            if valid is not None:
                # a vector of fewer rows than its fragments: the rows past it are padding
                left = c.op(arith.MinSIOp(left, valid), writer).results[0]
            own_start = None if start is None else c.sub(start, row0, writer)
            c.op(sm90.StoreVectorGlobalOp(value, base, first, left, op.reduce, own_start), writer)
        return
    # every consumer holds the whole column vector: the first one stores it
    first = c.op(arith.CmpiOp(c.consumer_index, c.const(0, block), "eq"), block).results[0]
    store = Block()
    c.op(sm90.StoreVectorGlobalOp(value, base, offset, limit, op.reduce, start), store)
    c.emit_if_then(first, store, block)


def emit_to_shared(c: ConsumerEmitter, op: tile.ToSharedOp, block: Block) -> None:
    if not isinstance(op.result.type, tile.SharedTileType):
        raise error_at(op, "the GPU backend moves register tiles to shared memory, not vectors")
    buffer = c.memory.shared[op]
    addr = c.add(c.smem_base, c.const(buffer.offset, block), block)
    view = c.op(sm90.SmemViewOp(addr, buffer.ref_type), block).results[0]
    consumers = c.lowering.consumers
    barrier_id = c.const(consumers + 1, block)
    threads = WARPGROUP_THREADS * consumers
    c.op(sm90.NamedBarrierOp(barrier_id, threads), block)
    with c.writer_of(op.source.type, block) as writer:
        c.op(sm90.StoreFragmentOp(c.values[op.source], view, c.row0(op.source.type)), writer)
        c.op(sm90.FenceProxyAsyncOp(), writer)
    c.op(sm90.NamedBarrierOp(barrier_id, threads), block)
    c.values[op.result] = view


def _retention_slot(c: ConsumerEmitter, op: tile.RetainOp | tile.RecallOp, block: Block) -> SSAValue:
    """A view of the op's slot of its retention buffer, laid out as the tile it keeps was loaded."""
    start = c.add(c.smem_base, c.const(offset_of(op, "smem_offset"), block), block)
    addr = c.add(start, c.mul(c.values[op.slot], c.const(retention_slot_bytes(op.layout), block), block), block)
    ref = sm90.SharedRefType(op.layout.get_shape(), op.layout.element_type, swizzle_of(op.layout))
    return c.op(sm90.SmemViewOp(addr, ref), block).results[0]


def emit_retain(c: ConsumerEmitter, op: tile.RetainOp, block: Block) -> None:
    c.op(sm90.StoreFragmentOp(c.values[op.value], _retention_slot(c, op, block), c.row0(op.value.type)), block)


def emit_recall(c: ConsumerEmitter, op: tile.RecallOp, block: Block) -> None:
    view = _retention_slot(c, op, block)
    load = c.op(sm90.LoadFragmentOp(view, c.row0(op.result.type), c.lowering.fragment_type(op.result.type)), block)
    c.values[op.result] = load.results[0]
