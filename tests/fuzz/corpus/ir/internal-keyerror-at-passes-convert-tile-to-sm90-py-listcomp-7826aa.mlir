// signature: internal KeyError at passes/convert_tile_to_sm90.py:<listcomp>
// tkc compile FILE
  tile.kernel @k2(%X: !tile.gl<[B, M, N], f32>, %Y: !tile.gl<[N], f32>) attributes {params = {BM = 64 : i64, BN = 64 : i64}} {
    %M = tile.dim %X[1] : !tile.gl<[B, M, N], f32>
    %N = tile.dim %X[2] : !tile.gl<[B, M, N], f32>
    %B = tile.dim %X[0] : !tile.gl<[B, M, N], f32>
    %0 = arith.constant 64 : index
    tile.grid(%1, %3, %B) as ["", "", ""]
    %2 = arith.constant 64 : index
    %3 = arith.divui %N, %2 : index
    %1 = arith.divui %M, %0 : index
    %i = tile.block_id 0
    %j = tile.block_id 1
    %5 = arith.cmpi ugt, %i, %j : index
    %x_1 = scf.if %5 -> (!tile.rt<64x64xf32>) {
    }
    tile.return
  }