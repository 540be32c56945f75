// gemm<BM = 128, BN = 256, BK = 64>: C = A @ B, as the frontend builds it.
builtin.module {
  tile.kernel @gemm(%A: !tile.gl<[M, K], bf16>, %B: !tile.gl<[K, N], bf16>, %C: !tile.gl<[M, N], bf16>) {
    %m = tile.dim %A[0] : !tile.gl<[M, K], bf16>
    %n = tile.dim %B[1] : !tile.gl<[K, N], bf16>
    %k = tile.dim %A[1] : !tile.gl<[M, K], bf16>
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %c64 = arith.constant 64 : index
    %gm = arith.divui %m, %c128 : index
    %gn = arith.divui %n, %c256 : index
    %kt = arith.divui %k, %c64 : index
    tile.grid(%gm, %gn) as ["i", "j"]
    %i = tile.block_id 0
    %j = tile.block_id 1
    %acc0 = tile.fill 0.0 : f32 : !tile.rt<128x256xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %acc = scf.for %kk = %c0 to %kt step %c1 iter_args(%acc_i = %acc0) -> (!tile.rt<128x256xf32>) {
      %a = tile.load %A[%i, %kk] : !tile.gl<[M, K], bf16> -> !tile.st<128x64xbf16>
      %b = tile.load %B[%kk, %j] : !tile.gl<[K, N], bf16> -> !tile.st<64x256xbf16>
      %acc_n = tile.mma %a, %b, %acc_i : !tile.st<128x64xbf16>, !tile.st<64x256xbf16>, !tile.rt<128x256xf32> -> !tile.rt<128x256xf32>
      scf.yield %acc_n : !tile.rt<128x256xf32>
    }
    %out = tile.convert %acc : !tile.rt<128x256xf32> -> !tile.rt<128x256xbf16>
    tile.store %out, %C[%i, %j] : !tile.rt<128x256xbf16>, !tile.gl<[M, N], bf16>
    tile.return
  }
}
