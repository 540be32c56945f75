"""The kernel's launch contract (`#sm90.abi`: a tkc.abi.KernelABI less the entry, block and
shared memory the sm90.kernel states), which the runtime reads and nothing else.

What it decides: the kernel's parameters (a tensor map per distinct TMA box of a tensor, a
pointer per tensor stored element-wise, a u32 per symbolic dim), the grid as an expression over
dims and `num_sms` (one CTA per tile; the persistent grid's min(tiles, SMs x CTAs/SM), every SM's
CTAs with stream-K plus its `scratch` parameter (a flag and a partial-sum slot per CTA); groups of
tiles for a cluster, at most `max_clusters` 4-CTA clusters, as many as run at once), and the
multiple each dim must be (where the program counts tiles with a division that rounds down,
and where tile-mask-tails found that padding cannot be kept exact: `whole_tiles`), and the
kernel's `require` conditions as expressions over the dims, all of which the runtime checks
before it launches; and whether the runtime launches the kernel as a programmatic dependent of
the one before it (the plan's `dependent_launch`). A tile that runs past the end of a tensor
needs nothing here: TMA reads zeros there and clips the stores, and a vector store stops at the
end of the tensor.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue

from tkc import abi as kabi
from tkc.diagnostics import error_at, location_of
from tkc.dialects import sm90, tile

if TYPE_CHECKING:
    from tkc.passes.tile_to_sm90.lowering import KernelLowering

_GRID_BINARY: dict[type[Operation], str] = {
    arith.DivUIOp: "div",
    arith.FloorDivSIOp: "div",
    arith.DivSIOp: "div",
    arith.CeilDivUIOp: "ceildiv",
    arith.CeilDivSIOp: "ceildiv",
    arith.MuliOp: "mul",
    arith.AddiOp: "add",
    arith.SubiOp: "sub",
    arith.MinUIOp: "min",
    arith.MaxUIOp: "max",
    arith.MinSIOp: "min",
    arith.MaxSIOp: "max",
}


def dim_name(dim: tile.DimOp) -> str | int:
    return cast(tile.GlobalType, dim.tensor.type).get_dims()[dim.axis.value.data]


_CONDITION_BINARY: dict[type[Operation], str] = {arith.AndIOp: "and", arith.OrIOp: "or", arith.XOrIOp: "xor"}
_COMPARISONS = {0: "eq", 1: "ne", 2: "lt", 3: "le", 4: "gt", 5: "ge"}
"""arith.cmpi's signed predicates (the language compares indices signed) by number."""


def condition_expr(value: SSAValue, kernel: tile.KernelOp) -> kabi.Expr:
    """A `tile.require` condition as an ABI expression (tile.REQUIRE_OPS: the verifier has
    checked that nothing else computes it)."""
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr) and op.value.type == IntegerType(1):
        return int(op.value.value.data != 0)  # i1 true may read as -1
    if isinstance(op, arith.CmpiOp) and op.predicate.value.data in _COMPARISONS:
        return (_COMPARISONS[op.predicate.value.data], condition_expr(op.lhs, kernel), condition_expr(op.rhs, kernel))
    if isinstance(op, arith.AndIOp | arith.OrIOp | arith.XOrIOp):
        return (_CONDITION_BINARY[type(op)], condition_expr(op.lhs, kernel), condition_expr(op.rhs, kernel))
    return grid_expr(value, kernel, condition_expr, "a requirement")


def checked_at_launch(kernel: tile.KernelOp) -> set[Operation]:
    """The kernel's tile.require ops and the index math only they read: the runtime checks them
    from the arguments' shapes before the launch, so no warpgroup computes them."""
    slices = {op for require in kernel.body.block.ops if isinstance(require, tile.RequireOp)
              for op in tile.require_slice(require.condition) or () if op.dialect_name() == "arith"}
    checked: set[Operation] = set()
    for op in reversed(list(kernel.body.block.ops)):  # an op's uses follow it
        uses = [use.operation for result in op.results for use in result.uses]
        if isinstance(op, tile.RequireOp) or op in slices and uses and all(use in checked for use in uses):
            checked.add(op)
    return checked


def grid_expr(value: SSAValue, kernel: tile.KernelOp,
              operand: Callable[[SSAValue, tile.KernelOp], kabi.Expr] | None = None,
              what: str = "a grid extent") -> kabi.Expr:
    """A grid extent (or `what`) as an ABI expression over dims and constants (its operands
    through `operand`: a condition's index arithmetic)."""
    operand = operand or grid_expr
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    if isinstance(op, tile.DimOp):
        return dim_name(op)
    if isinstance(op, arith.IndexCastOp):
        return operand(op.input, kernel)
    if isinstance(op, Operation) and type(op) in _GRID_BINARY:
        operation = cast(arith.SignlessIntegerBinaryOperation, op)
        expr = (_GRID_BINARY[type(op)], operand(operation.lhs, kernel), operand(operation.rhs, kernel))
        if expr[0] in ("div", "ceildiv") and expr[2] == 0:
            raise error_at(op, f"{what} divides by zero at every launch")
        return expr
    raise error_at(
        op if isinstance(op, Operation) else kernel,
        f"{what} must be computed from dims and constants with + - * / ceildiv min max",
    )


def _requirement_text(op: tile.RequireOp) -> str:
    _, line, _ = location_of(op)
    return f"{op.text.data} (line {line})" if line is not None else op.text.data


def _product(exprs: list[kabi.Expr]) -> kabi.Expr:
    result = exprs[0]
    for e in exprs[1:]:
        result = ("mul", result, e)
    return result


def tile_extents(tensor_type: tile.GlobalType, value_type: Attribute) -> tuple[int, ...]:
    """The tile's extent along each tensor axis (1 for the leading axes the tile does not span)."""
    shape = cast(tile.SharedTileType, value_type).get_shape()
    return (1,) * (tensor_type.rank - len(shape)) + shape


@dataclass
class LaunchParams:
    """The kernel parameters the lowering asks for, named in the order it first needs them."""

    arg_names: dict[SSAValue, str]
    tensor_maps: dict[tuple[str, tuple[int, ...], int], str] = field(default_factory=dict)
    pointers: dict[str, str] = field(default_factory=dict)
    scratch_per_cta: int | None = None
    """The bytes of scratch memory each CTA needs (stream-K's partial-sum slot), once asked for."""

    def tensor_map(self, tensor: SSAValue, box: tuple[int, ...], swizzle: int) -> str:
        arg = self.arg_names[tensor]
        key = (arg, box, swizzle)
        if key not in self.tensor_maps:
            self.tensor_maps[key] = f"tmap_{arg}_{len(self.tensor_maps)}"
        return self.tensor_maps[key]

    def pointer(self, tensor: SSAValue) -> str:
        arg = self.arg_names[tensor]
        return self.pointers.setdefault(arg, f"ptr_{arg}")

    def scratch_param(self, per_cta: int = 0) -> str:
        """The scratch parameter, whose size covers `per_cta` bytes for each CTA (the largest asked)."""
        self.scratch_per_cta = max(self.scratch_per_cta or 0, per_cta)
        return SCRATCH


SCRATCH = "scratch"
"""The name of the scratch parameter."""


def launch_abi(lowering: KernelLowering) -> sm90.KernelABIAttr:
    """The ABI of the lowered kernel: call once both roles are emitted (they name the params)."""
    kernel, params = lowering.kernel, lowering.params
    args = tuple(
        kabi.ArgSpec(
            name,
            tile.element_name(cast(tile.GlobalType, arg.type).element_type),
            cast(tile.GlobalType, arg.type).get_dims(),
        )
        for arg, name in params.arg_names.items()
    )
    contract_params: list[kabi.Param] = [
        kabi.TensorMapParam(name, arg, box, swizzle) for (arg, box, swizzle), name in params.tensor_maps.items()
    ]
    contract_params += [kabi.PointerParam(name, arg) for arg, name in params.pointers.items()]
    contract_params += [kabi.DimParam(f"dim_{d}", d) for d in lowering.symbolic_dims]
    extents = [grid_expr(v, kernel) for v in lowering.grid_op.extents]
    ctas: kabi.Expr = ("mul", "num_sms", max(1, lowering.plan.ctas_per_sm))
    if params.scratch_per_cta is not None:
        # a u32 flag and a partial-sum slot per CTA, the slots 16-byte aligned after the flags
        contract_params.append(kabi.ScratchParam(SCRATCH, ("add", ("mul", ctas, params.scratch_per_cta + 4), 16)))
    if lowering.plan.stream_k:
        # every SM takes an equal share of the K iterations, however few the tiles
        grid: tuple[kabi.Expr, ...] = (ctas, 1, 1)
    elif lowering.cluster > 1:
        groups = _product([("ceildiv", extents[0], lowering.cluster), *extents[1:]])
        # as many clusters as the GPU runs at once: a cluster's CTAs share one GPC, whose SMs need
        # not split into groups of 4, and a persistent cluster that waited for another to end would
        # run its tiles after all the rest (pairs fill the SMs two by two, as measured)
        resident: kabi.Expr = ("div", "num_sms", lowering.cluster)
        if lowering.cluster > 2:
            resident = ("min", resident, "max_clusters")
        grid = (("mul", ("min", groups, resident), lowering.cluster), 1, 1)
    elif lowering.plan.persistent:
        grid = (("min", _product(extents), ctas), 1, 1)
    else:
        grid = tuple(extents) + (1,) * (3 - len(extents))
    divisibility = tile.floor_divided_dims(kernel)
    whole_tiles = kernel.attributes.get("whole_tiles")
    whole: list[tuple[str, int, str]] = []
    if isinstance(whole_tiles, DictionaryAttr):  # tile-mask-tails: dims that must be whole tiles
        for dim, decision in whole_tiles.data.items():
            multiple = cast(tile.DecisionAttr, decision).int_value
            divisibility[dim] = math.lcm(divisibility.get(dim, 1), multiple)
            whole.append((dim, multiple, cast(tile.DecisionAttr, decision).reason.data))
    return sm90.KernelABIAttr(kabi.LaunchContract(
        args=args,
        params=tuple(contract_params),
        grid=cast(tuple[kabi.Expr, kabi.Expr, kabi.Expr], grid),
        divisibility=tuple(sorted(divisibility.items())),
        written=tuple(name for arg, name in params.arg_names.items()
                      if any(isinstance(op, tile.StoreOp) and op.tensor is arg for op in kernel.walk())),
        multicast=tuple(sorted({params.arg_names[load.tensor] for load in lowering.multicast})),
        dependent_launch=lowering.plan.dependent_launch,
        whole_tiles=tuple(sorted(whole)),
        requires=tuple((condition_expr(op.condition, kernel), _requirement_text(op))
                       for op in kernel.body.block.ops if isinstance(op, tile.RequireOp)),
    ))
