// Register tiles of 64 and 128 rows in one kernel (tests/gpu/kernels/heights_mixed.tk after tile-vector-layout):
// S = Q K^T has 64 rows, O = S^T V 128.
builtin.module {
  tile.kernel @heights_mixed(%Q: !tile.gl<[NQ, 64], bf16>, %K: !tile.gl<[N, 64], bf16>, %V: !tile.gl<[NQ, 64], bf16>, %M: !tile.gl<[NQ], f32>, %C: !tile.gl<[N], f32>, %P: !tile.gl<[NQ, 128], bf16>, %O: !tile.gl<[N, 64], f32>) attributes {tail_masks = #tile.decision<1, "hand-written">, column_vectors = #tile.decision<2, "hand-written">, params = {BQ = 64 : i64, BKV = 128 : i64, D = 64 : i64}} {
    %0 = arith.constant 128 : index
    %1 = tile.dim %Q[0] : !tile.gl<[NQ, 64], bf16>
    %2 = arith.constant 64 : index
    %N = tile.dim %K[0] : !tile.gl<[N, 64], bf16>
    %3 = arith.constant 128 : index
    %4 = arith.divui %N, %3 : index
    tile.grid(%4) as ["j"]
    %j = tile.block_id 0
    %5 = arith.muli %j, %2 : index
    %6 = arith.subi %1, %5 : index
    %7 = arith.addi %5, %2 : index
    %8 = arith.cmpi ult, %1, %7 : index
    %9 = arith.constant 0 : index
    %q = tile.load %Q[%j, %9] : !tile.gl<[NQ, 64], bf16> -> !tile.st<64x64xbf16>
    %k = tile.load %K[%j, %9] : !tile.gl<[N, 64], bf16> -> !tile.st<128x64xbf16>
    %v = tile.load %V[%j, %9] : !tile.gl<[NQ, 64], bf16> -> !tile.st<64x64xbf16>
    %10 = tile.mma %q, %k transpose_b : !tile.st<64x64xbf16>, !tile.st<128x64xbf16> -> !tile.rt<64x128xf32>
    %11 = scf.if %8 -> (!tile.rt<64x128xf32>) {
      %12 = tile.bounds_mask %10[%6, %0] fill 0.000000e+00 : f32 {tails = "col_sum at line 12 leaves out the rows past the end"} : !tile.rt<64x128xf32>
      scf.yield %12 : !tile.rt<64x128xf32>
    } else {
      scf.yield %10 : !tile.rt<64x128xf32>
    }
    %13 = arith.constant 1.250000e-01 : f32
    %s = tile.binary mul %11, %13 : !tile.rt<64x128xf32>, f32 -> !tile.rt<64x128xf32>
    %14 = tile.reduce max row %11 : !tile.rt<64x128xf32> -> !tile.rv<64xf32>
    %15 = tile.binary mul %14, %13 : !tile.rv<64xf32>, f32 -> !tile.rv<64xf32>
    tile.store %15, %M[%j] : !tile.rv<64xf32>, !tile.gl<[NQ], f32>
    %16 = tile.reduce sum col %11 : !tile.rt<64x128xf32> -> !tile.rv<128xf32, col>
    %17 = tile.binary mul %16, %13 : !tile.rv<128xf32, col>, f32 -> !tile.rv<128xf32, col>
    tile.store %17, %C[%j] : !tile.rv<128xf32, col>, !tile.gl<[N], f32>
    %p = tile.convert %s : !tile.rt<64x128xf32> -> !tile.rt<64x128xbf16>
    tile.store %p, %P[%j, %9] : !tile.rt<64x128xbf16>, !tile.gl<[NQ, 128], bf16>
    %18 = tile.to_shared %p : !tile.rt<64x128xbf16> -> !tile.st<64x128xbf16>
    %19 = tile.mma %18, %v transpose_a : !tile.st<64x128xbf16>, !tile.st<64x64xbf16> -> !tile.rt<128x64xf32>
    tile.store %19, %O[%j, %9] : !tile.rt<128x64xf32>, !tile.gl<[N, 64], f32>
    tile.return
  }
}
