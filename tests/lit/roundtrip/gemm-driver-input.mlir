// The hand-written GEMM input of the driver tests round-trips too.
// RUN: tkc-opt %S/../driver/Inputs/gemm.mlir -o %t.custom
// RUN: tkc-opt %t.custom | diff %t.custom -
// RUN: tkc-opt %t.custom --print-op-generic -o %t.generic
// RUN: tkc-opt %t.generic --print-op-generic | diff %t.generic -
// RUN: tkc-opt %t.generic | diff %t.custom -
// And so does the IR after every tile-level pass, taken apart again from the stderr dump.
// RUN: tkc compile %S/../driver/Inputs/gemm.mlir --emit=tile --print-ir-after-all -o %t.final 2> %t.dump
// RUN: tkc-opt --split-input-file %t.dump -o %t.dump1
// RUN: tkc-opt --split-input-file %t.dump1 | diff %t.dump1 -
// RUN: tkc-opt --split-input-file %t.dump --print-op-generic | tkc-opt --split-input-file | diff %t.dump1 -
