// Row vectors of bf16 and fp8 hold one value per register (a b16; fp8 in its low byte): they
// load with ld.shared.b16 / ld.shared.b8, widen to f32 (cvt.f32.bf16; fp8 through
// cvt.rn.f16x2.e5m2x2, keeping the low half), narrow back (cvt.rn.bf16.f32; fp8 packs the value
// with itself, satfinite) and store with st.global.b16 / st.global.b8 at 2- and 1-byte strides.
// RUN: tkc compile %s --emit=ptx | filecheck %s
// RUN: tkc compile %s --emit=cubin -o %t.cubin
// CHECK:      ld.shared.b16 %rs[[V0:[0-9]+]], [%r[[VA:[0-9]+]]];
// CHECK-NEXT: ld.shared.b16 %rs[[V1:[0-9]+]], [%r[[VA]]+16];
// CHECK-NEXT: cvt.f32.bf16 %f{{[0-9]+}}, %rs[[V0]];
// CHECK:      ld.shared.b8 %rs[[F0:[0-9]+]], [%r[[FA:[0-9]+]]];
// CHECK-NEXT: ld.shared.b8 %rs{{[0-9]+}}, [%r[[FA]]+8];
// CHECK-NEXT: cvt.rn.f16x2.e5m2x2 %r[[PAIR:[0-9]+]], %rs[[F0]];
// CHECK-NEXT: mov.b32 {%rs[[LO:[0-9]+]], %rs{{[0-9]+}}}, %r[[PAIR]];
// CHECK-NEXT: cvt.f32.f16 %f{{[0-9]+}}, %rs[[LO]];
// CHECK:      cvt.rn.satfinite.e4m3x2.f32 %rs[[Q:[0-9]+]], %f[[S:[0-9]+]], %f[[S]];
// CHECK:      st.global.b8 [%rd[[WA:[0-9]+]]], %rs[[Q]];
// CHECK:      st.global.b8 [%rd[[WA]]+8], %rs{{[0-9]+}};
// CHECK:      cvt.rn.bf16.f32 %rs[[B:[0-9]+]], %f{{[0-9]+}};
// CHECK:      st.global.b16 [%rd[[ZA:[0-9]+]]], %rs[[B]];
// CHECK:      st.global.b16 [%rd[[ZA]]+16], %rs{{[0-9]+}};

builtin.module {
  tile.kernel @narrow_rows(%V: !tile.gl<[M], bf16>, %F: !tile.gl<[M], f8E5M2>, %W: !tile.gl<[M], f8E4M3FN>, %Z: !tile.gl<[M], bf16>) {
    %M = tile.dim %V[0] : !tile.gl<[M], bf16>
    %0 = arith.constant 64 : index
    %1 = arith.ceildivui %M, %0 : index
    tile.grid(%1) as ["i"]
    %i = tile.block_id 0
    %2 = tile.load %V[%i] : !tile.gl<[M], bf16> -> !tile.sv<64xbf16>
    %3 = tile.to_reg %2 : !tile.sv<64xbf16> -> !tile.rv<64xbf16>
    %v = tile.convert %3 : !tile.rv<64xbf16> -> !tile.rv<64xf32>
    %4 = tile.load %F[%i] : !tile.gl<[M], f8E5M2> -> !tile.sv<64xf8E5M2>
    %5 = tile.to_reg %4 : !tile.sv<64xf8E5M2> -> !tile.rv<64xf8E5M2>
    %6 = tile.convert %5 : !tile.rv<64xf8E5M2> -> !tile.rv<64xf32>
    %7 = tile.binary add %v, %6 : !tile.rv<64xf32>, !tile.rv<64xf32> -> !tile.rv<64xf32>
    %8 = tile.convert %7 : !tile.rv<64xf32> -> !tile.rv<64xf8E4M3FN>
    tile.store %8, %W[%i] : !tile.rv<64xf8E4M3FN>, !tile.gl<[M], f8E4M3FN>
    %9 = arith.constant 2.000000e+00 : f32
    %10 = tile.binary mul %v, %9 : !tile.rv<64xf32>, f32 -> !tile.rv<64xf32>
    %11 = tile.convert %10 : !tile.rv<64xf32> -> !tile.rv<64xbf16>
    tile.store %11, %Z[%i] : !tile.rv<64xbf16>, !tile.gl<[M], bf16>
    tile.return
  }
}
