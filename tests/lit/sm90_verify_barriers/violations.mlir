// Each RUN breaks one rule of the barrier protocol in Inputs/ring.mlir (the turns: in attention's sm90 IR); the check names it.

// expect_tx bytes that the TMA boxes do not add up to.
// RUN: sh -c 'sed "s/expect_tx 16384/expect_tx 8192/" %S/Inputs/ring.mlir | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=TX
// TX: error: internal mbarrier protocol violation in the generated kernel @ring: sm90.mbarrier_arrive expect_tx 8192 expects TMA loads of 8192 bytes on the same barrier in its block, found 16384 bytes
// TX-NEXT: exit 1

// A TMA load whose barrier has no expect_tx.
// RUN: sh -c 'sed "s/ expect_tx 16384 : i32//" %S/Inputs/ring.mlir | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=NOTX
// NOTX: error: {{.*}}: a TMA load completing on the barriers 0, 1 of the group at smem+0 expects an sm90.mbarrier_arrive expect_tx on the same barrier in its block, found none
// NOTX-NEXT: exit 1

// An init count that is not the number of arriving threads (128 consumer threads arrive).
// RUN: sh -c 'sed "s/mbarrier_init %%e0, 128/mbarrier_init %%e0, 256/" %S/Inputs/ring.mlir | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=COUNT
// COUNT: error: {{.*}}: the barrier 0 of the group at smem+16 expects 256 arrivals per phase, found an arrive executed by 128 threads
// COUNT-NEXT: exit 1

// A barrier of the ring that is never initialised.
// RUN: sh -c 'sed "/mbarrier_init %%e1/d" %S/Inputs/ring.mlir | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=INIT
// INIT: error: {{.*}}: expected every barrier sm90.mbarrier_arrive may use to be initialised, found no init of the barrier 1 of the group at smem+16
// INIT-NEXT: exit 1

// Inits that no sync_block publishes before the roles start.
// RUN: sh -c 'sed "/sm90.sync_block/d" %S/Inputs/ring.mlir | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=SYNC
// SYNC: error: {{.*}}: expected sm90.sync_block after the barrier inits and before sm90.roles, found none
// SYNC-NEXT: exit 1

// A parity that is not a phase bit.
// RUN: sh -c 'sed "s/mbarrier_wait %%full, %%phase/mbarrier_wait %%full, %%lap/" %S/Inputs/ring.mlir | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=PARITY
// PARITY: error: {{.*}}: expected the parity of sm90.mbarrier_wait to be a phase bit (arith.andi x, 1, or arith.xori of one with 1), found the result of arith.divui
// PARITY-NEXT: exit 1

// The producer waiting with the plain phase would wait for a phase that never completes.
// RUN: sh -c 'sed "s/mbarrier_wait %%empty, %%flipped/mbarrier_wait %%empty, %%phase/" %S/Inputs/ring.mlir | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=PLAIN
// PLAIN: error: {{.*}}: the producer waits with the flipped phase bit, found the plain one
// PLAIN-NEXT: exit 1

// The producer waiting on a full barrier.
// RUN: sh -c 'sed "s/mbarrier_wait %%empty, %%flipped/mbarrier_wait %%full, %%flipped/" %S/Inputs/ring.mlir | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=ROLE
// ROLE: error: {{.*}}: the producer waits on empty barriers, found a wait on the barriers 0, 1 of the group at smem+0, which TMA completes
// ROLE-NEXT: exit 1

// A wait on a barrier nobody arrives on.
// RUN: sh -c 'sed "/mbarrier_arrive %%empty/d" %S/Inputs/ring.mlir | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=NOARRIVE
// NOARRIVE: error: {{.*}}: expected an arrive on every barrier sm90.mbarrier_wait may wait on, found none on the barriers 0, 1 of the group at smem+16: the wait would never complete
// NOARRIVE-NEXT: exit 1

// A phase bit that counts laps of a ring of another size than the stage it waits on.
// RUN: sh -c 'sed "s/%%lap = arith.divui %%it, %%c2/%%lap = arith.divui %%it, %%c1/" %S/Inputs/ring.mlir | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=LAP
// LAP: error: {{.*}}: expected the phase of sm90.mbarrier_wait to be (it / 2) & 1 for its stage it % 2, found (it / 1) & 1
// LAP-NEXT: exit 1

// A stage the check cannot tell (neither a constant nor it % S).
// RUN: sh -c 'sed "s/%%s = arith.remui %%it, %%c2/%%s = arith.addi %%it, %%c0/" %S/Inputs/ring.mlir | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=STAGE
// STAGE: error: {{.*}}: expected the stage of the barrier of sm90.mbarrier_{{wait|arrive}} to be a constant or it % S, found the result of arith.addi
// STAGE-NEXT: exit 1

// A stage it % S past the end of its group (in the producer).
// RUN: sh -c 'sed "0,/%%s = arith.remui %%it, %%c2/s//%%s = arith.remui %%it, %%c1024/" %S/Inputs/ring.mlir | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=RANGE
// RANGE: error: {{.*}}: the barrier of sm90.mbarrier_arrive may be stage 1023 of the group at smem+0, which holds 2
// RANGE-NEXT: exit 1

// Barrier groups that share barriers.
// RUN: sh -c 'sed "s/offset 16/offset 8/" %S/Inputs/ring.mlir | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=OVERLAP
// OVERLAP: error: {{.*}}: the barrier group at smem+0 of 2 overlaps the one at smem+8
// OVERLAP-NEXT: exit 1

// A barrier group beyond the kernel's shared memory.
// RUN: sh -c 'sed "s/34816/16/g" %S/Inputs/ring.mlir | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=OUTSIDE
// OUTSIDE: error: {{.*}}: the barrier group at smem+16 of 2 lies outside the kernel's 16 bytes of shared memory
// OUTSIDE-NEXT: exit 1

// Rule 8 on a ring of an if (Inputs/nested.mlir), lowered, then broken.
// The producer's copy of the if loses its number: its fills no longer pair with the waits.
// RUN: sh -c 'tkc-opt %S/Inputs/nested.mlir -p tile-pipeline,tile-warp-specialize,convert-tile-to-sm90,sm90-build-rings 2>/dev/null | sed "0,/{mirrored_if = 0 : i64}/s///" | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=UNPAIRED
// UNPAIRED: error: {{.*}}: the producer handles stages of the ring at smem+16 in no if, where the consumers handle none of them: the roles would count its stages differently
// UNPAIRED-NEXT: exit 1

// The producer's copy branches on another condition than the consumers'.
// RUN: sh -c 'tkc-opt %S/Inputs/nested.mlir -p tile-pipeline,tile-warp-specialize,convert-tile-to-sm90,sm90-build-rings 2>/dev/null | sed "0,/%%even = arith.cmpi eq/s//%%even = arith.cmpi ne/" | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=UNALIKE
// UNALIKE: error: {{.*}}: the producer's and the consumers' copies of if #0 branch on conditions not computed alike, so they may take different branches and count ring stages differently
// UNALIKE-NEXT: exit 1

// The producer's copy carries the number of another if than the consumers' copy.
// RUN: sh -c 'tkc-opt %S/Inputs/nested.mlir -p tile-pipeline,tile-warp-specialize,convert-tile-to-sm90,sm90-build-rings 2>/dev/null | sed "0,/{mirrored_if = 0 : i64}/s//{mirrored_if = 1 : i64}/" | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=OTHERIF
// OTHERIF: error: {{.*}}: the producer handles stages of the ring at smem+16 in branch 0 of if #1, where the consumers handle none of them: the roles would count its stages differently
// OTHERIF-NEXT: exit 1

// Consumers taking turns (attention's overlapped loop) without the handover of the first turn:
// the first consumer would wait for a turn nobody hands over.
// RUN: sh -c 'tkc compile %examples/attention.tk --emit=sm90 | sed "0,/sm90.named_barrier_arrive/{/sm90.named_barrier_arrive/d}" | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=HANDOVER
// HANDOVER: error: {{.*}}: expected one handover of the first turn and turns after it, found 0 handover(s) and 1 turn(s)
// HANDOVER: exit 1

// A turn's arrive that counts one warpgroup: the barrier would complete without the next one.
// RUN: sh -c 'tkc compile %examples/attention.tk --emit=sm90 | sed "s/\(named_barrier_arrive %%[0-9]*\), 256/\1, 128/" | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=TURNCOUNT
// TURNCOUNT: error: {{.*}}: expected a turn's arrive to count 256 threads, found 128
// TURNCOUNT: exit 1

// The producer fills a stage without waiting for the consumers to free it.
// RUN: sh -c 'sed "/sm90.mbarrier_wait %%empty, %%flipped/d" %S/Inputs/ring.mlir | tkc-opt -p sm90-verify-barriers 2>&1; echo "exit $?"' | filecheck %s --check-prefix=NOEMPTY
// NOEMPTY: error: {{.*}}: expected the producer to wait on the stage's empty barrier before it fills the stage (sm90.mbarrier_wait in the same block), found no such wait: it would overwrite a stage the consumers may still read
// NOEMPTY: exit 1
