// `tkc run --interpret` on tile IR: outputs with shape, dtype and checksums; seeded, so two
// runs agree; a size that a rounded-down tile count would cut is a user error (exit 1); a dim without a size gets two tiles.
// RUN: tkc run %s --interpret --size M=256,N=256,K=128 | filecheck %s
// RUN: tkc run %s --interpret --size M=256,N=256,K=128 --seed 3 > %t.a
// RUN: tkc run %s --interpret --size M=256,N=256,K=128 --seed 3 > %t.b
// RUN: diff %t.a %t.b
// RUN: sh -c 'tkc run %s --interpret --size M=200,N=256,K=128 2>&1; echo "exit $?"' | filecheck %s --check-prefix=DIVIDE
// RUN: tkc run %s --interpret --size M=384 | filecheck %s --check-prefix=DEFAULT
// RUN: tkc run %s --bisect --size M=256,N=256,K=128 | filecheck %s --check-prefix=BISECT

// CHECK: gemm: M=256 K=128 N=256  seed 0
// CHECK-NEXT: C: bfloat16 [256, 256]  sum {{[-0-9.e+]+}}  abs-sum {{[0-9.e+]+}}{{$}}
// CHECK-NOT: NaN

// The grid counts tiles of M with a division that rounds down, so M needs whole tiles (the runtime's words).
// DIVIDE: error: M = 200 (from A (dim 0)) is not a multiple of 128: the kernel counts whole tiles of M with a division that rounds down (M / 128), which would skip the last 72; count them with ceildiv(M, 128) to cover the tail
// DIVIDE-NEXT: exit 1

// DEFAULT: gemm: M=384 K=128 N=256  seed 0
// DEFAULT-NEXT: note: --size gave no K, N; tkc run took K=128, N=256 (two tiles, or 2)
// DEFAULT-NEXT: C: bfloat16 [384, 256]

// BISECT: input reference
// BISECT: canonicalize rel change 0.000e+00 same
// BISECT: no pass changes the outputs

builtin.module {
  tile.kernel @gemm(%A: !tile.gl<[M, K], bf16>, %B: !tile.gl<[K, N], bf16>, %C: !tile.gl<[M, N], bf16>) attributes {params = {BM = 128 : i64, BN = 128 : i64, BK = 64 : i64}} {
    %0 = tile.dim %A[0] : !tile.gl<[M, K], bf16>
    %1 = tile.dim %B[1] : !tile.gl<[K, N], bf16>
    %2 = tile.dim %A[1] : !tile.gl<[M, K], bf16>
    %3 = arith.constant 128 : index
    %5 = arith.constant 64 : index
    %6 = arith.divui %0, %3 : index
    %7 = arith.divui %1, %3 : index
    %8 = arith.divui %2, %5 : index
    tile.grid(%6, %7) as ["i", "j"]
    %9 = tile.block_id 0
    %10 = tile.block_id 1
    %11 = tile.fill 0.000000e+00 : f32 : !tile.rt<128x128xf32>
    %12 = arith.constant 0 : index
    %13 = arith.constant 1 : index
    %14 = scf.for %15 = %12 to %8 step %13 iter_args(%16 = %11) -> (!tile.rt<128x128xf32>) {
      %17 = tile.load %A[%9, %15] : !tile.gl<[M, K], bf16> -> !tile.st<128x64xbf16>
      %18 = tile.load %B[%15, %10] : !tile.gl<[K, N], bf16> -> !tile.st<64x128xbf16>
      %19 = tile.mma %17, %18, %16 : !tile.st<128x64xbf16>, !tile.st<64x128xbf16>, !tile.rt<128x128xf32> -> !tile.rt<128x128xf32>
      scf.yield %19 : !tile.rt<128x128xf32>
    }
    %20 = tile.convert %14 : !tile.rt<128x128xf32> -> !tile.rt<128x128xbf16>
    tile.store %20, %C[%9, %10] : !tile.rt<128x128xbf16>, !tile.gl<[M, N], bf16>
    tile.return
  }
}
