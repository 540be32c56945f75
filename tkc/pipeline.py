"""The pass pipeline's names and the stages `--emit` can stop at, as plain data.

Kept apart from `tkc.driver` (which imports xDSL) so the CLI can build its parser and answer a
compile from the cache (tkc.cache) without loading the compiler.
"""

from __future__ import annotations

TILE_PASSES = (
    "canonicalize",
    "cse",
    "tile-rematerialize",
    "tile-mask-tails",
    "tile-vector-layout",
    "tile-memory-order",
    "tile-swizzle-select",
    "tile-bank-conflicts",
    "tile-occupancy-plan",
    "tile-pipeline",
    "tile-warp-specialize",
)
SM90_PASSES = ("convert-tile-to-sm90", "sm90-build-rings", "sm90-verify-barriers")
PTX_PASSES = ("convert-sm90-to-ptx", "ptx-flatten-control-flow")
PIPELINE = TILE_PASSES + SM90_PASSES + PTX_PASSES
"""Every pass of a full compilation, in order."""

CHECK_ONLY_PASSES = frozenset({"sm90-verify-barriers"})
"""Passes that check the IR and change none of it: the IR after them is the IR before them, which
was verified, so `tkc compile` does not verify it again (tests/unit/test_verification.py holds
them to it)."""
VERIFIED_AFTER_NEXT = frozenset({"convert-sm90-to-ptx"})
"""Passes whose output `tkc compile` verifies after the next pass instead, when one runs: the PTX
module is some forty times the size of the kernel's tile IR, and verifying it after both PTX
passes took about a third of the passes' time. Invalid IR is still an internal error, naming both passes."""

EMITS = ("tile", "sm90", "ptx", "cubin", "sass")
"""Stages `--emit` can stop at; the first two print MLIR, the rest go through the backend."""


class StageUnavailable(Exception):
    """A stage of the compiler the request needs is not part of this build (yet)."""
