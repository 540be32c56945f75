// tile-occupancy-plan's pass options (-p 'name{option=value ...}', as in mlir-opt and xdsl-opt)
// pin its decisions as the annotations do, over the kernel's own; the reason names the option.
// RUN: tkc-opt %S/Inputs/gemm.mlir -p 'canonicalize,cse,tile-occupancy-plan{stages=2 consumers=2 persistent=false}' | filecheck %s
// RUN: tkc-opt %S/Inputs/gemm.mlir -p 'tile-occupancy-plan{registers=40,232 group_m=4 persistent=true}' | filecheck %s --check-prefix=REGS
// RUN: tkc-opt %S/cluster.tk -p 'tile-occupancy-plan{cluster=1}' | filecheck %s --check-prefix=OVER
// RUN: tkc-opt %S/Inputs/gemm.mlir -p 'tile-occupancy-plan{dependent_launch=false}' | filecheck %s --check-prefix=PLAIN
// An infeasible option is the planner's diagnostic, worded for the option.
// RUN: not tkc-opt %S/Inputs/gemm.mlir -p 'tile-occupancy-plan{consumers=1}' 2>&1 | filecheck %s --check-prefix=INFEASIBLE

// CHECK: consumers = #tile.decision<2, "pinned by the pass option consumers=2">
// CHECK-SAME: persistent = #tile.decision<0, "pinned by the pass option persistent=false: one CTA per tile">
// CHECK-SAME: stages = #tile.decision<2, "pinned by the pass option stages=2; {{[0-9]+}} of 232448 bytes">
// CHECK-SAME: group_m = #tile.decision<1, "one CTA per tile: launch order">

// REGS: persistent = #tile.decision<1, "pinned by the pass option persistent=true: one CTA per SM walks the (i, j) tiles">
// REGS-SAME: group_m = #tile.decision<4, "pinned by the pass option group_m=4">
// REGS-SAME: producer_registers = #tile.decision<40, "pinned by the pass option registers=40,232; {{[0-9]+}} of {{[0-9]+}} registers">
// REGS-SAME: consumer_registers = #tile.decision<232, "pinned by the pass option registers=40,232; {{[0-9]+}} of {{[0-9]+}} registers">

// OVER: cluster = #tile.decision<1, "pinned by the pass option cluster=1">

// PLAIN: dependent_launch = #tile.decision<0, "pinned off by the pass option dependent_launch=false: a plain launch after the kernel before it">

// INFEASIBLE: gemm.mlir:2:3: error: the pass option consumers=1: each consumer thread needs 288 registers, over the 256 it can get

// Unknown options and bad values are one line (exit 1) naming the pass, never a traceback.
// RUN: sh -c "tkc-opt %S/Inputs/gemm.mlir -p 'tile-occupancy-plan{stage=2}' 2>&1; echo exit \$?" | filecheck %s --check-prefix=UNKNOWN
// RUN: sh -c "tkc-opt %S/Inputs/gemm.mlir -p 'tile-pipeline{stages=2}' 2>&1; echo exit \$?" | filecheck %s --check-prefix=NONE
// RUN: sh -c "tkc-opt %S/Inputs/gemm.mlir -p 'tile-occupancy-plan{stages=two}' 2>&1; echo exit \$?" | filecheck %s --check-prefix=TYPE
// RUN: sh -c "tkc-opt %S/Inputs/gemm.mlir -p 'tile-occupancy-plan{persistent=1}' 2>&1; echo exit \$?" | filecheck %s --check-prefix=BOOL
// RUN: sh -c "tkc-opt %S/Inputs/gemm.mlir -p 'tile-occupancy-plan{stages=17}' 2>&1; echo exit \$?" | filecheck %s --check-prefix=RANGE
// RUN: sh -c "tkc-opt %S/Inputs/gemm.mlir -p 'tile-occupancy-plan{registers=40}' 2>&1; echo exit \$?" | filecheck %s --check-prefix=PAIR
// RUN: sh -c "tkc-opt %S/Inputs/gemm.mlir -p 'tile-occupancy-plan{stages=2' 2>&1; echo exit \$?" | filecheck %s --check-prefix=SYNTAX
// RUN: sh -c "tkc-opt %S/Inputs/gemm.mlir -p 'tile-occupancy-plan{stages=2 stages=3}' 2>&1; echo exit \$?" | filecheck %s --check-prefix=TWICE

// UNKNOWN: tkc-opt: error: tile-occupancy-plan has no option 'stage' (its options: consumers, stages, persistent, registers, group_m, cluster, stream_k, dependent_launch, band)
// UNKNOWN-NEXT: exit 1
// NONE: tkc-opt: error: tile-pipeline has no option 'stages' (it takes none)
// NONE-NEXT: exit 1
// TYPE: tkc-opt: error: tile-occupancy-plan: option stages takes an integer, not two
// TYPE-NEXT: exit 1
// BOOL: tkc-opt: error: tile-occupancy-plan: option persistent takes true or false, not 1
// BOOL-NEXT: exit 1
// RANGE: tkc-opt: error: tile-occupancy-plan: stages=17 is not 1..16
// RANGE-NEXT: exit 1
// PAIR: tkc-opt: error: tile-occupancy-plan: registers=producer,consumer takes two multiples of 8 in 24..256
// PAIR-NEXT: exit 1
// SYNTAX: tkc-opt: error: Error parsing pass pipeline specification:
// SYNTAX-NOT: Traceback
// SYNTAX: exit 1
// TWICE: tkc-opt: error: tile-occupancy-plan: option stages is given twice; give it once
// TWICE-NEXT: exit 1

// Lowering tile IR no planning pass ran on uses the default plan; -p runs only what it names, so
// tkc-opt says so (and nothing when the plan ran, in the pipeline or before it).
// RUN: tkc-opt %S/Inputs/gemm.mlir -p canonicalize,cse,tile-pipeline,tile-warp-specialize,convert-tile-to-sm90 2>&1 >/dev/null | filecheck %s --check-prefix=NOTE
// RUN: tkc-opt %S/Inputs/gemm.mlir -p canonicalize,cse,tile-occupancy-plan,tile-pipeline,tile-warp-specialize,convert-tile-to-sm90 2>%t.err >/dev/null && test ! -s %t.err
// RUN: tkc-opt %S/Inputs/gemm.mlir -p canonicalize,cse,tile-occupancy-plan,tile-pipeline,tile-warp-specialize > %t.planned.mlir
// RUN: tkc-opt %t.planned.mlir -p convert-tile-to-sm90 2>%t.err >/dev/null && test ! -s %t.err

// NOTE: tkc-opt: note: tile-occupancy-plan did not run on @gemm; lowering with the default plan (1 consumer, 1 stage)
// NOTE-NOT: note
