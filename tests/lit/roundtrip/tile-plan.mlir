// The kernel's occupancy plan is one `#tile.plan<...>`: it prints, parses back and prints to the
// same text in custom and generic form, its fields in the order the planner decides them (the
// order they are written in does not matter), each a #tile.decision with its reason; an empty plan
// is `#tile.plan<>`.
// RUN: tkc-opt %s --split-input-file -o %t.custom
// RUN: tkc-opt %t.custom --split-input-file | diff %t.custom -
// RUN: tkc-opt %s --split-input-file --print-op-generic -o %t.generic
// RUN: tkc-opt %t.generic --split-input-file --print-op-generic | diff %t.generic -
// RUN: tkc-opt %t.generic --split-input-file | diff %t.custom -
// RUN: filecheck %s < %t.custom

builtin.module {
  tile.kernel @planned(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<consumer_registers = #tile.decision<232, "the consumers get the rest">, producer_registers = #tile.decision<40, "the producer only issues TMA">, heavy_first = #tile.decision<0, "longest tiles first">, cluster = #tile.decision<1, "pinned by @cluster(1)">, ctas_per_sm = #tile.decision<1, "one block">, group_m = #tile.decision<1, "launch order">, smem_bytes = #tile.decision<232448, "the whole budget">, stages = #tile.decision<4, "deepest ring">, persistent = #tile.decision<0, "one CTA per tile">, threads = #tile.decision<384, "1 producer + 2 consumer warpgroup(s) of 128 threads">, consumers = #tile.decision<2, "128 rows, 64 per consumer">>, params = {}} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK:      tile.kernel @planned(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<
// CHECK-SAME: consumers = #tile.decision<2, "128 rows, 64 per consumer">,
// CHECK-SAME: threads = #tile.decision<384, "1 producer + 2 consumer warpgroup(s) of 128 threads">,
// CHECK-SAME: persistent = #tile.decision<0, "one CTA per tile">,
// CHECK-SAME: stages = #tile.decision<4, "deepest ring">,
// CHECK-SAME: smem_bytes = #tile.decision<232448, "the whole budget">,
// CHECK-SAME: group_m = #tile.decision<1, "launch order">,
// CHECK-SAME: ctas_per_sm = #tile.decision<1, "one block">,
// CHECK-SAME: cluster = #tile.decision<1, "pinned by @cluster(1)">,
// CHECK-SAME: heavy_first = #tile.decision<0, "longest tiles first">,
// CHECK-SAME: producer_registers = #tile.decision<40, "the producer only issues TMA">,
// CHECK-SAME: consumer_registers = #tile.decision<232, "the consumers get the rest">>}

// -----

// A plan of some fields (tile-pipeline's smem_bytes when no plan ran), and an empty one.
builtin.module {
  tile.kernel @partial(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<smem_bytes = #tile.decision<2048, "tile-pipeline's layout of 1 stage(s)">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
  tile.kernel @empty(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    tile.return
  }
}
// CHECK: tile.kernel @partial(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<smem_bytes = #tile.decision<2048, "tile-pipeline's layout of 1 stage(s)">>}
// CHECK: tile.kernel @empty(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<>}
