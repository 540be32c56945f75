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

EMITS = ("tile", "sm90", "ptx", "cubin", "sass")
"""Stages `--emit` can stop at; the first two print MLIR, the rest go through the backend."""


class StageUnavailable(Exception):
    """A stage of the compiler the request needs is not part of this build (yet)."""
