// signature: internal KeyError at passes/convert_tile_to_sm90.py:_emit_store
// tkc compile FILE
  tile.kernel @two(%X: !tile.gl<[M, N], bf16>, %Y: !tile.gl<[M, N], f32>, %S: !tile.gl<[M], f32>) attributes {params = {BM = 64 : i64, BN = 128 : i64}} {
    %M = tile.dim %X[0] : !tile.gl<[M, N], bf16>
    %N = tile.dim %X[1] : !tile.gl<[M, N], bf16>
    %0 = arith.constant 64 : index
    %1 = arith.divui %M, %0 : index
    tile.grid(%1) as [""]
    %i = tile.block_id 0
    %acc = tile.fill 0.000000e+00 : f32 : !tile.rv<64xf32>
    %2 = arith.constant 0 : index
    %3 = arith.constant 128 : index
    %4 = arith.divui %N, %3 : index
    %5 = arith.constant 1 : index
    %acc_1 = scf.for %c = %2 to %4 step %5 iter_args(%acc_2 = %acc) -> (!tile.rv<64xf32>) {
      %6 = tile.load %X[%i, %c] : !tile.gl<[M, N], bf16> -> !tile.st<64x128xbf16>
      %7 = tile.to_reg %6 : !tile.st<64x128xbf16> -> !tile.rt<64x128xbf16>
      %x = tile.convert %7 : !tile.rt<64x128xbf16> -> !tile.rt<64x128xf32>
      tile.store %8, %Y[%i, %c] : !tile.rt<64x128xf32>, !tile.gl<[M, N], f32>
      %8 = tile.binary mul %x, %x : !tile.rt<64x128xf32>, !tile.rt<64x128xf32> -> !tile.rt<64x128xf32>
      %9 = tile.reduce sum row %x : !tile.rt<64x128xf32> -> !tile.rv<64xf32>
      %acc_3 = tile.binary add %acc_2, %9 : !tile.rv<64xf32>, !tile.rv<64xf32> -> !tile.rv<64xf32>
      scf.yield %acc_3 : !tile.rv<64xf32>
    }
    tile.return
  }