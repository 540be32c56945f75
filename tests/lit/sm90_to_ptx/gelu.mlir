// gelu (erf form): PTX has no erf, so each element computes q = erfc(|x|/sqrt(2)) by the fit of
// tile.GELU_ERFC_COEFFICIENTS (t = 1/(1 + z/2), a degree-9 polynomial in t by fma, one ex2) and
// selects x (1 - q/2) for x >= 0, x q/2 below.
// RUN: tkc compile %s --emit=ptx | filecheck %s
// RUN: tkc compile %s --emit=cubin -o %t.cubin
// CHECK:      abs.f32 %f[[ABS:[0-9]+]], %f[[X:[0-9]+]];
// CHECK-NEXT: mul.f32 %f[[Z:[0-9]+]], %f[[ABS]], 0f3F3504F3;
// CHECK:      rcp.approx.ftz.f32 %f[[T:[0-9]+]], %f{{[0-9]+}};
// CHECK-COUNT-9: fma.rn.f32 %f{{[0-9]+}}, %f[[T]], %f{{[0-9]+}}, 0f{{[0-9A-F]+}};
// CHECK-NEXT: neg.f32 %f[[NEGZ:[0-9]+]], %f[[Z]];
// CHECK-NEXT: fma.rn.f32 %f[[E:[0-9]+]], %f[[NEGZ]], %f[[Z]], %f{{[0-9]+}};
// CHECK-NEXT: mul.f32 %f[[E2:[0-9]+]], %f[[E]], 0f3FB8AA3B;
// CHECK-NEXT: ex2.approx.ftz.f32 %f[[EXP:[0-9]+]], %f[[E2]];
// CHECK-NEXT: mul.f32 %f[[Q:[0-9]+]], %f[[T]], %f[[EXP]];
// CHECK-NEXT: mul.f32 %f[[HALFQ:[0-9]+]], %f[[Q]], 0f3F000000;
// CHECK:      sub.f32 %f[[POS:[0-9]+]], %f{{[0-9]+}}, %f[[HALFQ]];
// CHECK-NEXT: setp.ge.f32 %p[[NONNEG:[0-9]+]], %f[[X]], 0f00000000;
// CHECK-NEXT: selp.f32 %f[[FACTOR:[0-9]+]], %f[[POS]], %f[[HALFQ]], %p[[NONNEG]];
// CHECK-NEXT: mul.f32 %f{{[0-9]+}}, %f[[X]], %f[[FACTOR]];

builtin.module {
  tile.kernel @gelu_f32(%X: !tile.gl<[M, 64], f32>, %Y: !tile.gl<[M, 64], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, 64], f32>
    %0 = arith.constant 64 : index
    %1 = arith.ceildivui %M, %0 : index
    tile.grid(%1) as ["i"]
    %i = tile.block_id 0
    %2 = arith.constant 0 : index
    %3 = tile.load %X[%i, %2] : !tile.gl<[M, 64], f32> -> !tile.st<64x64xf32>
    %4 = tile.to_reg %3 : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    %5 = tile.unary gelu %4 : !tile.rt<64x64xf32>
    %6 = arith.constant 0 : index
    tile.store %5, %Y[%i, %6] : !tile.rt<64x64xf32>, !tile.gl<[M, 64], f32>
    tile.return
  }
}
