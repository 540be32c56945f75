"""tile-vector-layout: which register vectors hold one value per column, written into their types.

What it decides, and why: a register vector holds one value per row of a tile (a row vector,
`!tile.rv<128xf32>`) or one value per column (`!tile.rv<64xf32, col>`). The two are laid out
differently on the GPU: a row vector is split by rows over the consumer warpgroups like the
tiles it belongs to, while a column vector is replicated, every consumer holding all columns
(each thread the columns its accumulator registers cover), so that a column broadcast is
register-local. The occupancy plan counts their registers and the lowering gives them their
fragment types from this one decision.

A column reduction makes a column vector, a row reduction a row vector, and a broadcast reads
one of its own axis; element-wise ops and selects, converts, bounds masks, cumsums and loop / if
values carry the layout from one value to the next (they are joined: all get one layout). A vector that
broadcasts read both ways (Mamba-2's decays: `add_row(z, cs)` and `sub_col(.., cs)`) is transposed (`tile.transpose`, with the reason in `layout_change`) where it is defined, once,
for the broadcasts that want the other layout than its own; the values are the same, only where
they live changes. Its own layout is the one a reduction makes it, else the one that needs the
fewest transposes: the lowering scans a row vector (`cumsum`) and reduces one to a scalar in the
column layout, where each quad holds every element, which costs two moves and one, and each
layout's broadcasts cost one move for the other; a tie goes to the first broadcast in program
order. A fill or position vector has no layout of its own: where one (equal fills are one value
after CSE) would join vectors that are broadcast both ways, each of its uses gets its own copy,
in the layout that use needs, rather than a transpose. Unconstrained vectors stay row vectors. A
transpose already in the IR keeps the layouts its type says. Where reductions along both axes
make vectors that are joined (`row_max(x) + col_max(x)`, a var assigned a row_max and then a
col_max), the first in program order fixes the layout and each later one of the other axis is
transposed to it where it is made.

It writes `column_vectors = #tile.decision<N, reason>` on the kernel whenever it retypes any
(N of them), which is how a resumed compile tells that it ran.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import LocationAttr, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tkc.diagnostics import error_at, line_label
from tkc.dialects.tile import (
    Axis,
    BinaryOp,
    BoundsMaskOp,
    BroadcastOp,
    ConvertOp,
    CumsumOp,
    DecisionAttr,
    FillOp,
    KernelOp,
    PositionOp,
    ReduceOp,
    RegisterVectorType,
    SelectOp,
    TransposeOp,
    UnaryOp,
    VectorReduceOp,
)


def infer_column_vectors(kernel: Operation) -> set[SSAValue]:
    """The register vectors of `kernel` that must hold one value per column (module docstring),
    after inserting the transposes that a vector broadcast both ways needs."""
    find = _components(kernel)
    # a fill or position shared by vectors read both ways; a reduction whose vector meets one of
    # the other axis (row_max(x) + col_max(x)): each change splits the components
    while _split_free_sources(kernel, find) or _transpose_clashing_reductions(kernel, find):
        find = _components(kernel)

    axis: dict[SSAValue, tuple[Axis, str]] = {}
    """Per component (its root), its layout and what decided it."""

    def seed(value: SSAValue, kind: Axis, op: Operation, why: str) -> None:
        root = find(value)
        if root in axis and axis[root][0] != kind:
            raise error_at(op, f"this vector is used both as a row vector and as a column vector ({axis[root][1]})")
        axis.setdefault(root, (kind, why))

    ops = list(kernel.walk())
    for op in ops:
        if isinstance(op, ReduceOp):
            seed(op.result, op.axis.data, op, f"{op.name} {op.axis.data} at {line_label(op, 'its place')} makes it {_a(op.axis.data)}")
    for op in ops:  # a transpose already in the IR (a resumed compile) keeps the layout its type says
        if isinstance(op, TransposeOp):
            kind = Axis.COL if isinstance(op.result.type, RegisterVectorType) and op.result.type.is_column else Axis.ROW
            other = Axis.ROW if kind == Axis.COL else Axis.COL
            seed(op.result, kind, op, f"{op.name} at {line_label(op, 'its place')} makes it {_a(kind)}")
            seed(op.source, other, op, f"{op.name} at {line_label(op, 'its place')} reads it as {_a(other)}")
    _choose_free_layouts(ops, find, axis)
    transposed: dict[SSAValue, SSAValue] = {}
    for op in ops:
        if not isinstance(op, BroadcastOp):
            continue
        kind, root = op.axis.data, find(op.vector)
        if axis[root][0] != kind:
            if op.vector not in transposed:
                wanted = "per column" if kind == Axis.COL else "per row"
                transposed[op.vector] = _transpose(
                    op.vector, kind, f"{axis[root][1]}, and {op.name} {op.axis.data} at {line_label(op, 'its place')} reads it {wanted}",
                    op.location)
            op.operands = [op.source, transposed[op.vector]]
    columns = {v for v in _vectors(kernel) if axis.get(find(v), (Axis.ROW, ""))[0] == Axis.COL}
    # the transposes made here: their results are in the layout they were made for, in no component
    return columns | {t for t in transposed.values() if cast(RegisterVectorType, t.type).is_column}


def _components(kernel: Operation) -> Callable[[SSAValue], SSAValue]:
    """Union-find over the kernel's register vectors: values that must share one layout (the
    operands and result of an element-wise op, a loop's or if's values) have one root."""
    parent: dict[SSAValue, SSAValue] = {}

    def find(v: SSAValue) -> SSAValue:
        while parent.setdefault(v, v) is not v:
            v = parent[v]
        return v

    def join(*values: SSAValue) -> None:
        vectors = [find(v) for v in values if isinstance(v.type, RegisterVectorType)]
        for v in vectors[1:]:
            parent[v] = vectors[0]

    for op in kernel.walk():
        match op:
            case UnaryOp() | ConvertOp() | BoundsMaskOp() | CumsumOp():
                join(op.source, op.result)
            case BinaryOp():
                join(op.lhs, op.rhs, op.result)
            case SelectOp():
                join(op.cond, op.on_true, op.on_false, op.result)
            case scf.ForOp():
                for init, arg, result, yielded in zip(
                    op.iter_args, op.body.block.args[1:], op.results, op.body.block.last_op.operands  # type: ignore[union-attr]
                ):
                    join(init, arg, result, yielded)
            case scf.IfOp():
                for region in (op.true_region, op.false_region):
                    if region.blocks:
                        for result, yielded in zip(op.results, region.block.last_op.operands):  # type: ignore[union-attr]
                            join(result, yielded)
            case _:
                pass
    return find


def _split_free_sources(kernel: Operation, find: Callable[[SSAValue], SSAValue]) -> bool:
    """Give each use of a vector fill or position its own copy, made right before the user, where
    the vectors it joins are broadcast both ways: such a source has no layout of its own (CSE made
    one value of equal fills, or two vectors start from one `row_index`), so copies in each
    layout cost nothing where a shared one would join vectors that need not share a layout and
    make them transposed. Returns whether it copied any (the components change)."""
    kinds: dict[SSAValue, set[Axis]] = {}
    for op in kernel.walk():
        if isinstance(op, BroadcastOp):
            kinds.setdefault(find(op.vector), set()).add(op.axis.data)
        elif isinstance(op, ReduceOp):
            kinds.setdefault(find(op.result), set()).add(op.axis.data)
    split = False
    for op in list(kernel.walk()):
        if not isinstance(op, FillOp | PositionOp) or not isinstance(op.result.type, RegisterVectorType):
            continue
        uses = list(op.result.uses)
        if len(uses) < 2 or len(kinds.get(find(op.result), ())) < 2:
            continue
        for use in uses[1:]:
            copy = op.clone()
            Rewriter.insert_op(copy, InsertPoint.before(use.operation))
            use.operation.operands = [copy.result if i == use.index else v for i, v in enumerate(use.operation.operands)]
        split = True
    return split


def _transpose_clashing_reductions(kernel: Operation, find: Callable[[SSAValue], SSAValue]) -> bool:
    """Where reductions along both axes make vectors that element-wise ops, selects, loops or ifs
    join (`row_max(x) + col_max(x)`, a var assigned a row_max and then a col_max), the first one
    in program order fixes the layout, and each later one of the other axis is transposed to it
    right where it is made (its uses read the transpose): the same values, moved once through
    shared memory. Returns whether it transposed any (the components change)."""
    first: dict[SSAValue, ReduceOp] = {}
    changed = False
    for op in list(kernel.walk()):
        if not isinstance(op, ReduceOp) or not isinstance(op.result.type, RegisterVectorType):
            continue
        fixed = first.setdefault(find(op.result), op)
        if fixed.axis.data == op.axis.data:
            continue
        kind = fixed.axis.data
        uses = list(op.result.uses)
        moved = _transpose(op.result, kind, f"{fixed.name} {kind} at {line_label(fixed, 'its place')} makes {_a(kind)} that {op.name} "
                           f"{op.axis.data} at {line_label(op, 'its place')} meets: its result is moved to the {kind} layout once",
                           op.location)
        for use in uses:
            use.operation.operands = [moved if i == use.index else v for i, v in enumerate(use.operation.operands)]
        changed = True
    return changed


def _vectors(kernel: Operation) -> list[SSAValue]:
    """Every register vector the kernel's ops define or take (results and block arguments)."""
    return [v for v in _values_of(kernel) if isinstance(v.type, RegisterVectorType)]


def _choose_free_layouts(ops: list[Operation], find: Callable[[SSAValue], SSAValue],
                         axis: dict[SSAValue, tuple[Axis, str]]) -> None:
    """The layout of each component that no reduction fixed: the one that needs fewer transposes.
    A cumsum of a row vector costs two (it is scanned in the column layout), a reduction of one
    to a scalar one, and a broadcast of the other layout one; a tie goes to the first broadcast."""
    broadcasts: dict[SSAValue, list[BroadcastOp]] = {}
    computed: dict[SSAValue, list[Operation]] = {}  # cumsums and reductions to a scalar
    for op in ops:
        if isinstance(op, BroadcastOp):
            broadcasts.setdefault(find(op.vector), []).append(op)
        elif isinstance(op, VectorReduceOp | CumsumOp) and isinstance(op.source.type, RegisterVectorType):
            computed.setdefault(find(op.source), []).append(op)
    for root in {*broadcasts, *computed} - axis.keys():
        reads = broadcasts.get(root, [])
        kinds = {b.axis.data for b in reads}
        row_cost = sum(2 if isinstance(op, CumsumOp) else 1 for op in computed.get(root, [])) + (Axis.COL in kinds)
        col_cost = int(Axis.ROW in kinds)
        if col_cost != row_cost:
            kind = Axis.COL if col_cost < row_cost else Axis.ROW
        else:
            kind = reads[0].axis.data
        if reads and reads[0].axis.data == kind:
            axis[root] = (kind, f"{reads[0].name} {kind} at {line_label(reads[0], 'its place')} reads it first")
        else:
            first = computed[root][0]
            axis[root] = (kind, f"{first.name} at {line_label(first, 'its place')} computes it in the column layout, which needs the "
                                f"fewest moves")


def _a(kind: Axis) -> str:
    return "a row vector" if kind == Axis.ROW else "a column vector"


def _transpose(vector: SSAValue, kind: Axis, reason: str, location: LocationAttr) -> SSAValue:
    """`vector` in the `kind` layout, made right after it is defined (once for all its uses),
    with `reason` as its layout_change."""
    transpose = TransposeOp(vector, kind == Axis.COL)
    transpose.attributes["layout_change"] = StringAttr(reason)
    transpose.location = location
    owner = vector.owner
    Rewriter.insert_op(transpose, InsertPoint.at_start(owner) if isinstance(owner, Block) else InsertPoint.after(owner))
    return transpose.result


def _values(kernel: KernelOp) -> list[SSAValue]:
    """Every result and block argument inside the kernel, in program order."""
    return _values_of(kernel)


def _values_of(kernel: Operation) -> list[SSAValue]:
    values: list[SSAValue] = []
    for op in kernel.walk():
        values += [arg for region in op.regions for block in region.blocks for arg in block.args]
        values += op.results
    return values


class TileVectorLayoutPass(ModulePass):
    name = "tile-vector-layout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.body.block.ops if isinstance(k, KernelOp)]:
            columns = infer_column_vectors(kernel)
            retyped = 0
            for value in _values(kernel):
                t = value.type
                if isinstance(t, RegisterVectorType) and t.is_column != (value in columns):
                    Rewriter.replace_value_with_new_type(value, t.with_layout(value in columns))
                    retyped += 1
            if retyped:
                count = sum(1 for v in _values(kernel) if isinstance(v.type, RegisterVectorType) and v.type.is_column)
                kernel.attributes["column_vectors"] = DecisionAttr(
                    count,
                    "vectors a column broadcast reads, a column reduction makes or a cumsum or reduction to a "
                    "scalar computes with the fewest moves, and the values they are computed from, hold one value "
                    "per column: every consumer holds all of them",
                )
