// --print-ir-after=PASS and --print-ir-before=PASS print only around the passes named
// (repeatable); nothing else is printed to stderr.
// RUN: tkc compile %S/Inputs/gemm.mlir --emit=tile --print-ir-after=cse 2>&1 >/dev/null | filecheck %s --check-prefix=AFTER
// RUN: tkc compile %S/Inputs/gemm.mlir --emit=tile --print-ir-before=canonicalize --print-ir-before=cse 2>&1 >/dev/null | filecheck %s --check-prefix=BEFORE

// AFTER-NOT:  IR Dump After canonicalize
// AFTER:      // -----// IR Dump After cse //----- //
// AFTER-NEXT: builtin.module {
// AFTER-NOT:  // -----//

// BEFORE:      // -----// IR Dump Before canonicalize //----- //
// BEFORE-NEXT: builtin.module {
// BEFORE:      // -----// IR Dump Before cse //----- //
// BEFORE-NOT:  IR Dump After
