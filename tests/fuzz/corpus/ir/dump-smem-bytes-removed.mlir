// signature: diagnostic unlocated: convert-tile-to-sm90 needs the kernel's smem_bytes decision: run tile-pipeline first
// tkc compile FILE
  tile.kernel @k2(%X: !tile.gl<[B, M, N], f32>, %Y: !tile.gl<[B, M, N], f32>) attributes {plan = #tile.plan<consumers = #tile.decision<1, "                 ">, threads = #tile.decision<256, "        ">, persistent = #tile.decision<0, "            ">, group_m = #tile.decision<1, "one CTA per tile: launch order">, ctas_per_sm = #tile.decision<2, "two blocks fit: 18432 bytes of shared memory and 216 registers per consumer thread each">, producer_registers = #tile.decision<40, "256 threads get 128 registers each at entry (32768 in all); the producer only issues TMA, so 40/216 gives the consumers the rest; they need about 96">, consumer_registers = #tile.decision<216, "256 threads get 128 registers each at entry (32768 in all); the producer only issues TMA, so 40/216 gives the consumers the rest; they need about 96">>, params = {BM = 64 : i64, BN = 64 : i64}} {
    %M = tile.dim %X[1] : !tile.gl<[B, M, N], f32> loc("tests/gpu/kernels/branchy.tk":2:11)
    %N = tile.dim %X[2] : !tile.gl<[B, M, N], f32> loc("tests/gpu/kernels/branchy.tk":2:19)
    %B = tile.dim %X[0] : !tile.gl<[B, M, N], f32> loc("tests/gpu/kernels/branchy.tk":2:27)
    %0 = arith.constant 64 : index loc("tests/gpu/kernels/branchy.tk":2:13)
    %1 = arith.divui %M, %0 : index loc("tests/gpu/kernels/branchy.tk":2:13)
    %2 = arith.divui %N, %0 : index loc("tests/gpu/kernels/branchy.tk":2:21)
    tile.grid(%1, %2, %B) as ["i", "j", "b"] loc("tests/gpu/kernels/branchy.tk":2:5)
    %i = tile.block_id 0 loc("tests/gpu/kernels/branchy.tk":2:34)
    %j = tile.block_id 1 loc("tests/gpu/kernels/branchy.tk":2:37)
    %b = tile.block_id 2 loc("tests/gpu/kernels/branchy.tk":2:40)
    %4 = arith.cmpi ugt, %i, %j : index loc("tests/gpu/kernels/branchy.tk":4:10)
    %x_1 = scf.if %4 -> (!tile.rt<64x64xf32>) {
    } loc("tests/gpu/kernels/branchy.tk":4:5)
    tile.store %x_1, %Y[%b, %i, %j] {staging = #tile.decision<32, "64x64xf32 staging tile, written by st.shared.v2.f32 then one TMA store: 32B swizzle, the fewest wavefronts (bank_conflicts says why)">, bank_conflicts = #tile.decision<1, "st.shared.v2.f32 (8 B/lane): 32B swizzle conflict-free, 128 wavefronts (ideal 128); 128B swizzle 2-way, 64B swizzle 2-way, no swizzle 4-way">, smem_access = "st.shared.v2.f32", smem_offset = 1024 : i64, staging_reuse = #tile.decision<1, "the CTA runs one tile and every use of its kernel-level loads comes before the first staged store: the epilogue stages in their bytes, once all consumers meet">} : !tile.rt<64x64xf32>, !tile.gl<[B, M, N], f32> loc("tests/gpu/kernels/branchy.tk":5:5)
    tile.return loc("tests/gpu/kernels/branchy.tk":1:8)
  } loc("tests/gpu/kernels/branchy.tk":1:8)