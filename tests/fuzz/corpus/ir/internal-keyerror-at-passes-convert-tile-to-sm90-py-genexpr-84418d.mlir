// signature: internal KeyError at passes/convert_tile_to_sm90.py:<genexpr>
// tkc compile FILE
  tile.kernel @gemm_fp8(%A: !tile.gl<[M, K], f8E4M3FN>, %B: !tile.gl<[N, K], f8E4M3FN>, %C: !tile.gl<[M, N], bf16>) attributes {params = {BM = 128 : i64, BN = 256 : i64, BK = 128 : i64}} {
    %M = tile.dim %A[0] : !tile.gl<[M, K], f8E4M3FN>
    %N = tile.dim %B[0] : !tile.gl<[N, K], f8E4M3FN>
    %K = tile.dim %A[1] : !tile.gl<[M, K], f8E4M3FN>
    %0 = arith.constant 128 : index
    %1 = arith.divui %M, %0 : index
    %2 = arith.constant 256 : index
    %3 = arith.divui %N, %2 : index
    tile.grid(%1, %3) as ["", ""]
    %i = tile.block_id 0
    %j = tile.block_id 1
    %acc = tile.fill 0.000000e+00 : f32 : !tile.rt<128x256xf32>
    %4 = arith.constant 0 : index
    %5 = arith.constant 128 : index
    %8 = tile.convert %acc_1 : !tile.rt<128x256xf32> -> !tile.rt<128x256xbf16>
    %7 = arith.constant 1 : index
    %acc_1 = scf.for %k = %4 to %6 step %7 iter_args(%acc_2 = %acc) -> (!tile.rt<128x256xf32>) {
      %a = tile.load %A[%i, %k] : !tile.gl<[M, K], f8E4M3FN> -> !tile.st<128x128xf8E4M3FN>
      %b = tile.load %B[%j, %k] : !tile.gl<[N, K], f8E4M3FN> -> !tile.st<256x128xf8E4M3FN>
      %acc_3 = tile.mma %a, %b, %acc_2 transpose_b : !tile.st<128x128xf8E4M3FN>, !tile.st<256x128xf8E4M3FN>, !tile.rt<128x256xf32> -> !tile.rt<128x256xf32>
      scf.yield %acc_3 : !tile.rt<128x256xf32>
    }
    %6 = arith.divui %K, %5 : index
    tile.store %8, %C[%i, %j] : !tile.rt<128x256xbf16>, !tile.gl<[M, N], bf16>
    tile.return
  }