"""One walk for the facts about an index value that follow from its operands' facts.

The divisibility of an `elem(...)` start (passes/divisibility.py) and whether it may be negative
(passes/signs.py) are each a fact per value computed from the facts of the values it is made of.
Chains of index arithmetic can be deep (fuzzed and generated programs), so the walk is iterative,
each value once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from xdsl.ir import SSAValue

Fact = TypeVar("Fact")


def fold(value: SSAValue, operands: Callable[[SSAValue], tuple[SSAValue, ...]],
         fact: Callable[[SSAValue, dict[SSAValue, Fact]], Fact]) -> Fact:
    """`value`'s fact: `fact(v, known)` for each value from its `operands(v)` up, where `known`
    holds every operand's."""
    known: dict[SSAValue, Fact] = {}
    pending = [value]
    while pending:
        v = pending[-1]
        if v in known:
            pending.pop()
            continue
        needed = [o for o in operands(v) if o not in known]
        if needed:
            pending.extend(needed)
            continue
        pending.pop()
        known[v] = fact(v, known)
    return known[value]
