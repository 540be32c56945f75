// A dump of a pass that does not run in this compile is a user error (status 1) naming the passes
// that run, and the one meant when the name is misspelt.
// RUN: not tkc compile %S/Inputs/gemm.mlir --emit=tile --print-ir-after=tile-nonsense 2>&1 | filecheck %s
// RUN: not tkc compile %S/Inputs/gemm.mlir --emit=tile --print-ir-before=tile-pipelin 2>&1 | filecheck %s --check-prefix=BEFORE
// RUN: sh -c 'tkc compile %S/Inputs/gemm.mlir --emit=tile --print-ir-after=nope 2>/dev/null; echo "exit $?"' | filecheck %s --check-prefix=STATUS

// CHECK: {{.*}}gemm.mlir: error: --print-ir-after=tile-nonsense: tile-nonsense does not run in this compile to tile (the passes that run: canonicalize, tile-hoist-invariants, cse, tile-sweep-order, tile-rematerialize, tile-mask-tails, tile-vector-layout, tile-memory-order, tile-swizzle-select, tile-bank-conflicts, tile-occupancy-plan, tile-retain-sweep, tile-pipeline, tile-warp-specialize)
// BEFORE: {{.*}}gemm.mlir: error: --print-ir-before=tile-pipelin: tile-pipelin does not run in this compile to tile (the passes that run: canonicalize, {{.*}}); did you mean 'tile-pipeline'?
// STATUS: exit 1
