// Every tile op prints, parses back and prints to the same text, in custom and generic form,
// and the two forms agree with each other.
// RUN: tkc-opt %s -o %t.custom
// RUN: tkc-opt %t.custom | diff %t.custom -
// RUN: tkc-opt %s --print-op-generic -o %t.generic
// RUN: tkc-opt %t.generic --print-op-generic | diff %t.generic -
// RUN: tkc-opt %t.generic | diff %t.custom -
// RUN: TKC_ROUNDTRIP

builtin.module {
  tile.kernel @attn_fwd(%Q: !tile.gl<[B, H, N, 128], bf16>, %K: !tile.gl<[B, H, N, 128], bf16>, %V: !tile.gl<[B, H, N, 128], bf16>, %O: !tile.gl<[B, H, N, 128], bf16>, %LSE: !tile.gl<[B, H, N], f32>) attributes {params = {D = 128 : i64, CAUSAL = 1 : i64}, annotations = {consumers = 2 : i64, persistent}} {
    %0 = tile.dim %Q[2] : !tile.gl<[B, H, N, 128], bf16>
    %1 = tile.dim %Q[1] : !tile.gl<[B, H, N, 128], bf16>
    %2 = tile.dim %Q[0] : !tile.gl<[B, H, N, 128], bf16>
    %3 = arith.constant 128 : index
    %4 = arith.divui %0, %3 : index
    tile.grid(%4, %1, %2) as ["qi", "h", "b"]
    %heads = arith.cmpi sle, %1, %0 : index
    tile.require %heads "H <= N"
    %5 = tile.block_id 0
    %6 = tile.block_id 1
    %7 = tile.block_id 2
    %8 = arith.constant 0 : index
    %9 = arith.constant 1 : index
    %10 = tile.load %Q[%7, %6, %5, %8] {swizzle = 128 : i64} : !tile.gl<[B, H, N, 128], bf16> -> !tile.st<128x128xbf16>
    %11 = tile.fill 0.000000e+00 : f32 : !tile.rt<128x128xf32>
    %12 = tile.fill 0xff800000 : f32 : !tile.rv<128xf32>
    %13 = tile.fill 0.000000e+00 : f32 : !tile.rv<128xf32>
    %14 = arith.constant 1.275000e-01 : f32
    %15, %16, %17 = scf.for %18 = %8 to %4 step %9 iter_args(%19 = %11, %20 = %12, %21 = %13) -> (!tile.rt<128x128xf32>, !tile.rv<128xf32>, !tile.rv<128xf32>) {
      %22 = tile.load %K[%7, %6, %18, %8] : !tile.gl<[B, H, N, 128], bf16> -> !tile.st<128x128xbf16>
      %23 = tile.load %V[%7, %6, %18, %8] : !tile.gl<[B, H, N, 128], bf16> -> !tile.st<128x128xbf16>
      %24 = tile.mma %10, %22 transpose_b : !tile.st<128x128xbf16>, !tile.st<128x128xbf16> -> !tile.rt<128x128xf32>
      %25 = tile.binary mul %24, %14 : !tile.rt<128x128xf32>, f32 -> !tile.rt<128x128xf32>
      %26 = arith.muli %5, %3 : index
      %27 = arith.muli %18, %3 : index
      %28 = tile.mask causal %25, %26, %27 fill 0xff800000 : f32 : !tile.rt<128x128xf32>
      %29 = tile.reduce max row %28 : !tile.rt<128x128xf32> -> !tile.rv<128xf32>
      %30 = tile.binary max %20, %29 : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32>
      %31 = tile.broadcast sub row %28, %30 : !tile.rt<128x128xf32>, !tile.rv<128xf32>
      %32 = tile.unary exp2 %31 : !tile.rt<128x128xf32>
      %33 = tile.binary sub %20, %30 : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32>
      %34 = tile.unary exp2 %33 : !tile.rv<128xf32>
      %35 = tile.binary mul %21, %34 : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32>
      %36 = tile.reduce sum row %32 : !tile.rt<128x128xf32> -> !tile.rv<128xf32>
      %37 = tile.binary add %35, %36 : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32>
      %38 = tile.convert %32 : !tile.rt<128x128xf32> -> !tile.rt<128x128xbf16>
      %39 = tile.broadcast mul row %19, %34 : !tile.rt<128x128xf32>, !tile.rv<128xf32>
      %40 = tile.mma %38, %23, %39 : !tile.rt<128x128xbf16>, !tile.st<128x128xbf16>, !tile.rt<128x128xf32> -> !tile.rt<128x128xf32>
      scf.yield %40, %30, %37 : !tile.rt<128x128xf32>, !tile.rv<128xf32>, !tile.rv<128xf32>
    } {stages = 2 : i64}
    %41 = tile.broadcast div row %15, %17 : !tile.rt<128x128xf32>, !tile.rv<128xf32>
    %42 = tile.convert %41 : !tile.rt<128x128xf32> -> !tile.rt<128x128xbf16>
    %43 = tile.to_shared %42 : !tile.rt<128x128xbf16> -> !tile.st<128x128xbf16>
    %44 = tile.to_reg %43 : !tile.st<128x128xbf16> -> !tile.rt<128x128xbf16>
    tile.store %44, %O[%7, %6, %5, %8] : !tile.rt<128x128xbf16>, !tile.gl<[B, H, N, 128], bf16>
    %45 = tile.unary log2 %17 : !tile.rv<128xf32>
    %46 = tile.binary add %16, %45 : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32>
    tile.store %46, %LSE[%7, %6, %5] : !tile.rv<128xf32>, !tile.gl<[B, H, N], f32>
    tile.return
  }
}

// CHECK:      tile.kernel @attn_fwd(%Q: !tile.gl<[B, H, N, 128], bf16>
// CHECK-SAME:   attributes {params = {D = 128 : i64, CAUSAL = 1 : i64}, annotations = {consumers = 2 : i64, persistent}}
// CHECK:        tile.grid(%{{.*}}, %{{.*}}, %{{.*}}) as ["qi", "h", "b"]
// CHECK:        tile.load %Q[{{.*}}] {swizzle = 128 : i64} : !tile.gl<[B, H, N, 128], bf16> -> !tile.st<128x128xbf16>
// CHECK:        tile.fill 0xff800000 : f32 : !tile.rv<128xf32>
// CHECK:        scf.for
// CHECK:          tile.mma %{{.*}}, %{{.*}} transpose_b : !tile.st<128x128xbf16>, !tile.st<128x128xbf16> -> !tile.rt<128x128xf32>
// CHECK:          tile.mask causal
// CHECK:          tile.reduce max row
// CHECK:          tile.broadcast sub row
// CHECK:          tile.unary exp2
// CHECK:          tile.mma %{{.*}}, %{{.*}}, %{{.*}} : !tile.rt<128x128xbf16>, !tile.st<128x128xbf16>, !tile.rt<128x128xf32> -> !tile.rt<128x128xf32>
// CHECK:        } {stages = 2 : i64}
// CHECK:        tile.to_shared
// CHECK:        tile.to_reg
// CHECK:        tile.store %{{.*}}, %O[{{.*}}] : !tile.rt<128x128xbf16>, !tile.gl<[B, H, N, 128], bf16>
// CHECK:        tile.store %{{.*}}, %LSE[{{.*}}] : !tile.rv<128xf32>, !tile.gl<[B, H, N], f32>
// CHECK:        tile.return
