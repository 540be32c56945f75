// signature: internal KeyError at passes/convert_tile_to_sm90.py:_issue_mma
// tkc compile FILE
  tile.kernel @attn_small(%Q: !tile.gl<[B, H, N, 64], bf16>, %K: !tile.gl<[B, H, N, 64], bf16>, %V: !tile.gl<[B, H, N, 64], bf16>, %O: !tile.gl<[B, H, N, 64], bf16>) attributes {plan = #tile.plan<consumers = #tile.decision<1, " ">, threads = #tile.decision<256, " ">, persistent = #tile.decision<0, " ">, stages = #tile.decision<4, "4 stages fit (1 KB for 10 mbarriers + 8192 B of single tiles (the epilogue stages its output in them) + 4 x 16384 B ring + 1 KB alignment slack); the deepest ring tkc builds (as ThunderKittens)">, smem_bytes = #tile.decision<75776, "1 KB for 10 mbarriers + 8192 B of single tiles (the epilogue stages its output in them) + 4 x 16384 B ring + 1 KB alignment slack; budget 232448">, group_m = #tile.decision<1, "one CTA per tile: launch order">, ctas_per_sm = #tile.decision<2, "two blocks fit: 75776 bytes of shared memory and 216 registers per consumer thread each">, producer_registers = #tile.decision<40, "256 threads get 128 registers each at entry (32768 in all); the producer only issues TMA, so 40/216 gives the consumers the rest; they need about 132">, consumer_registers = #tile.decision<216, "256 threads get 128 registers each at entry (32768 in all); the producer only issues TMA, so 40/216 gives the consumers the rest; they need about 132">>, params = {D = 64 : i64, BQ = 64 : i64, BKV = 64 : i64}} {
    %N = tile.dim %Q[2] : !tile.gl<[B, H, N, 64], bf16>
    %H = tile.dim %Q[1] : !tile.gl<[B, H, N, 64], bf16>
    %B = tile.dim %Q[0] : !tile.gl<[B, H, N, 64], bf16>
    %0 = arith.constant 64 : index
    %1 = arith.divui %N, %0 : index
    tile.grid(%1, %H, %B) as ["qi", "h", "b"]
    %qi = tile.block_id 0
    %h = tile.block_id 1
    %b = tile.block_id 2
    %2 = arith.constant 0 : index
    %q = tile.load %Q[%b, %h, %qi, %2] {swizzle = #tile.decision<128, "128-byte rows (64 x bf16) as one 128-byte panel (one TMA box); written by TMA, read K-major by wgmma as A">, smem_align = 1024 : i64, smem_offset = 1024 : i64} : !tile.gl<[B, H, N, 64], bf16> -> !tile.st<64x64xbf16, swizzle 128>
    %o = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>
    %m = tile.fill 0xff800000 : f32 : !tile.rv<64xf32>
    %l = tile.fill 0.000000e+00 : f32 : !tile.rv<64xf32>
    %3 = arith.constant 1 : index
    %4 = arith.constant 1.250000e-01 : f32
    %l_1, %o_1, %m_1 = scf.for %kv = %2 to %1 step %3 iter_args(%l_2 = %l, %o_2 = %o, %m_2 = %m) -> (!tile.rv<64xf32>, !tile.rt<64x64xf32>, !tile.rv<64xf32>) {
      %6 = tile.mma %q, %5 transpose_b {a_desc = #tile.decision<4611686293305360384, "0x4000004000010000: K-major, 128B swizzle (layout 1): LBO 16 (unused), SBO 1024 (8 rows x 128 B), k-step +32 B, panels 8192 B apart">, b_desc = #tile.decision<4611686293305360384, "0x4000004000010000: K-major, 128B swizzle (layout 1): LBO 16 (unused), SBO 1024 (8 rows x 128 B), k-step +32 B, panels 8192 B apart">} : !tile.st<64x64xbf16, swizzle 128>, !tile.st<64x64xbf16, swizzle 128> -> !tile.rt<64x64xf32>
      %5 = tile.load %K[%b, %h, %kv, %2] {swizzle = #tile.decision<128, "128-byte rows (64 x bf16) as one 128-byte panel (one TMA box); written by TMA, read K-major by wgmma as B">, smem_align = 1024 : i64, stage_offset = 0 : i64} : !tile.gl<[B, H, N, 64], bf16> -> !tile.st<64x64xbf16, swizzle 128>
      %s = tile.binary mul %6, %4 : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
      %7 = tile.reduce max row %6 : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
      %8 = tile.binary mul %7, %4 : !tile.rv<64xf32>, f32 -> !tile.rv<64xf32>
      %m_new = tile.binary max %m_2, %8 : !tile.rv<64xf32>, !tile.rv<64xf32> -> !tile.rv<64xf32>
      %9 = tile.broadcast sub row %s, %m_new : !tile.rt<64x64xf32>, !tile.rv<64xf32>
      %p = tile.unary relu %9 : !tile.rt<64x64xf32>
      %10 = tile.binary sub %m_2, %m_new : !tile.rv<64xf32>, !tile.rv<64xf32> -> !tile.rv<64xf32>
      %alpha = tile.unary exp %10 : !tile.rv<64xf32>
      %11 = tile.binary mul %l_2, %alpha : !tile.rv<64xf32>, !tile.rv<64xf32> -> !tile.rv<64xf32>
      %12 = tile.reduce sum row %p : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
      %l_3 = tile.binary add %11, %12 : !tile.rv<64xf32>, !tile.rv<64xf32> -> !tile.rv<64xf32>
      %13 = tile.convert %p : !tile.rt<64x64xf32> -> !tile.rt<64x64xbf16>
      %14 = tile.load %V[%b, %h, %kv, %2] {swizzle = #tile.decision<128, "128-byte rows (64 x bf16) as one 128-byte panel (one TMA box); written by TMA, read MN-major by wgmma as B">, smem_align = 1024 : i64, stage_offset = 8192 : i64} : !tile.gl<[B, H, N, 64], bf16> -> !tile.st<64x64xbf16, swizzle 128>
      %15 = tile.broadcast mul row %o_2, %alpha : !tile.rt<64x64xf32>, !tile.rv<64xf32>
      %o_3 = tile.mma %13, %14, %15 {b_desc = #tile.decision<4611686293338849280, "0x4000004002000000: MN-major, 128B swizzle (layout 1): LBO 8192 (next 128-byte MN panel), SBO 1024 (8 rows x 128 B), k-step +2048 B, panels 8192 B apart">} : !tile.rt<64x64xbf16>, !tile.st<64x64xbf16, swizzle 128>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
      scf.yield %l_3, %o_3, %m_new : !tile.rv<64xf32>, !tile.rt<64x64xf32>, !tile.rv<64xf32>
    } {pipeline = #tile.decision<4, "4-stage TMA ring: tile 64x64xbf16 + tile 64x64xbf16 = 16384 bytes per stage, full/empty mbarrier per stage">, ring_offset = 9216 : i64, stage_bytes = 16384 : i64, overlap = #tile.decision<1, "the last mma only accumulates into a carried tile nothing else reads, so it runs one iteration late: each iteration issues its first mma, then the previous iteration's last, and computes on the first product while the tensor cores run both (FlashAttention-3); its stage is freed one iteration later">}
    %16 = tile.broadcast div row %o_1, %l_1 : !tile.rt<64x64xf32>, !tile.rv<64xf32>
    %17 = tile.convert %16 : !tile.rt<64x64xf32> -> !tile.rt<64x64xbf16>
    tile.store %17, %O[%b, %h, %qi, %2] {staging = #tile.decision<128, "64x64xbf16 staging tile, written by st.shared.b32 then one TMA store: 128B swizzle, the fewest wavefronts (bank_conflicts says why)">, bank_conflicts = #tile.decision<1, "st.shared.b32 (4 B/lane): 128B swizzle conflict-free, 64 wavefronts (ideal 64); 64B swizzle conflict-free, 32B swizzle conflict-free, no swizzle 8-way">, smem_access = "st.shared.b32", smem_offset = 1024 : i64} : !tile.rt<64x64xbf16>, !tile.gl<[B, H, N, 64], bf16>
    tile.return
  }