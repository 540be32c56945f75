// signature: diagnostic unlocated: convert-tile-to-sm90 reads the shared-memory layout tile-pipeline records, but tile.store has
// tkc compile FILE
  tile.kernel @waw(%X: !tile.gl<[M, N], f32>, %Y: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<consumers = #tile.decision<1, "                 ">, threads = #tile.decision<256, "        ">, persistent = #tile.decision<0, "            ">, smem_bytes = #tile.decision<59392, "                      ">, group_m = #tile.decision<1, "   : launch order">, ctas_per_sm = #tile.decision<2, "two blocks fit: 59392 bytes of shared memory and 216 registers per consumer thread each">, producer_registers = #tile.decision<40, "256 threads get 128 registers each at entry (32768 in all); the producer only issues TMA, so 40/216 gives the consumers the rest; they need about 96">, consumer_registers = #tile.decision<216, "256 threads get 128 registers each at entry (32768 in all); the producer only issues TMA, so 40/216 gives the consumers the rest; they need about 96">>} {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32> loc("tests/gpu/kernels/waw.tk":3:11)
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32> loc("tests/gpu/kernels/waw.tk":3:19)
    %0 = arith.constant 64 : index loc("tests/gpu/kernels/waw.tk":3:13)
    %1 = arith.divui %M, %0 : index loc("tests/gpu/kernels/waw.tk":3:13)
    %2 = arith.constant 128 : index loc("tests/gpu/kernels/waw.tk":3:21)
    %3 = arith.divui %N, %2 : index loc("tests/gpu/kernels/waw.tk":3:21)
    tile.grid(%1, %3) as ["i", "j"] loc("tests/gpu/kernels/waw.tk":3:5)
    %i = tile.block_id 0 loc("tests/gpu/kernels/waw.tk":3:32)
    %j = tile.block_id 1 loc("tests/gpu/kernels/waw.tk":3:35)
    %5 = arith.constant 2 : index loc("tests/gpu/kernels/waw.tk":6:41)
    %6 = arith.muli %j, %5 : index
    %7 = tile.load %X[%i, %6] {swizzle = #tile.decision<32, "ld.shared.v2.f32 (8 B/lane): 32B swizzle conflict-free, 128 wavefronts (ideal 128); 128B swizzle 2-way, 64B swizzle 2-way, no swizzle 4-way">, smem_align = 256 : i64, smem_offset = 33792 : i64} : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32, swizzle 32> loc("tests/gpu/kernels/waw.tk":6:29)
    %8 = tile.to_reg %7 {bank_conflicts = #tile.decision<1, "ld.shared.v2.f32 (8 B/lane): 32B swizzle conflict-free, 128 wavefronts (ideal 128); 128B swizzle 2-way, 64B swizzle 2-way, no swizzle 4-way">, smem_access = "ld.shared.v2.f32"} : !tile.st<64x64xf32, swizzle 32> -> !tile.rt<64x64xf32> loc("tests/gpu/kernels/waw.tk":6:29)
    %9 = arith.constant 1 : index loc("tests/gpu/kernels/waw.tk":6:22)
    %10 = arith.addi %6, %9 : index loc("tests/gpu/kernels/waw.tk":6:22)
    tile.store %8, %Y[%i, %10] {staging = #tile.decision<32, "64x64xf32 staging tile, written by st.shared.v2.f32 then one TMA store: 32B swizzle, the fewest wavefronts (bank_conflicts says why)">, bank_conflicts = #tile.decision<1, "st.shared.v2.f32 (8 B/lane): 32B swizzle conflict-free, 128 wavefronts (ideal 128); 128B swizzle 2-way, 64B swizzle 2-way, no swizzle 4-way">, smem_access = "st.shared.v2.f32", smem_offset = 54272 : f16} : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32> loc("tests/gpu/kernels/waw.tk":6:5)
    tile.return loc("tests/gpu/kernels/waw.tk":2:8)
  } loc("tests/gpu/kernels/waw.tk":2:8)