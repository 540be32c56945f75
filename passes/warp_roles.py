"""Which warpgroups run each op of a kernel body: the producer (warpgroup 0, loads), the
consumers (compute, stores), or both; tile-warp-specialize writes these roles and
convert-tile-to-sm90 follows them (passes/tile_warp_specialize.py says how they are decided).

`derive_roles` decides them; `write_roles` puts them on the ops; `check_roles` derives them
anew and compares with what the IR says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue
from xdsl.traits import is_side_effect_free

from tkc.diagnostics import error_at
from tkc.dialects.tile import (
    FenceOp,
    GridOp,
    KernelOp,
    LoadOp,
    ShapedTileType,
    REALIGNED,
    ZERO_PAST_END,
    Role,
    RoleAttr,
    element_ends,
)

ROLE = "role"
PRODUCER_VALUES = "producer_values"


@dataclass
class _Slice:
    """The ops one role runs and, per loop or if, the results its copy carries.

    `run`, `need` and `carry` only queue work; `close` does it, with a worklist rather than
    recursion, since a kernel may chain thousands of ops."""

    producer: bool
    kernel: KernelOp
    ops: set[Operation] = field(default_factory=set)
    values: set[SSAValue] = field(default_factory=set)
    carried: dict[Operation, set[int]] = field(default_factory=dict)
    _work: list[Callable[[], None]] = field(default_factory=list)

    def run(self, op: Operation) -> None:
        if op not in self.ops and op is not self.kernel:
            self.ops.add(op)
            self._work.append(lambda: self._run(op))

    def need(self, value: SSAValue) -> None:
        if value not in self.values:
            self.values.add(value)
            self._work.append(lambda: self._need(value))

    def carry(self, op: Operation, index: int) -> None:
        """The role's copy of loop or if `op` yields its result `index`."""
        carried = self.carried.setdefault(op, set())
        if index not in carried:
            carried.add(index)
            self._work.append(lambda: self._carry(op, index))

    def close(self) -> None:
        while self._work:
            self._work.pop()()

    def _run(self, op: Operation) -> None:
        parent = op.parent_op()
        if parent is not None:
            self.run(parent)
        if isinstance(op, scf.ForOp | scf.IfOp):
            for operand in (op.lb, op.ub, op.step) if isinstance(op, scf.ForOp) else (op.cond,):
                self.need(operand)
            if not self.producer:
                for index in range(len(op.results)):
                    self.carry(op, index)
        elif isinstance(op, scf.YieldOp):
            pass  # a yield passes on what its loop or if carries (carry)
        elif isinstance(op, LoadOp) and not self.producer:
            # a consumer waits for the load's ring stage; the coordinates are the producer's,
            # but for the rows past an element range's end, which the consumers zero
            if ZERO_PAST_END in op.attributes:
                for axis, end in element_ends(op).items():
                    self.need(op.coords[axis])
                    self.need(end)
            if REALIGNED in op.attributes:  # they read a realigned vector from its start on
                self.need(op.coords[-1])
        else:
            for operand in op.operands:
                self.need(operand)

    def _need(self, value: SSAValue) -> None:
        if isinstance(value, OpResult):
            if isinstance(value.op, scf.ForOp | scf.IfOp):
                self.carry(value.op, value.index)
            self.run(value.op)
        elif isinstance(value, BlockArgument):
            owner = value.block.parent_op()
            if isinstance(owner, scf.ForOp):
                self.run(owner)
                if value.index > 0:
                    self.carry(owner, value.index - 1)

    def _carry(self, op: Operation, index: int) -> None:
        self.run(op)
        if isinstance(op, scf.ForOp):
            self.need(op.iter_args[index])
            self.need(op.body.block.args[1 + index])
        for region in op.regions:
            if region.blocks and isinstance(yield_op := region.block.last_op, scf.YieldOp):
                self.need(yield_op.operands[index])


@dataclass(frozen=True)
class Roles:
    """The role of every op of a kernel body and what the producer's loops and ifs carry."""

    of: dict[Operation, Role]
    producer_values: dict[Operation, tuple[int, ...]]


def derive_roles(kernel: KernelOp) -> Roles:
    producer, consumers = _Slice(True, kernel), _Slice(False, kernel)
    ops = [op for op in kernel.walk() if op is not kernel]
    for op in ops:
        if isinstance(op, LoadOp | GridOp):
            # both walk the output tiles (the grid); the producer issues a load, the consumers wait for it
            producer.run(op)
            consumers.run(op)
        elif not isinstance(op, scf.YieldOp | scf.ForOp | scf.IfOp) and not is_side_effect_free(op):
            consumers.run(op)  # what the kernel does: its stores and fences
    producer.close()
    for op in ops:
        # the producer waits at a fence on its way to later loads; one in a loop it does not run
        # only orders the consumers' stores
        if isinstance(op, FenceOp) and (op.parent_op() is kernel or op.parent_op() in producer.ops):
            producer.run(op)
    producer.close()
    _refuse_data_dependent_loads(producer, ops)
    consumers.close()
    for op in ops:  # dead code runs where compute runs
        if op not in producer.ops and op not in consumers.ops and not isinstance(op, scf.YieldOp):
            consumers.run(op)
    consumers.close()
    of: dict[Operation, Role] = {}
    for op in ops:
        owner = op.parent_op() if isinstance(op, scf.YieldOp) else op
        assert owner is not None
        in_producer, in_consumers = owner in producer.ops, owner in consumers.ops
        of[op] = Role.BOTH if in_producer and in_consumers else Role.PRODUCER if in_producer else Role.CONSUMERS
    producer_values: dict[Operation, tuple[int, ...]] = {
        op: tuple(sorted(producer.carried.get(op, ())))
        for op in ops
        if isinstance(op, scf.ForOp | scf.IfOp) and op in producer.ops
    }
    return Roles(of, producer_values)


def _refuse_data_dependent_loads(producer: _Slice, ops: list[Operation]) -> None:
    """The producer cannot compute on tiles (one elected thread issues its loads): a loop bound,
    an if condition or a load coordinate it needs that is computed from a tile or vector is a
    user error at the loop, if or load, not an internal one in the lowering."""
    tile_data = {v for v in producer.values if isinstance(v.type, ShapedTileType)}
    if not tile_data:
        return

    def reads_tiles(value: SSAValue) -> bool:
        """Whether `value` is computed from tile data, through ops and loop-carried values."""
        stack, seen = [value], set()
        while stack:
            v = stack.pop()
            if v in tile_data:
                return True
            if v in seen:
                continue
            seen.add(v)
            if isinstance(v, OpResult) and not isinstance(v.op, LoadOp):
                stack.extend(v.op.operands)
                if isinstance(v.op, scf.ForOp | scf.IfOp):
                    stack.extend(r.block.last_op.operands[v.index] for r in v.op.regions
                                 if r.blocks and isinstance(r.block.last_op, scf.YieldOp))
            elif isinstance(v, BlockArgument) and isinstance(loop := v.block.parent_op(), scf.ForOp) and v.index > 0:
                stack.append(loop.iter_args[v.index - 1])
                yielded = loop.body.block.last_op
                if isinstance(yielded, scf.YieldOp):
                    stack.append(yielded.operands[v.index - 1])
        return False

    for op in ops:
        if op not in producer.ops:
            continue
        if isinstance(op, scf.ForOp | scf.IfOp | LoadOp):
            controls = (op.lb, op.ub, op.step) if isinstance(op, scf.ForOp) else (
                (op.cond,) if isinstance(op, scf.IfOp) else tuple(op.coords))
            if any(reads_tiles(v) for v in controls):
                what = {scf.ForOp: "bounds of this loop are", scf.IfOp: "condition of this if is"}.get(
                    type(op), "coordinates of this load are")
                raise error_at(op, f"the {what} computed from loaded tiles or vectors, and the GPU backend's "
                                   "producer warpgroup, which issues the loads, does not see tile data: compute the "
                                   "loads' loop bounds, if conditions and coordinates from indices, dims and scalar "
                                   "loads (`load T[i] : i32`) (tkc run --interpret runs it as written)")


def write_roles(kernel: KernelOp, roles: Roles) -> None:
    for op, role in roles.of.items():
        # a yield is its loop's or if's (and may print implicitly); xDSL's arith.cmpi prints no
        # attributes, so a role written there would not survive a dump (check_roles derives it)
        if not isinstance(op, scf.YieldOp | arith.CmpiOp):
            op.attributes[ROLE] = RoleAttr(role)
    for op, carried in roles.producer_values.items():
        op.attributes[PRODUCER_VALUES] = DenseArrayBase.from_list(i64, carried)


def check_roles(kernel: KernelOp) -> Roles:
    """The roles the lowering follows: tile-warp-specialize's, derived anew and compared with
    what the IR says where it says anything (a dump given back to the compiler may have been
    edited; xDSL prints some ops, arith.cmpi among them, without their attributes)."""
    roles = derive_roles(kernel)
    for op, role in roles.of.items():
        written = op.attributes.get(ROLE)
        if written is not None and written != RoleAttr(role):
            raise error_at(op, f"{op.name} has the role {written}, but tile-warp-specialize decides {role.value}")
        carried = roles.producer_values.get(op)
        written_values = op.attributes.get(PRODUCER_VALUES)
        if written is not None and written_values != (None if carried is None else DenseArrayBase.from_list(i64, carried)):
            raise error_at(op, f"{op.name} says the producer carries the values {_indices(written_values)}, "
                           f"but tile-warp-specialize decides {list(carried or ())}")
    return roles


def _indices(values: Attribute | None) -> list[int]:
    return list(values.get_values()) if isinstance(values, DenseArrayBase) else []
