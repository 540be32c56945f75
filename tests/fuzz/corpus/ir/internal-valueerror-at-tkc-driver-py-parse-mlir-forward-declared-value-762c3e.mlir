// signature: internal ValueError at tkc/driver.py:parse_mlir (Forward declared values do not have)
// tkc compile FILE
  tile.kernel @colsum(%X: !tile.gl<[M, N], f32>, %S: !tile.gl<[N], f32>) attributes {params = {BM = 64 : i64, BN = 128 : i64}} {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %j = tile.block_id 0
      %8 = tile.reduce sum col %7 : !tile.rt<64x128xf32> -> !tile.rv<128xf32>
    %2 = arith.constant 0 : index
    %3 = arith.constant 64 : index
    %4 = arith.divui %M, %3 : index
    %5 = arith.constant 1 : index
    %acc_1 = scf.for %i = %2 to %4 step %5 iter_args(%acc_2 = %acc) -> (!tile.rv<128xf32>) {
      %6 = tile.load %X[%i, %j] : !tile.gl<[M, N], f32> -> !tile.st<64x128xf32>
      %7 = tile.to_reg %6 : !tile.st<64x128xf32> -> !tile.rt<64x128xf32>
    %acc = tile.fill 0.000000e+00 : f32 : !tile.rv<128xf32>
      %acc_3 = tile.binary add %acc_2, %8 : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32>
      scf.yield %acc_3 : !tile.rv<128xf32>
    }
    tile.return
  }