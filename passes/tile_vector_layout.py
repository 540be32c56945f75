"""tile-vector-layout: which register vectors hold one value per column, written into their types.

What it decides, and why: a register vector holds one value per row of a tile (a row vector,
`!tile.rv<128xf32>`) or one value per column (`!tile.rv<64xf32, col>`). The two are laid out
differently on the GPU: a row vector is split by rows over the consumer warpgroups like the
tiles it belongs to, while a column vector is replicated, every consumer holding all columns
(each thread the columns its accumulator registers cover), so that a column broadcast is
register-local. The occupancy plan counts their registers and the lowering gives them their
fragment types from this one decision.

A vector is a column vector when a column broadcast reads it or a column reduction makes it;
element-wise ops, converts, bounds masks and loop / if values carry the layout from one value
to the next (they are joined: all get one layout). Unconstrained vectors stay row vectors. A
vector that would need both is an error at the op that asks for the second layout.

It writes `column_vectors = #tile.decision<N, reason>` on the kernel whenever it retypes any
(N of them), which is how a resumed compile tells that it ran.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tkc.diagnostics import error_at
from tkc.dialects.tile import (
    Axis,
    BinaryOp,
    BoundsMaskOp,
    BroadcastOp,
    ConvertOp,
    DecisionAttr,
    KernelOp,
    ReduceOp,
    RegisterVectorType,
    UnaryOp,
)


def infer_column_vectors(kernel: Operation) -> set[SSAValue]:
    """The register vectors of `kernel` that must hold one value per column (module docstring)."""
    parent: dict[SSAValue, SSAValue] = {}

    def find(v: SSAValue) -> SSAValue:
        while parent.setdefault(v, v) is not v:
            v = parent[v]
        return v

    def join(*values: SSAValue) -> None:
        vectors = [find(v) for v in values if isinstance(v.type, RegisterVectorType)]
        for v in vectors[1:]:
            parent[v] = vectors[0]

    axis: dict[SSAValue, tuple[Axis, Operation]] = {}
    for op in kernel.walk():
        match op:
            case UnaryOp() | ConvertOp() | BoundsMaskOp():
                join(op.source, op.result)
            case BinaryOp():
                join(op.lhs, op.rhs, op.result)
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
    for op in kernel.walk():
        match op:
            case BroadcastOp():
                seeds = [(op.vector, op.axis.data)]
            case ReduceOp():
                seeds = [(op.result, op.axis.data)]
            case _:
                seeds = []
        for value, kind in seeds:
            root = find(value)
            if root in axis and axis[root][0] != kind:
                raise error_at(
                    op, f"this vector is used both as a row vector and as a column vector (see {axis[root][1].name})"
                )
            axis.setdefault(root, (kind, op))
    return {v for v in parent if axis.get(find(v), (Axis.ROW,))[0] == Axis.COL}


def _values(kernel: KernelOp) -> list[SSAValue]:
    """Every result and block argument inside the kernel, in program order."""
    values: list[SSAValue] = []
    for op in kernel.body.walk():
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
                    "vectors a column broadcast reads or a column reduction makes, and the values they are "
                    "computed from, hold one value per column: every consumer holds all of them",
                )
