// signature: diagnostic unlocated: convert-tile-to-sm90 reads the shared-memory layout tile-pipeline records, but scf.for has
// tkc compile FILE
  tile.kernel @colsum(%X: !tile.gl<[M, N], f32>, %S: !tile.gl<[N], f32>) attributes {plan = #tile.plan<consumers = #tile.decision<1, "                 ">, threads = #tile.decision<256, "        ">, persistent = #tile.decision<0, "            ">, stages = #tile.decision<4, "                         ">, smem_bytes = #tile.decision<135168, "                 ">, group_m = #tile.decision<1, "  per tile: launch order">, ctas_per_sm = #tile.decision<1, "two blocks would need 2 x (135168 + 1024 reserved) bytes, over the SM's 233472">, producer_registers = #tile.decision<40, "256 threads get 248 registers each at entry (63488 in all); the producer only issues TMA, so 40/256 gives the consumers the rest; they need about 128">, consumer_registers = #tile.decision<256, "256 threads get 248 registers each at entry (63488 in all); the producer only issues TMA, so 40/256 gives the consumers the rest; they need about 128">>, col_scratch_offset = 132096 : i64, params = {BM = 64 : i64, BN = 128 : i64}} {
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32> loc("tests/gpu/kernels/colsum.tk":2:11)
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32> loc("tests/gpu/kernels/colsum.tk":4:19)
    %0 = arith.constant 128 : index loc("tests/gpu/kernels/colsum.tk":2:13)
    %1 = arith.divui %N, %0 : index loc("tests/gpu/kernels/colsum.tk":2:13)
    tile.grid(%1) as ["j"] loc("tests/gpu/kernels/colsum.tk":2:5)
    %j = tile.block_id 0 loc("tests/gpu/kernels/colsum.tk":2:23)
    %acc = tile.fill 0.000000e+00 : f32 : !tile.rv<128xf32> loc("tests/gpu/kernels/colsum.tk":3:15)
    %2 = arith.constant 0 : index loc("tests/gpu/kernels/colsum.tk":4:14)
    %3 = arith.constant 64 : index loc("tests/gpu/kernels/colsum.tk":4:21)
    %4 = arith.divui %M, %3 : index loc("tests/gpu/kernels/colsum.tk":4:21)
    %5 = arith.constant 1 : index loc("tests/gpu/kernels/cols[um.tk":4:5)
    %acc_1 = scf.for %i = %2 to %4 step %5 iter_args(%acc_2 = %acc) -> (!tile.rv<128xf32>) {
      %6 = tile.load %X[%i, %j] {swizzle = #tile.decision<32, "ld.shared.v2.f32 (8 B/lane): 32B swizzle conflict-free, 256 wavefronts (ideal 256); 128B swizzle 2-way, 64B swizzle 2-way, no swizzle 4-way">, smem_align = 256 : i64, stage_offset = 0 : i64} : !tile.gl<[M, N], f32> -> !tile.st<64x128xf32, swizzle 32> loc("tests/gpu/kernels/colsum.tk":5:29)
      %7 = tile.to_reg %6 {bank_conflicts = #tile.decision<1, "ld.shared.v2.f32 (8 B/lane): 32B swizzle conflict-free, 256 wavefronts (ideal 256); 128B swizzle 2-way, 64B swizzle 2-way, no swizzle 4-way">, smem_access = "ld.shared.v2.f32"} : !tile.st<64x128xf32, swizzle 32> -> !tile.rt<64x128xf32> loc("tests/gpu/kernels/colsum.tk":5:29)
      %8 = tile.reduce sum col %7 : !tile.rt<64x128xf32> -> !tile.rv<128xf32> loc("tests/gpu/kernels/colsum.tk":5:21)
      %acc_3 = tile.binary add %acc_2, %8 : !tile.rv<128xf32>, !tile.rv<128xf32> -> !tile.rv<128xf32> loc("tests/gpu/kernels/colsum.tk":5:19)
      scf.yield %acc_3 : !tile.rv<128xf32> loc("tests/gpu/kernels/colsum.tk":4:5)
    } {pipeline = #tile.decision<4, "4-stage TMA ring: tile 64x128xf32 = 32768 bytes per stage, full/empty mbarrier per stage">, stage_bytes = 32768 : i64} loc("tests/gpu/kernels/colsum.tk":4:5)
    tile.return loc("tests/gpu/kernels/colsum.tk":1:8)
  } loc("tests/gpu/kernels/colsum.tk":1:8)