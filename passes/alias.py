"""Which tile loads and stores of one block may touch the same elements of a global tensor.

What the language promises (docs/language.md, "Memory"): tensor arguments are distinct
memory (the runtime refuses a launch where an argument the kernel writes overlaps another
argument), and blocks do not communicate through memory within a launch (a store and a load
of one element by two blocks is a race in the program). So two accesses of one block can
conflict only when they name the same argument, and whether their regions overlap is decided
per tensor axis from their tile coordinates.

Each coordinate is read as an affine form over index values (`c0 + sum(k_i * v_i)`, through
constants, `+`, `-` and `*` by a constant); any other value is an opaque atom. An access covers
elements [coord * scale, coord * scale + extent) along each axis, the scale being the extent
for a tile coordinate and 1 for an element one (`elem(x)`, tile.coord_scales). Two accesses are disjoint
when along some axis the difference of their starts is a known constant at least the extent of
the one below, on every execution in which the later access follows the earlier one:

- in one execution of their common block (the earlier access's construct comes first), values
  defined inside either construct may differ between the two sides, the rest are the same;
- across iterations of a loop around both (the later access runs `m >= 1` iterations of
  `step` later), the loop's counter differs by `step * m` and every value defined in its body
  may differ; values defined outside the loop are the same.

Both are checked for every loop around the two accesses, so `load X[i, k]` / `store X[i, k]`
in one loop are disjoint across iterations, and `store H[i, c]` in one loop followed by
`load H[i, c]` in another may overlap.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, Operation, SSAValue

from tkc.dialects.tile import GlobalType, LoadOp, StoreOp, ShapedTileType, coord_scales, index_constant

Access = LoadOp | StoreOp

_STEP = "step"
"""The atom standing for `m`, the number of loop steps between two iterations."""


def accessed_type(op: Access) -> ShapedTileType:
    value_type = op.result.type if isinstance(op, LoadOp) else op.value.type
    assert isinstance(value_type, ShapedTileType)
    return value_type


def extents(op: Access) -> tuple[int, ...]:
    """The access's extent along each tensor axis (1 for the leading axes the tile does not span)."""
    tensor_type = op.tensor.type
    assert isinstance(tensor_type, GlobalType)
    shape = accessed_type(op).get_shape()
    return (1,) * (tensor_type.rank - len(shape)) + shape


@dataclass(frozen=True)
class Affine:
    """const + sum(coeff * atom); an atom is (side, value): side 0 for a value both accesses
    see alike, 1 or 2 for a value that may differ between them, or the `_STEP` marker."""

    const: int = 0
    terms: tuple[tuple[object, int], ...] = ()

    def __add__(self, other: Affine) -> Affine:
        terms = dict(self.terms)
        for atom, coeff in other.terms:
            terms[atom] = terms.get(atom, 0) + coeff
        return Affine(self.const + other.const, tuple((a, c) for a, c in terms.items() if c))

    def scale(self, k: int) -> Affine:
        return Affine(self.const * k, tuple((a, c * k) for a, c in self.terms)) if k else Affine()


@dataclass
class _Side:
    """How one access's coordinates read: values inside `private` may differ from the other
    side's; `loop`'s counter is `step * m` ahead on the later side."""

    side: int
    private: Operation | None
    loop: scf.ForOp | None = None
    later: bool = False
    memo: dict[SSAValue, Affine] = field(default_factory=dict)

    def _is_private(self, value: SSAValue) -> bool:
        return self.private is not None and defined_within(value, self.private)

    def form(self, value: SSAValue) -> Affine:
        """The affine form of an index value (iteratively memoised: chains of any depth are linear)."""
        pending = [value]
        while pending:
            v = pending[-1]
            if v in self.memo:
                pending.pop()
                continue
            needed = [o for o in _affine_operands(v) if o not in self.memo]
            if needed:
                pending.extend(needed)
                continue
            pending.pop()
            self.memo[v] = self._form_of(v)
        return self.memo[value]

    def _form_of(self, v: SSAValue) -> Affine:
        owner = v.owner
        if self.loop is not None and v is self.loop.body.block.args[0]:
            atom = Affine(0, (((0, v), 1),))
            step = index_constant(self.loop.step)
            if not self.later:
                return atom
            if step is None or step <= 0:
                return Affine(0, (((self.side, v), 1),))
            return atom + Affine(0, ((_STEP, step),))
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
            return Affine(owner.value.value.data)
        if isinstance(owner, arith.AddiOp):
            return self.memo[owner.lhs] + self.memo[owner.rhs]
        if isinstance(owner, arith.SubiOp):
            return self.memo[owner.lhs] + self.memo[owner.rhs].scale(-1)
        if isinstance(owner, arith.MuliOp):
            lhs, rhs = self.memo[owner.lhs], self.memo[owner.rhs]
            if not lhs.terms:
                return rhs.scale(lhs.const)
            if not rhs.terms:
                return lhs.scale(rhs.const)
        return Affine(0, (((self.side if self._is_private(v) else 0, v), 1),))


def defined_within(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is defined by `op` or inside it (a block argument of one of its regions
    included): a value that may differ each time `op` runs."""
    owner = value.owner
    definer = owner.parent_op() if isinstance(owner, Block) else owner
    return definer is not None and op.is_ancestor(definer)


def _affine_operands(value: SSAValue) -> list[SSAValue]:
    owner = value.owner
    if isinstance(owner, arith.AddiOp | arith.SubiOp | arith.MuliOp):
        return [owner.lhs, owner.rhs]
    return []


def _disjoint_axis(difference: Affine, earlier_extent: int, later_extent: int) -> bool:
    """Whether [d, d + later) and [0, earlier) never meet, for d = later start - earlier start
    and every m >= 1 (the `_STEP` atom)."""
    step = dict(difference.terms).pop(_STEP, 0)
    if any(atom != _STEP for atom, _ in difference.terms):
        return False
    # d = const + step * m is monotonic in m >= 1: its bound at m = 1 decides
    nearest = difference.const + step
    if step > 0:
        return nearest >= earlier_extent
    if step < 0:
        return nearest <= -later_extent
    return nearest >= earlier_extent or nearest <= -later_extent


def _disjoint(earlier: Access, later: Access, first: _Side, second: _Side) -> bool:
    start_axes = zip(earlier.coords, later.coords, coord_scales(earlier), coord_scales(later),
                     extents(earlier), extents(later))
    for c_early, c_late, s_early, s_late, e_early, e_late in start_axes:
        difference = second.form(c_late).scale(s_late) + first.form(c_early).scale(-s_early)
        if _disjoint_axis(difference, e_early, e_late):
            return True
    return False


def _ancestors(op: Operation) -> list[Operation]:
    chain = [op]
    while (parent := chain[-1].parent_op()) is not None:
        chain.append(parent)
    return chain


def common_ancestors(a: Operation, b: Operation) -> tuple[Operation, Operation]:
    """The ancestors of `a` and `b` (themselves included) that share a block."""
    chain_a, chain_b = _ancestors(a), _ancestors(b)
    for x in chain_a:
        for y in chain_b:
            if x.parent_block() is y.parent_block() and x.parent_block() is not None:
                return x, y
    raise ValueError("the accesses are not in one kernel")


def _enclosing_loops(op: Operation) -> Iterator[scf.ForOp]:
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, scf.ForOp):
            yield parent
        parent = parent.parent_op()


def _precedes(a: Operation, b: Operation) -> bool:
    block = a.parent_block()
    assert block is not None and block is b.parent_block()
    return block.get_operation_index(a) < block.get_operation_index(b)


def may_follow_and_overlap(earlier: Access, later: Access) -> bool:
    """Whether `later` may run after `earlier` in one block and touch an element `earlier` touched."""
    if earlier.tensor is not later.tensor:
        return False
    mine, theirs = common_ancestors(earlier, later)
    if mine is not theirs and _precedes(mine, theirs):
        if not _disjoint(earlier, later, _Side(1, mine), _Side(2, theirs)):
            return True
    for loop in _enclosing_loops(mine):
        if not _disjoint(earlier, later, _Side(1, loop, loop), _Side(2, loop, loop, later=True)):
            return True
    return False


def may_overlap_in_loop(load: LoadOp, store: StoreOp, loop: scf.ForOp) -> bool:
    """Whether `store`, in any iteration of `loop`, may write an element `load` reads, the load's
    coordinates being computed outside the loop (a candidate for hoisting)."""
    if load.tensor is not store.tensor:
        return False
    return not _disjoint(load, store, _Side(1, None), _Side(2, loop))


def may_overlap_across_iterations(a: Access, b: Access, loop: scf.ForOp) -> bool:
    """Whether `a` in one iteration of `loop` and `b` in another (before or after it) may touch
    one element: where neither may, the loop's iterations can run in any order."""
    if a.tensor is not b.tensor:
        return False
    return not (_disjoint(a, b, _Side(1, loop, loop), _Side(2, loop, loop, later=True))
                and _disjoint(b, a, _Side(1, loop, loop), _Side(2, loop, loop, later=True)))
