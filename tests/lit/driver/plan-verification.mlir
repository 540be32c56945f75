// A kernel's #tile.plan states its invariants: a hand-written plan that breaks one is a diagnostic
// at the kernel, never a traceback (PlanAttr.verify; the kernel's verifier for what needs the grid).
// RUN: tkc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: sed '/^\/\/ -----/,$d' %s > %t.first.mlir
// RUN: sh -c 'tkc compile %t.first.mlir --emit=ptx 2>&1; echo "exit $?"' | filecheck %s --check-prefix=EXIT

// A consumer count outside 1..7.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<consumers = #tile.decision<0, "damaged">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: the plan's consumers must be an integer, 1..7; got 0 : i64
// CHECK-NEXT: {{^}}  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<consumers = #tile.decision<0, "damaged">>} {
// CHECK-NEXT: {{^  \^$}}
// EXIT: first.mlir:9:3: error: the plan's consumers must be an integer, 1..7; got 0 : i64
// EXIT-NEXT: tile.kernel @k
// EXIT-NEXT: ^
// EXIT-NEXT: exit 1

// -----

// Threads that are not 1 producer + `consumers` warpgroups.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<consumers = #tile.decision<2, "x">, threads = #tile.decision<256, "x">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: the plan's 256 threads are not 1 producer + 2 consumer warpgroups of 128

// -----

// No stage.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<stages = #tile.decision<0, "x">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: the plan's stages must be an integer, 1..16; got 0 : i64

// -----

// A register count setmaxnreg does not take.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<producer_registers = #tile.decision<40, "x">, consumer_registers = #tile.decision<244, "x">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: the plan's consumer_registers must be an integer, 0 (unchanged) or a multiple of 8 in 24..256; got 244 : i64

// -----

// A producer that would keep more registers than the consumers get.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<producer_registers = #tile.decision<232, "x">, consumer_registers = #tile.decision<40, "x">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: the plan's producer_registers (232) exceed its consumer_registers (40): the producer gives registers back (setmaxnreg.dec) and the consumers take them (setmaxnreg.inc)

// -----

// Registers reallocated for one role only.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<producer_registers = #tile.decision<0, "x">, consumer_registers = #tile.decision<232, "x">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: the plan's producer_registers (0) and consumer_registers (232) are both 0 (no reallocation) or both setmaxnreg counts: the producer gives back what the consumers take

// -----

// More shared memory than a block may opt into (passes/plan.py's budget).
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<smem_bytes = #tile.decision<232449, "x">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: the plan's smem_bytes must be an integer, 0..232448 (the shared memory a block may opt into); got 232449 : i64

// -----

// A cluster tkc does not build.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<cluster = #tile.decision<3, "x">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: the plan's cluster must be an integer, 1, 2 or 4; got 3 : i64

// -----

// A heavy-first axis the grid does not have (the kernel's verifier: the plan does not know the grid).
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<heavy_first = #tile.decision<1, "x">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: invalid tile.kernel: the plan's heavy_first axis 1 is not an axis of the 1-D grid

// -----

// A field no plan has.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<warps = #tile.decision<8, "x">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: a plan has no field warps; its fields are consumers, threads, persistent, stages, smem_bytes, group_m, ctas_per_sm, cluster, heavy_first, table_first, stream_k, dependent_launch, fma_exp2, schedule_wgmma, replicated_rows, band, whole_staging, shared_staging, producer_registers, consumer_registers

// -----

// A field that is not a decision: every field says why.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<consumers = 2 : i64>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: the plan's consumers must be a #tile.decision<value, "reason">, got 2 : i64

// -----

// A field decided twice.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<stages = #tile.decision<2, "x">, stages = #tile.decision<3, "x">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:115: error: the plan decides stages twice

// -----

// A plan decision as an attribute of its own: the plan is read only as one #tile.plan.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {consumers = #tile.decision<2, "x">} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: invalid tile.kernel: consumers is a field of the kernel's plan: plan = #tile.plan<consumers = #tile.decision<value, "reason">>

// -----

// A plan that is not a #tile.plan.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = 2 : i64} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: invalid tile.kernel: the kernel's plan is a #tile.plan<...>, got 2 : i64

// -----

// A pin the plan could not hold (tile IR's annotations; the frontend checks its own).
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {annotations = {group_m = -1 : i64}} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: invalid tile.kernel: the annotation group_m must be an integer, 0 (grid axis 0 whole) or a count of tile rows; got -1 : i64

// -----

builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {annotations = {stages = 17 : i64}} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: invalid tile.kernel: the annotation stages must be an integer, 1..16; got 17 : i64

// -----

// Replicated tiles are those the consumers cannot split: shorter than 64 rows per consumer.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<consumers = #tile.decision<2, "x">, replicated_rows = #tile.decision<128, "x">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: the plan replicates register tiles of up to 128 rows, but 2 consumer warpgroup(s) split tiles of 128 rows and more: only shorter tiles are replicated

// -----

// Replicated heights are tile heights: multiples of 16 (those below 64 are padded to one wgmma).
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<consumers = #tile.decision<2, "x">, replicated_rows = #tile.decision<40, "x">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: the plan's replicated_rows must be an integer, 0 (none) or a multiple of 16; got 40 : i64

// -----

// setmaxnreg counts over the registers 3 blocks per SM leave each block (ptxas: C7602).
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<consumers = #tile.decision<1, "x">, threads = #tile.decision<256, "x">, ctas_per_sm = #tile.decision<3, "x">, producer_registers = #tile.decision<40, "x">, consumer_registers = #tile.decision<256, "x">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: the plan's setmaxnreg counts (40 for the producer, 256 for each of 1 consumer warpgroup(s)) need more than the 20480 registers a 256-thread block gets at entry with 3 block(s) per SM

// -----

// Blocks per SM whose shared memory the SM does not hold.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<smem_bytes = #tile.decision<182272, "x">, ctas_per_sm = #tile.decision<2, "x">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: plan-verification.mlir:[[# @LINE - 6]]:3: error: the plan puts 2 block(s) of 182272 bytes of shared memory on an SM, over its 233472 (1024 reserved per block)
