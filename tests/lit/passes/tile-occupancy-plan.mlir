// RUN: tkc-opt %S/Inputs/gemm.mlir -p tile-swizzle-select,tile-bank-conflicts,tile-occupancy-plan | filecheck %s --check-prefix=GEMM
// RUN: tkc-opt %S/Inputs/attention.mlir -p tile-swizzle-select,tile-bank-conflicts,tile-occupancy-plan | filecheck %s --check-prefix=ATTN

// GEMM 128x256x64: two consumers of 64 rows, ThunderKittens' 40/232 split of the 64512 registers
// a 384-thread block gets, 4 stages (beside 32 KB of epilogue staging: two 64-column chunks),
// and a persistent grid walking 8 tile-rows at a time.
// GEMM: tile.kernel @gemm
// GEMM-SAME: plan = #tile.plan<consumers = #tile.decision<2, "128-row register tiles: 64 rows per consumer warpgroup (wgmma m64); the demand of 160 registers per thread fits">
// GEMM-SAME: threads = #tile.decision<384, "1 producer + 2 consumer warpgroup(s) of 128 threads">
// GEMM-SAME: persistent = #tile.decision<1, "2-D grid (i, j) with a K loop (GEMM-like)
// GEMM-SAME: stages = #tile.decision<4, "4 stages fit (1 KB for 8 mbarriers + 4 x 49152 B ring + 32768 B epilogue staging + 1 KB alignment slack); the deepest ring the plan builds (as ThunderKittens); @stages(n) pins a deeper one, and tkc tune tries 6 and 8">
// GEMM-SAME: smem_bytes = #tile.decision<231424,
// GEMM-SAME: group_m = #tile.decision<8,
// GEMM-SAME: ctas_per_sm = #tile.decision<1, "persistent grid: one CTA per SM">
// GEMM-SAME: producer_registers = #tile.decision<40, "384 threads get 168 registers each at entry (64512 in all)
// GEMM-SAME: consumer_registers = #tile.decision<232, "{{[^"]*}}">>

// Attention D=128: the 3-D grid launches one CTA per tile, so Q (loaded once, 32 KB) is dead by
// the epilogue, which stages its output in Q's bytes; K+V make a 64 KB stage, so 3 stages fit.
// ATTN: tile.kernel @attn_fwd
// ATTN-SAME: plan = #tile.plan<consumers = #tile.decision<2,
// ATTN-SAME: persistent = #tile.decision<0, "a persistent CTA would hold the next tile{{.}}s own loads, leaving its loop{{.}}s ring 2 stages instead of 3: one CTA per tile, the hardware scheduler fills the SMs">
// ATTN-SAME: stages = #tile.decision<3, "3 stages fit (1 KB for 8 mbarriers + 32768 B of single tiles (the epilogue stages its output in them) + 3 x 65536 B ring + 1 KB alignment slack); 4 would need 296960 bytes, over 232448">
// ATTN-SAME: smem_bytes = #tile.decision<231424,
// ATTN-SAME: group_m = #tile.decision<1,
// ATTN-SAME: ctas_per_sm = #tile.decision<1, "2 blocks would need 2 x (231424 + 1024 reserved) bytes, over the SM's 233472">
// ATTN-SAME: producer_registers = #tile.decision<40,
// ATTN-SAME: consumer_registers = #tile.decision<232, "{{[^"]*}}">>

// Causal attention: the K/V loop's trip count grows with the query tile qi, so qi launches in
// reverse (longest tiles first); @heavy_first(0) keeps the launch order, and says so.
// RUN: tkc compile %examples/attention.tk -D CAUSAL=1 --emit tile | filecheck %s --check-prefix=CAUSAL
// RUN: sed 's/^kernel/@heavy_first(0) kernel/' %examples/attention.tk > %t.plain.tk
// RUN: tkc compile %t.plain.tk -D CAUSAL=1 --emit tile | filecheck %s --check-prefix=PLAIN
// CAUSAL: plan = #tile.plan<{{.*}}, heavy_first = #tile.decision<0, "the loop's trip count grows with qi: blocks launch from the last qi down
// PLAIN: heavy_first = #tile.decision<-1, "pinned off by @heavy_first(0): the loop's trip count grows with qi, and the tiles keep grid order">

// Varlen attention D=64: the K/V loop's trip count is read from the tile table at t, and a
// persistent CTA keeps 4 stages, so one CTA per SM walks the tiles with t slowest, in the
// table's order (the sm90 walk divides the tile index by H, the extent below t).
// RUN: tkc compile %examples/attention_varlen.tk -D D=64 --emit tile | filecheck %s --check-prefix=VARLEN
// VARLEN: persistent = #tile.decision<1, "a K loop whose trip count a table in memory gives (read at a block index): one CTA per SM walks the (t, h) tiles in the table{{.}}s order
// VARLEN-SAME: group_m = #tile.decision<1, "the tiles walk in the table{{.}}s order (table_first), not in groups">
// VARLEN-SAME: table_first = #tile.decision<0, "a loop{{.}}s trip count is read from a table at t: the persistent CTAs walk the tiles with t slowest

// Pins are obeyed when they fit, and are errors naming the budget when they do not.
// RUN: sed 's/KERNEL_PIN/@registers(32, 232) @persistent/; s/LOOP_PIN/@stages(2)/' %S/Inputs/gemm-pinned.tk > %t.ok.tk
// RUN: tkc compile %t.ok.tk --emit tile | filecheck %s --check-prefix=PINNED
// PINNED: plan = #tile.plan<{{.*}}, persistent = #tile.decision<1, "pinned by @persistent
// PINNED-SAME: stages = #tile.decision<2, "pinned by @stages(2); 133120 of 232448 bytes">
// PINNED-SAME: producer_registers = #tile.decision<32, "pinned by @registers(32, 232); 63488 of 64512 registers">
// PINNED: pipeline = #tile.decision<2, "pinned by @stages(2); 2-stage TMA ring

// RUN: sed 's/KERNEL_PIN/@registers(256, 256)/; s/LOOP_PIN//' %S/Inputs/gemm-pinned.tk > %t.regs.tk
// RUN: not tkc compile %t.regs.tk --emit tile 2>&1 | filecheck %s --check-prefix=REGS
// REGS: regs.tk:3:8: error: @registers(256, 256) needs 128 x 256 + 256 x 256 = 98304 registers, over the 64512 a 384-thread block gets at entry (168 per thread; 65536 per SM)

// RUN: sed 's/KERNEL_PIN//; s/LOOP_PIN/@stages(9)/' %S/Inputs/gemm-pinned.tk > %t.stages.tk
// RUN: not tkc compile %t.stages.tk --emit tile 2>&1 | filecheck %s --check-prefix=STAGES
// STAGES: stages.tk:7:5: error: @stages(9) needs 477184 bytes of shared memory (1 KB for 18 mbarriers + 9 x 49152 B ring + 32768 B epilogue staging + 1 KB alignment slack), over the 232448-byte budget; at most 4 stages fit

// RUN: sed 's/KERNEL_PIN/@consumers(4)/; s/LOOP_PIN//' %S/Inputs/gemm-pinned.tk > %t.c4.tk
// RUN: not tkc compile %t.c4.tk --emit tile 2>&1 | filecheck %s --check-prefix=C4
// C4: c4.tk:3:8: error: @consumers(4) splits the 128-row register tiles into 32 rows per warpgroup; wgmma needs multiples of 64

// RUN: sed 's/KERNEL_PIN/@consumers(1)/; s/LOOP_PIN//' %S/Inputs/gemm-pinned.tk > %t.c1.tk
// RUN: not tkc compile %t.c1.tk --emit tile 2>&1 | filecheck %s --check-prefix=C1
// C1: c1.tk:3:8: error: @consumers(1): each consumer thread needs 288 registers, over the 256 it can get beside the producer (256 threads share 63488 of the SM's 65536 registers)

// Register tiles of 64 and 128 rows: two consumers split the 128-row O and replicate the 64-row S
// (and its row vector), which no split of 2 x 64-row wgmmas takes; @consumers(1) splits nothing.
// RUN: tkc-opt %S/Inputs/mixed-heights.mlir -p tile-swizzle-select,tile-bank-conflicts,tile-occupancy-plan | filecheck %s --check-prefix=MIXED
// MIXED: plan = #tile.plan<consumers = #tile.decision<2, "128-row register tiles: 64 rows per consumer warpgroup (wgmma m64)
// MIXED-SAME: replicated_rows = #tile.decision<64, "register tiles and row vectors of 64 rows are replicated: each of the 2 consumers computes them whole, as a wgmma computes 64 rows and 2 consumers cannot split fewer than 128; they meet the 128-row tiles, split 64 rows per consumer, only through shared memory (tile.to_shared, wgmma operands), which every consumer reads whole">
// RUN: tkc-opt %S/Inputs/mixed-heights.mlir -p 'tile-swizzle-select,tile-bank-conflicts,tile-occupancy-plan{consumers=1}' | filecheck %s --check-prefix=MIXED1
// MIXED1: plan = #tile.plan<consumers = #tile.decision<1, "pinned by the pass option consumers=1">
// MIXED1-NOT: replicated_rows
// RUN: not tkc-opt %S/Inputs/mixed-heights.mlir -p 'tile-swizzle-select,tile-bank-conflicts,tile-occupancy-plan{consumers=4}' 2>&1 | filecheck %s --check-prefix=MIXED4
// MIXED4: error: the pass option consumers=4 splits the 128-row register tiles into 32 rows per warpgroup; wgmma needs multiples of 64 (tiles shorter than the tallest may be replicated in every consumer instead, the tallest are split)

// A 32-row S beside the 128-row O: replicated in both consumers and computed as a 64-row
// fragment, which the plan says; 80 rows (above one wgmma, not a multiple of it) are computed as
// 128, split 64 per consumer, the second's last 48 rows padding, which the consumers' reason says.
// RUN: sed 's/BQ = 64/BQ = 32/' %S/../../gpu/kernels/heights_mixed.tk > %t.h32.tk
// RUN: tkc compile %t.h32.tk --emit tile 2>&1 | filecheck %s --check-prefix=H32
// H32: replicated_rows = #tile.decision<32, "register tiles and row vectors of 32 rows are replicated: each of the 2 consumers computes them whole, as a wgmma computes 64 rows and 2 consumers cannot split fewer than 128; those of 32 rows as 64-row fragments (a wgmma's m64) whose rows past their own are padding: computed, never stored, masked before column reductions, and costing the registers of 64 rows; they meet the 128-row tiles
// RUN: sed 's/BQ = 64/BQ = 80/' %S/../../gpu/kernels/heights_mixed.tk > %t.h80.tk
// RUN: tkc compile %t.h80.tk --emit tile 2>&1 | filecheck %s --check-prefix=H80
// H80: consumers = #tile.decision<2, "128-row register tiles: 64 rows per consumer warpgroup (wgmma m64); the demand of {{[0-9]+}} registers per thread fits; 80-row tiles are split as 128 rows, 64 per consumer, the last consumer's last 48 rows padding: computed, never stored, masked before column reductions">
// H80-NOT: replicated_rows
