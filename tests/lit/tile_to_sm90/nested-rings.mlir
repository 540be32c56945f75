// A ring per loop or if that loads, at any depth (Inputs/nested.mlir of sm90_verify_barriers: a
// loop over column tiles j, a K loop in it whose A tile is one ring's stage, and an if in that
// whose branches load B0 or B1, the other ring's stage). Both roles run the same loops and ifs,
// and carry the count of each ring nested in them: the j loop carries both counts, the K loop
// the if's (its own is its entry count plus the iteration), and the if yields its count, one
// more than at the if in either branch since each branch fills (or waits for) one stage.
// RUN: tkc-opt %S/../sm90_verify_barriers/Inputs/nested.mlir -p tile-pipeline,tile-warp-specialize,convert-tile-to-sm90 2>/dev/null | filecheck %s

// CHECK:      producer {
// CHECK:        %[[A_RING:[0-9]+]] = sm90.ring 0 at %{{[0-9]+}} offset 1024 stages 1 stage_bytes 8192
// CHECK-NEXT:   %[[IF_RING:[0-9]+]] = sm90.ring 1 at %{{[0-9]+}} offset 9216 stages 1 stage_bytes 8192
// CHECK:        scf.for %{{[0-9]+}} = %c0 to %nt step %c1 iter_args(%[[A_J:[0-9]+]] = %{{[0-9]+}}, %[[IF_J:[0-9]+]] = %{{[0-9]+}}) -> (index, index) {
// CHECK-NEXT:     %[[IF_K:[0-9]+]] = scf.for %[[KK:[0-9]+]] = %c0 to %kt step %c1 iter_args(%[[IF_IT:[0-9]+]] = %[[IF_J]]) -> (index) {
// CHECK:            %[[IT:[0-9]+]] = arith.addi %[[A_J]], %{{[0-9]+}} : index
// CHECK-NEXT:       %{{[0-9]+}}, %{{[0-9]+}} = sm90.ring_acquire %[[A_RING]][%[[IT]]] expect_tx 8192
// CHECK:            %[[IF_NEXT:[0-9]+]] = scf.if %even -> (index) {
// CHECK-NEXT:         sm90.ring_acquire %[[IF_RING]][%[[IF_IT]]] expect_tx 8192
// CHECK:              %[[ONE:[0-9]+]] = arith.addi %[[IF_IT]], %{{.*}} : index
// CHECK-NEXT:         scf.yield %[[ONE]] : index
// CHECK-NEXT:       } else {
// CHECK-NEXT:         sm90.ring_acquire %[[IF_RING]][%[[IF_IT]]] expect_tx 8192
// CHECK:            }{mirrored_if = 0 : i64}
// CHECK-NEXT:       scf.yield %[[IF_NEXT]] : index
// CHECK:          %[[TRIPS:[0-9]+]] = arith.ceildivui
// CHECK-NEXT:     %[[A_NEXT:[0-9]+]] = arith.addi %[[A_J]], %[[TRIPS]] : index
// CHECK-NEXT:     scf.yield %[[A_NEXT]], %[[IF_K]] : index, index

// CHECK:      consumer {
// CHECK:        scf.for {{.*}} iter_args(%{{[0-9]+}} = %{{[0-9]+}}, %[[C_IF_J:[0-9]+]] = %{{[0-9]+}}) -> (index, index) {
// CHECK-NEXT:     scf.for {{.*}} iter_args(%{{[0-9]+}} = %{{[0-9]+}}, %[[C_IF_IT:[0-9]+]] = %[[C_IF_J]]) -> (!sm90.frag<64x64xf32>, index) {
// CHECK:            %[[C_IT:[0-9]+]] = arith.addi
// CHECK-NEXT:       sm90.ring_wait %{{[0-9]+}}[%[[C_IT]]]
// CHECK:            scf.if %even_1 -> (!sm90.frag<64x64xf32>, index) {
// CHECK-NEXT:         sm90.ring_wait %{{[0-9]+}}[%[[C_IF_IT]]]
// CHECK:              sm90.wgmma
// CHECK:              sm90.ring_release %{{[0-9]+}}[%[[C_IF_IT]]]
// CHECK:            } else {
// CHECK-NEXT:         sm90.ring_wait %{{[0-9]+}}[%[[C_IF_IT]]]
// CHECK:              sm90.ring_release %{{[0-9]+}}[%[[C_IF_IT]]]
// CHECK:            }{mirrored_if = 0 : i64}
// CHECK-NEXT:       sm90.ring_release %{{[0-9]+}}[%[[C_IT]]]
