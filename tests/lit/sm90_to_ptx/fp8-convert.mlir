// fp8 register tiles: a pair of fp8 values shares one b16 register (cvt's e4m3x2/e5m2x2 forms).
// f32 packs into fp8 with satfinite; bf16 widens to f32 first (exact), then packs; fp8 widens
// through f16x2 (exact) to f32, and from there packs into bf16. Shared tiles move as b16.
// RUN: tkc compile %s --emit=ptx | filecheck %s
// RUN: tkc compile %s --emit=cubin -o %t.cubin
// CHECK:     cvt.rn.satfinite.e4m3x2.f32 %rs{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}};
// CHECK:     st.shared.b16 [%r{{[0-9]+}}], %rs{{[0-9]+}};
// CHECK:     cvt.f32.bf16 %f{{[0-9]+}}, %rs{{[0-9]+}};
// CHECK:     cvt.rn.satfinite.e4m3x2.f32
// CHECK:     ld.shared.b16 %rs{{[0-9]+}}, [%r{{[0-9]+}}];
// CHECK:     cvt.rn.f16x2.e5m2x2 %r[[PAIR:[0-9]+]], %rs{{[0-9]+}};
// CHECK:     mov.b32 {%rs[[LO:[0-9]+]], %rs[[HI:[0-9]+]]}, %r[[PAIR]];
// CHECK:     cvt.f32.f16 %f{{[0-9]+}}, %rs[[LO]];
// CHECK:     cvt.f32.f16 %f{{[0-9]+}}, %rs[[HI]];
// CHECK:     cvt.rn.bf16x2.f32 %r{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}};

builtin.module {
  tile.kernel @conv(%X: !tile.gl<[M, 64], f32>, %H: !tile.gl<[M, 64], bf16>, %E: !tile.gl<[M, 64], f8E5M2>, %Q: !tile.gl<[M, 64], f8E4M3FN>, %R: !tile.gl<[M, 64], f8E4M3FN>, %Y: !tile.gl<[M, 64], f32>, %Z: !tile.gl<[M, 64], bf16>) {
    %M = tile.dim %X[0] : !tile.gl<[M, 64], f32>
    %0 = arith.constant 64 : index
    %1 = arith.ceildivui %M, %0 : index
    tile.grid(%1) as ["i"]
    %i = tile.block_id 0
    %2 = arith.constant 0 : index
    %3 = tile.load %X[%i, %2] : !tile.gl<[M, 64], f32> -> !tile.st<64x64xf32>
    %x = tile.to_reg %3 : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    %4 = tile.convert %x : !tile.rt<64x64xf32> -> !tile.rt<64x64xf8E4M3FN>
    %5 = arith.constant 0 : index
    tile.store %4, %Q[%i, %5] : !tile.rt<64x64xf8E4M3FN>, !tile.gl<[M, 64], f8E4M3FN>
    %6 = arith.constant 0 : index
    %7 = tile.load %H[%i, %6] : !tile.gl<[M, 64], bf16> -> !tile.st<64x64xbf16>
    %h = tile.to_reg %7 : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
    %8 = tile.convert %h : !tile.rt<64x64xbf16> -> !tile.rt<64x64xf8E4M3FN>
    %9 = arith.constant 0 : index
    tile.store %8, %R[%i, %9] : !tile.rt<64x64xf8E4M3FN>, !tile.gl<[M, 64], f8E4M3FN>
    %10 = arith.constant 0 : index
    %11 = tile.load %E[%i, %10] : !tile.gl<[M, 64], f8E5M2> -> !tile.st<64x64xf8E5M2>
    %e = tile.to_reg %11 : !tile.st<64x64xf8E5M2> -> !tile.rt<64x64xf8E5M2>
    %12 = tile.convert %e : !tile.rt<64x64xf8E5M2> -> !tile.rt<64x64xf32>
    %13 = arith.constant 0 : index
    tile.store %12, %Y[%i, %13] : !tile.rt<64x64xf32>, !tile.gl<[M, 64], f32>
    %14 = tile.convert %e : !tile.rt<64x64xf8E5M2> -> !tile.rt<64x64xbf16>
    %15 = arith.constant 0 : index
    tile.store %14, %Z[%i, %15] : !tile.rt<64x64xbf16>, !tile.gl<[M, 64], bf16>
    tile.return
  }
}
