"""The pass pipeline's names and the stages `--emit` can stop at, as plain data.

Kept apart from `tkc.driver` (which imports xDSL) so the CLI can build its parser and answer a
compile from the cache (tkc.cache) without loading the compiler.
"""

from __future__ import annotations

TILE_PASSES = (
    "canonicalize",
    "tile-hoist-invariants",
    "cse",
    "tile-sweep-order",
    "tile-rematerialize",
    "tile-mask-tails",
    "tile-vector-layout",
    "tile-memory-order",
    "tile-swizzle-select",
    "tile-bank-conflicts",
    "tile-occupancy-plan",
    "tile-retain-sweep",
    "tile-pipeline",
    "tile-warp-specialize",
)
SM90_PASSES = ("convert-tile-to-sm90", "sm90-build-rings", "sm90-schedule-wgmma", "sm90-verify-barriers")
PTX_PASSES = ("convert-sm90-to-ptx", "ptx-flatten-control-flow")
PIPELINE = TILE_PASSES + SM90_PASSES + PTX_PASSES
"""Every pass of a full compilation, in order."""

CHECK_ONLY_PASSES = frozenset({"sm90-verify-barriers"})
"""Passes that check the IR and change none of it (tests/unit/test_verification.py holds them to it)."""
STAGE_ENDS = frozenset(
    next(name for name in reversed(stage) if name not in CHECK_ONLY_PASSES)
    for stage in (TILE_PASSES, SM90_PASSES, PTX_PASSES)
)
"""The last pass that changes each stage's IR. `tkc compile` verifies the IR after every tile and
sm90 pass, but within the PTX stage only after its last: the PTX module is some forty times the
size of the tile IR, and verifying it after each PTX pass took longer than the passes
themselves (`--verify-each`, TKC_VERIFY_EACH=1, which the test suite sets, verifies after every
pass). A pass that breaks the IR is still an internal error, naming the passes since the last
verification. The check-only passes run on verified IR."""

EMITS = ("tile", "sm90", "ptx", "cubin", "sass")
"""Stages `--emit` can stop at; the first two print MLIR, the rest go through the backend."""


class StageUnavailable(Exception):
    """A stage of the compiler the request needs is not part of this build (yet)."""
