// attn_fwd<D = 128, BQ = 128, BKV = 128>, non-causal, as the frontend builds it.
builtin.module {
  tile.kernel @attn_fwd(%Q: !tile.gl<[B, H, N, 128], bf16>, %K: !tile.gl<[B, H, N, 128], bf16>, %V: !tile.gl<[B, H, N, 128], bf16>, %O: !tile.gl<[B, H, N, 128], bf16>, %LSE: !tile.gl<[B, H, N], f32>) {
    %n = tile.dim %Q[2] : !tile.gl<[B, H, N, 128], bf16>
    %h = tile.dim %Q[1] : !tile.gl<[B, H, N, 128], bf16>
    %b = tile.dim %Q[0] : !tile.gl<[B, H, N, 128], bf16>
    %c128 = arith.constant 128 : index
    %gq = arith.divui %n, %c128 : index
    tile.grid(%gq, %h, %b) as ["qi", "h", "b"]
    %qi = tile.block_id 0
    %hi = tile.block_id 1
    %bi = tile.block_id 2
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %q = tile.load %Q[%bi, %hi, %qi, %c0] : !tile.gl<[B, H, N, 128], bf16> -> !tile.st<128x128xbf16>
    %o0 = tile.fill 0.0 : f32 : !tile.rt<128x128xf32>
    %m0 = tile.fill 0xFF800000 : f32 : !tile.rv<128xf32>
    %l0 = tile.fill 0.0 : f32 : !tile.rv<128xf32>
    %scale = arith.constant 0.127517432 : f32
    %o, %m, %l = scf.for %kv = %c0 to %gq step %c1 iter_args(%oi = %o0, %mi = %m0, %li = %l0) -> (!tile.rt<128x128xf32>, !tile.rv<128xf32>, !tile.rv<128xf32>) {
      %k = tile.load %K[%bi, %hi, %kv, %c0] : !tile.gl<[B, H, N, 128], bf16> -> !tile.st<128x128xbf16>
      %v = tile.load %V[%bi, %hi, %kv, %c0] : !tile.gl<[B, H, N, 128], bf16> -> !tile.st<128x128xbf16>
      %s0 = tile.mma %q, %k transpose_b : !tile.st<128x128xbf16>, !tile.st<128x128xbf16> -> !tile.rt<128x128xf32>
      %s = tile.binary mul %s0, %scale : !tile.rt<128x128xf32>, f32 -> !tile.rt<128x128xf32>
      %rmax = tile.reduce max row %s : !tile.rt<128x128xf32> -> !tile.rv<128xf32>
      %mn = tile.binary max %mi, %rmax : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32>
      %sd = tile.broadcast sub row %s, %mn : !tile.rt<128x128xf32>, !tile.rv<128xf32>
      %p = tile.unary exp2 %sd : !tile.rt<128x128xf32>
      %md = tile.binary sub %mi, %mn : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32>
      %alpha = tile.unary exp2 %md : !tile.rv<128xf32>
      %la = tile.binary mul %li, %alpha : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32>
      %rs = tile.reduce sum row %p : !tile.rt<128x128xf32> -> !tile.rv<128xf32>
      %ln = tile.binary add %la, %rs : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32>
      %pb = tile.convert %p : !tile.rt<128x128xf32> -> !tile.rt<128x128xbf16>
      %os = tile.broadcast mul row %oi, %alpha : !tile.rt<128x128xf32>, !tile.rv<128xf32>
      %on = tile.mma %pb, %v, %os : !tile.rt<128x128xbf16>, !tile.st<128x128xbf16>, !tile.rt<128x128xf32> -> !tile.rt<128x128xf32>
      scf.yield %on, %mn, %ln : !tile.rt<128x128xf32>, !tile.rv<128xf32>, !tile.rv<128xf32>
    }
    %od = tile.broadcast div row %o, %l : !tile.rt<128x128xf32>, !tile.rv<128xf32>
    %ob = tile.convert %od : !tile.rt<128x128xf32> -> !tile.rt<128x128xbf16>
    tile.store %ob, %O[%bi, %hi, %qi, %c0] : !tile.rt<128x128xbf16>, !tile.gl<[B, H, N, 128], bf16>
    %lg = tile.unary log2 %l : !tile.rv<128xf32>
    %lse2 = tile.binary add %m, %lg : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32>
    %ln2 = arith.constant 0.693147182 : f32
    %lse = tile.binary mul %lse2, %ln2 : !tile.rv<128xf32>, f32 -> !tile.rv<128xf32>
    tile.store %lse, %LSE[%bi, %hi, %qi] : !tile.rv<128xf32>, !tile.gl<[B, H, N], f32>
    tile.return
  }
}
