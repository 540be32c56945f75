// A pass name that is not in the pipeline is a user error (status 1) listing the valid names.
// RUN: not tkc compile %S/Inputs/gemm.mlir --emit=tile --print-ir-after=tile-nonsense 2>&1 | filecheck %s
// RUN: not tkc compile %S/Inputs/gemm.mlir --emit=tile --print-ir-before=nope 2>&1 | filecheck %s --check-prefix=BEFORE
// RUN: sh -c 'tkc compile %S/Inputs/gemm.mlir --emit=tile --print-ir-after=nope 2>/dev/null; echo "exit $?"' | filecheck %s --check-prefix=STATUS

// CHECK: tkc: error: unknown pass 'tile-nonsense' in --print-ir-after; valid passes: canonicalize, cse, tile-mask-tails, tile-vector-layout, tile-memory-order, tile-swizzle-select, tile-bank-conflicts, tile-occupancy-plan, tile-pipeline, tile-warp-specialize, convert-tile-to-sm90, sm90-build-rings, sm90-verify-barriers, convert-sm90-to-ptx, ptx-flatten-control-flow
// BEFORE: tkc: error: unknown pass 'nope' in --print-ir-before; valid passes: canonicalize,
// STATUS: exit 1
