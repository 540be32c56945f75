// signature: internal IndexError at passes/convert_tile_to_sm90.py:_emit_op
// tkc compile FILE
  tile.kernel @k5(%X: !tile.gl<[M, N], f32>, %Y: !tile.gl<[M, N], f32>) attributes {params = {BM = 64 : i64, BN = 64 : i64}} {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32>
    %0 = arith.constant 64 : index
    %1 = arith.divui %M, %0 : index
    %2 = arith.constant 64 : index
    %3 = arith.divui %N, %2 : index
    tile.grid(%1, %3) as ["", ""]
    %i = tile.block_id 24
    %j = tile.block_id 1
    %4 = tile.load %X[%i, %j] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %x = tile.to_reg %4 : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    %5 = arith.constant 64 : index
    %6 = arith.muli %i, %5 : index
    %7 = arith.constant 64 : index
    %8 = arith.muli %j, %7 : index
    %9 = tile.mask causal %x, %6, %8 fill -2.000000e+00 : f32 : !tile.rt<64x64xf32>
    tile.store %9, %Y[%i, %j] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }