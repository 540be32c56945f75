// sm90.unary's fma_every (the plan's fma_exp2: every k-th register of an exp2 as a polynomial on
// the FMA pipe) holds only on an f32 exp2 and is positive: on another function the lowering would
// compute exp2 there instead.
// RUN: tkc-opt %s --split-input-file --verify-diagnostics | filecheck %s

builtin.module {
  sm90.kernel @k threads 256 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [], grid [1, 1, 1]> {
    %x = sm90.fill 1.000000e+00 : f32 : !sm90.frag<64x64xf32>
    %y = sm90.unary tanh %x fma_every 2 : i64 : !sm90.frag<64x64xf32>
  }
}
// CHECK: unary-invalid.mlir:[[# @LINE - 3]]:5: error: invalid sm90.unary: fma_every is for exp2 (a polynomial of its elements), not tanh

// -----

builtin.module {
  sm90.kernel @k threads 256 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [], grid [1, 1, 1]> {
    %x = sm90.fill 1.000000e+00 : f32 : !sm90.frag<64x64xf32>
    %y = sm90.unary exp2 %x fma_every 0 : i64 : !sm90.frag<64x64xf32>
  }
}
// CHECK: unary-invalid.mlir:[[# @LINE - 3]]:5: error: invalid sm90.unary: fma_every must be positive, got 0
