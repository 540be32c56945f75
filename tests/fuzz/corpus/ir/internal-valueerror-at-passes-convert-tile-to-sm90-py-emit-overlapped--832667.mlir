// signature: internal ValueError at passes/convert_tile_to_sm90.py:_emit_overlapped_for
// tkc compile FILE
  tile.kernel @attn_fwd(%Q: !tile.gl<[B, H, N, 128], bf16>, %K: !tile.gl<[B, H, N, 128], bf16>, %V: !tile.gl<[B, H, N, 128], bf16>, %O: !tile.gl<[B, H, N, 128], bf16>, %LSE: !tile.gl<[N], f32>) attributes {plan = #tile.plan<consumers = #tile.decision<2, " ">, threads = #tile.decision<384, "1 producer + 2 consumer warpgroup(s) of 128 threads">, persistent = #tile.decision<0, "a 3-D grid (qi, h, b): one CTA per tile, the hardware scheduler fills the SMs">, stages = #tile.decision<3, "3 stages fit (1 KB for 8 mbarriers + 32768 B of single tiles (the epilogue stages its output in them) + 3 x 65536 B ring + 1 KB alignment slack); 4 would need 296960 bytes, over 232448">, smem_bytes = #tile.decision<231424, "1 KB for 8 mbarriers + 32768 B of single tiles (the epilogue stages its output in them) + 3 x 65536 B ring + 1 KB alignment slack; budget 232448">, group_m = #tile.decision<1, "one CTA per tile: launch order">, ctas_per_sm = #tile.decision<1, "two blocks would need 2 x (231424 + 1024 reserved) bytes, over the SM's 233472">, producer_registers = #tile.decision<40, "384 threads get 168 registers each at entry (64512 in all); the producer only issues TMA, so 40/232 gives the consumers the rest; they need about 228">, consumer_registers = #tile.decision<232, "384 threads get 168 registers each at entry (64512 in all); the producer only issues TMA, so 40/232 gives the consumers the rest; they need about 228">>, params = {D = 128 : i64, BQ = 128 : i64, BKV = 128 : i64, CAUSAL = false}} {
    %N = tile.dim %Q[2] : !tile.gl<[B, H, N, 128], bf16>
    %H = tile.dim %Q[1] : !tile.gl<[B, H, N, 128], bf16>
    %B = tile.dim %Q[0] : !tile.gl<[B, H, N, 128], bf16>
    %0 = arith.constant 128 : index
    %1 = arith.divui %N, %0 : index
    tile.grid(%1, %H, %B) as ["qi", "h", "b"]
    %qi = tile.block_id 0
    %h = tile.block_id 1
    %b = tile.block_id 2
    %2 = arith.constant 0 : index
    %q = tile.load %Q[%b, %h, %qi, %2] {swizzle = #tile.decision<128, "256-byte rows (128 x bf16) as 2 panels of 128 B (one TMA box each); written by TMA, read K-major by wgmma as">, smem_align = 1024 : i64, smem_offset = 1024 : i64} : !tile.gl<[B, H, N, 128], bf16> -> !tile.st<128x128xbf16, swizzle 128>
    %o = tile.fill 0.000000e+00 : f32 : !tile.rt<128x128xf32>
    %m = tile.fill 0xff800000 : f32 : !tile.rv<128xf32>
    %l = tile.fill 0.000000e+00 : f32 : !tile.rv<128xf32>
    %3 = arith.constant 1 : index
    %4 = arith.constant 0.127517432 : f32
    %l_1, %o_1, %m_1 = scf.for %kv = %2 to %1 step %3 iter_args(%l_2 = %l, %o_2 = %o, %m_2 = %m) -> (!tile.rv<128xf32>, !tile.rt<128x128xf32>, !tile.rv<128xf32>) {
      %k = tile.load %K[%b, %h, %kv, %2] {swizzle = #tile.decision<128, "256-byte rows (128 x bf16) as 2 panels of 128 B (one TMA box each); written by TMA, read K-major by wgmma as B">, smem_align = 1024 : i64, stage_offset = 0 : i64} : !tile.gl<[B, H, N, 128], bf16> -> !tile.st<128x128xbf16, swizzle 128>
      %v = tile.load %V[%b, %h, %kv, %2] {swizzle = #tile.decision<128, "256-byte rows (128 x bf16) as 2 panels of 128 B (one TMA box each); written by TMA, read MN-major by wgmma as B">, smem_align = 1024 : i64, stage_offset = 32768 : i64} : !tile.gl<[B, H, N, 128], bf16> -> !tile.st<128x128xbf16, swizzle 128>
      %5 = tile.mma %q, %k transpose_b {a_desc = #tile.decision<4611686293305360384, "0x4000004000010000: K-major, 128B swizzle (layout 1): LBO 16 (unused), SBO 1024 (8 rows x 128 B), k-step +32 B, panels 16384 B apart">, b_desc = #tile.decision<4611686293305360384, "0x4000004000010000: K-major, 128B swizzle (layout 1): LBO 16 (unused), SBO 1024 (8 rows x 128 B), k-step +32 B, panels 16384 B apart">} : !tile.st<128x128xbf16, swizzle 128>, !tile.st<128x128xbf16, swizzle 128> -> !tile.rt<128x128xf32>
      %s = tile.binary mul %5, %4 : !tile.rt<128x128xf32>, f32 -> !tile.rt<128x128xf32>
      %6 = tile.reduce max row %5 : !tile.rt<128x128xf32> -> !tile.rv<128xf32>
      %7 = tile.binary mul %6, %4 : !tile.rv<128xf32>, f32 -> !tile.rv<128xf32>
      %m_new = tile.binary max %m_2, %7 : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32>
      %8 = tile.broadcast sub row %s, %m_new : !tile.rt<128x128xf32>, !tile.rv<128xf32>
      %p = tile.unary exp2 %8 : !tile.rt<128x128xf32>
      %9 = tile.binary sub %m_2, %m_new : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32>
      %alpha = tile.unary exp2 %9 : !tile.rv<128xf32>
      %10 = tile.binary mul %l_2, %alpha : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32>
      %11 = tile.reduce sum row %p : !tile.rt<128x128xf32> -> !tile.rv<128xf32>
      %l_3 = tile.binary add %10, %11 : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32>
      %12 = tile.convert %p : !tile.rt<128x128xf32> -> !tile.rt<128x128xbf16>
      %o_3 = tile.mma %12, %v, %13 {b_desc = #tile.decision<4611686293372403712, "0x4000004004000000: MN-major, 128B swizzle (layout 1): LBO 16384 (next 128-byte MN panel), SBO 1024 (8 rows x 128 B), k-step +2048 B, panels 16384 B apart">} : !tile.rt<128x128xbf16>, !tile.st<128x128xbf16, swizzle 128>, !tile.rt<128x128xf32> -> !tile.rt<128x128xf32>
      %13 = tile.broadcast mul row %o_2, %alpha : !tile.rt<128x128xf32>, !tile.rv<128xf32>
      scf.yield %l_3, %o_3, %m_new : !tile.rv<128xf32>, !tile.rt<128x128xf32>, !tile.rv<128xf32>
    } {pipeline = #tile.decision<3, "3-stage TMA ring: k 128x128xbf16 + v 128x128xbf16 = 65536 bytes per stage, full/empty mbarrier per stage">, ring_offset = 33792 : i64, stage_bytes = 65536 : i64, overlap = #tile.decision<1, "the last mma only accumulates into a carried tile nothing else reads, so it runs one iteration late: each iteration issues its first mma, then the previous iteration's last, and computes on the first product while the tensor cores run both (FlashAttention-3); its stage is freed one iteration later">}
    %14 = tile.broadcast div row %o_1, %l_1 : !tile.rt<128x128xf32>, !tile.rv<128xf32>
    %15 = tile.convert %14 : !tile.rt<128x128xf32> -> !tile.rt<128x128xbf16>
    tile.store %15, %O[%b, %h, %qi, %2] {staging = #tile.decision<128, "128x128xbf16 staging tile, written by st.shared.b32 then one TMA store: 128B swizzle, the fewest wavefronts (bank_conflicts says why)">, bank_conflicts = #tile.decision<1, "st.shared.b32 (4 B/lane): 128B swizzle conflict-free, 256 wavefronts (ideal 256); 64B swizzle conflict-free, 32B swizzle conflict-free, no swizzle 8-way">, smem_access = "st.shared.b32", smem_offset = 1024 : i64} : !tile.rt<128x128xbf16>, !tile.gl<[B, H, N, 128], bf16>
    tile.return
  }