// --print-ir-after-all prints a header and the module after every pass that ran, to stderr;
// stdout holds only the result.
// RUN: tkc compile %S/Inputs/gemm.mlir --emit=tile --print-ir-after-all 2>&1 >/dev/null | filecheck %s
// RUN: tkc compile %S/Inputs/gemm.mlir --emit=tile --print-ir-after-all 2>/dev/null | filecheck %s --check-prefix=OUT

// CHECK:      // -----// IR Dump After canonicalize //----- //
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   tile.kernel @gemm
// CHECK:        tile.store
// CHECK:      // -----// IR Dump After cse //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        tile.store

// OUT-NOT:  IR Dump
// OUT:      builtin.module {
// OUT-NEXT:   tile.kernel @gemm
// OUT:          tile.mma
// OUT:          tile.store
// OUT-NOT:  IR Dump
