builtin.module {
  tile.kernel @a(%X: !tile.gl<[M, N], bf16>, %Y: !tile.gl<[M, N], bf16>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], bf16>
    %N = tile.dim %X[1] : !tile.gl<[M, N], bf16>
    %0 = arith.constant 64 : index
    %1 = arith.divui %M, %0 : index
    %2 = arith.constant 64 : index
    %3 = arith.divui %N, %2 : index
    tile.grid(%1, %3) as ["i", "j"]
    %i = tile.block_id 0
    %j = tile.block_id 1
    %4 = tile.load %X[%i, %j] : !tile.gl<[M, N], bf16> -> !tile.st<64x64xbf16>
    %5 = tile.to_reg %4 : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
    tile.store %5, %Y[%i, %j] : !tile.rt<64x64xbf16>, !tile.gl<[M, N], bf16>
    tile.return
  }
  tile.kernel @b(%X: !tile.gl<[M, N], bf16>, %Y: !tile.gl<[M, N], bf16>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], bf16>
    %N = tile.dim %X[1] : !tile.gl<[M, N], bf16>
    %0 = arith.constant 64 : index
    %1 = arith.divui %M, %0 : index
    %2 = arith.constant 64 : index
    %3 = arith.divui %N, %2 : index
    tile.grid(%1, %3) as ["i", "j"]
    %i = tile.block_id 0
    %j = tile.block_id 1
    %4 = tile.load %X[%i, %j] : !tile.gl<[M, N], bf16> -> !tile.st<64x64xbf16>
    %5 = tile.to_reg %4 : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
    tile.store %5, %Y[%i, %j] : !tile.rt<64x64xbf16>, !tile.gl<[M, N], bf16>
    tile.return
  }
}
