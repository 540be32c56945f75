// tkc compile and tkc-opt take the same IR dump and timing flags and print the same headers (in
// mlir-opt's style) and the same timing report, all to stderr.
// RUN: tkc compile %S/Inputs/gemm.mlir --emit=tile --print-ir-after=cse --print-ir-before=cse -o %t.tkc 2> %t.tkc.err
// RUN: tkc-opt %S/Inputs/gemm.mlir -p canonicalize,tile-hoist-invariants,cse --print-ir-after=cse --print-ir-before=cse -o %t.opt 2> %t.opt.err
// RUN: filecheck %s --check-prefix=DUMP < %t.tkc.err
// RUN: filecheck %s --check-prefix=DUMP < %t.opt.err
// RUN: tkc compile %S/Inputs/gemm.mlir --emit=tile --print-ir-before-all 2>&1 >/dev/null | filecheck %s --check-prefix=BEFORE-ALL
// RUN: tkc-opt %S/Inputs/gemm.mlir -p canonicalize,tile-hoist-invariants,cse --print-ir-before-all 2>&1 >/dev/null | filecheck %s --check-prefix=BEFORE-ALL
// RUN: tkc compile %S/Inputs/gemm.mlir --emit=tile --timing 2>&1 >/dev/null | filecheck %s --check-prefix=TIMING
// RUN: tkc-opt %S/Inputs/gemm.mlir -p canonicalize,tile-hoist-invariants,cse --timing 2>&1 >/dev/null | filecheck %s --check-prefix=TIMING

// xdsl-opt's spellings stay in tkc-opt, as other names of the same flags.
// RUN: tkc-opt %S/Inputs/gemm.mlir -p canonicalize,cse --print-between-passes --time-passes 2>&1 >/dev/null | filecheck %s --check-prefix=ALIASES

// tkc-opt's --print-ir-after names a pass of its -p pipeline; --dump-dir takes one module.
// RUN: not tkc-opt %S/Inputs/gemm.mlir -p canonicalize --print-ir-after=cse 2>&1 | filecheck %s --check-prefix=ABSENT
// RUN: not tkc-opt %S/Inputs/gemm.mlir --split-input-file --dump-dir %t.dir 2>&1 | filecheck %s --check-prefix=SPLIT

// DUMP:      // -----// IR Dump Before cse //----- //
// DUMP-NEXT: builtin.module {
// DUMP:      // -----// IR Dump After cse //----- //
// DUMP-NEXT: builtin.module {
// DUMP-NOT:  // -----//

// BEFORE-ALL: // -----// IR Dump Before canonicalize //----- //
// BEFORE-ALL: // -----// IR Dump Before cse //----- //
// BEFORE-ALL-NOT: IR Dump After

// TIMING:      ... Pass execution timing report ...
// TIMING:      Total Execution Time: {{[0-9.]+}} seconds
// TIMING:      ----Wall Time----  ----Name----
// TIMING-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  canonicalize
// TIMING-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  tile-hoist-invariants
// TIMING-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  cse
// TIMING:      (verification)
// TIMING-NEXT: {{[0-9.]+}} (100.0%)  Total

// ALIASES: // -----// IR Dump After canonicalize //----- //
// ALIASES: // -----// IR Dump After cse //----- //
// ALIASES: ... Pass execution timing report ...

// ABSENT: tkc-opt: error: --print-ir-after=cse: cse does not run in the pipeline of -p (the passes that run: canonicalize)
// SPLIT: tkc-opt: error: --dump-dir takes one module: it cannot be combined with --split-input-file
