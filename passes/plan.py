"""The occupancy plan of a kernel, as the tile passes leave it on `tile.kernel` for the lowering.

tile-occupancy-plan and tile-pipeline write these as `#tile.decision<value, "reason">`
attributes on the kernel (and the pipelined loop); the lowering reads them back through
`KernelPlan.of(kernel)`. A kernel that no pass planned gets the defaults below, which are
always legal: one consumer warpgroup, one stage, no register reallocation.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, UnitAttr
from xdsl.ir import Operation

from tkc.dialects.tile import DecisionAttr

WARPGROUP_THREADS = 128
WGMMA_ROWS = 64
"""Rows of one wgmma: the register-tile rows a consumer warpgroup owns come in these units."""


@dataclass(frozen=True)
class KernelPlan:
    consumers: int = 1
    """Consumer warpgroups; warpgroup 0 is the producer, 1..consumers compute."""
    stages: int = 1
    """Depth of the TMA ring of each pipelined loop."""
    producer_registers: int = 0
    """setmaxnreg value of the producer; 0 = no reallocation."""
    consumer_registers: int = 0
    persistent: bool = False
    """One CTA per SM looping over tiles, instead of one CTA per tile."""
    group_m: int = 1
    """L2-friendly tile order of a persistent grid: this many tile rows walk together."""
    ctas_per_sm: int = 1

    @property
    def threads(self) -> int:
        return WARPGROUP_THREADS * (1 + self.consumers)

    ATTRS = {
        "consumers": "consumers",
        "stages": "stages",
        "producer_registers": "producer_registers",
        "consumer_registers": "consumer_registers",
        "persistent": "persistent",
        "group_m": "group_m",
        "ctas_per_sm": "ctas_per_sm",
    }

    @staticmethod
    def of(kernel: Operation) -> KernelPlan:
        values: dict[str, int | bool] = {}
        for field_name, attr_name in KernelPlan.ATTRS.items():
            attr = kernel.attributes.get(attr_name)
            if attr is None:
                continue
            if isinstance(attr, DecisionAttr):
                attr = attr.value
            if isinstance(attr, IntegerAttr):
                values[field_name] = attr.value.data if field_name != "persistent" else bool(attr.value.data)
            elif isinstance(attr, UnitAttr):
                values[field_name] = True
        return KernelPlan(**values)  # type: ignore[arg-type]
