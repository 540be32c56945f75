// nested<BM = 64, BN = 64, BK = 64>: a row-panel GEMM (a loop over column tiles j, a K loop in
// it) whose odd K steps take B from another tensor (an if that loads), as the frontend builds it.
builtin.module {
  tile.kernel @nested(%A: !tile.gl<[M, K], bf16>, %B0: !tile.gl<[K, N], bf16>, %B1: !tile.gl<[K, N], bf16>, %C: !tile.gl<[M, N], bf16>) {
    %m = tile.dim %A[0] : !tile.gl<[M, K], bf16>
    %k = tile.dim %A[1] : !tile.gl<[M, K], bf16>
    %n = tile.dim %C[1] : !tile.gl<[M, N], bf16>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %gm = arith.divui %m, %c64 : index
    %kt = arith.divui %k, %c64 : index
    %nt = arith.divui %n, %c64 : index
    tile.grid(%gm) as ["i"]
    %i = tile.block_id 0
    %zero = tile.fill 0.0 : f32 : !tile.rt<64x64xf32>
    scf.for %j = %c0 to %nt step %c1 {
      %acc = scf.for %kk = %c0 to %kt step %c1 iter_args(%acc_i = %zero) -> (!tile.rt<64x64xf32>) {
        %a = tile.load %A[%i, %kk] : !tile.gl<[M, K], bf16> -> !tile.st<64x64xbf16>
        %r = arith.remui %kk, %c2 : index
        %even = arith.cmpi eq, %r, %c0 : index
        %acc_n = scf.if %even -> (!tile.rt<64x64xf32>) {
          %b0 = tile.load %B0[%kk, %j] : !tile.gl<[K, N], bf16> -> !tile.st<64x64xbf16>
          %p0 = tile.mma %a, %b0, %acc_i : !tile.st<64x64xbf16>, !tile.st<64x64xbf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
          scf.yield %p0 : !tile.rt<64x64xf32>
        } else {
          %b1 = tile.load %B1[%kk, %j] : !tile.gl<[K, N], bf16> -> !tile.st<64x64xbf16>
          %p1 = tile.mma %a, %b1, %acc_i : !tile.st<64x64xbf16>, !tile.st<64x64xbf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
          scf.yield %p1 : !tile.rt<64x64xf32>
        }
        scf.yield %acc_n : !tile.rt<64x64xf32>
      }
      %out = tile.convert %acc : !tile.rt<64x64xf32> -> !tile.rt<64x64xbf16>
      tile.store %out, %C[%i, %j] : !tile.rt<64x64xbf16>, !tile.gl<[M, N], bf16>
    }
    tile.return
  }
}
