// The kernels convert-tile-to-sm90 generates keep the barrier protocol, and the check leaves
// the IR as it was.
// RUN: tkc-opt %S/Inputs/gemm.mlir -p tile-pipeline,tile-warp-specialize,convert-tile-to-sm90,sm90-build-rings,sm90-verify-barriers | filecheck %s --check-prefix=GEMM
// RUN: tkc-opt %S/Inputs/attention.mlir -p tile-pipeline,tile-warp-specialize,convert-tile-to-sm90,sm90-build-rings,sm90-verify-barriers | filecheck %s --check-prefix=ATTN
// RUN: tkc-opt %S/Inputs/ring.mlir -p sm90-verify-barriers | filecheck %s --check-prefix=RING
// RUN: tkc compile %S/Inputs/gemm.mlir --emit=sm90 | filecheck %s --check-prefix=GEMM
// RUN: tkc-opt %S/Inputs/nested.mlir -p tile-pipeline,tile-warp-specialize,convert-tile-to-sm90,sm90-build-rings,sm90-verify-barriers 2>/dev/null | filecheck %s --check-prefix=NESTED

// GEMM: sm90.kernel @gemm
// GEMM: sm90.mbarrier_arrive {{.*}} expect_tx
// ATTN: sm90.kernel @attn_fwd
// ATTN: sm90.mbarrier_arrive {{.*}} expect_tx 32768
// ATTN: sm90.mbarrier_arrive {{.*}} expect_tx 65536
// RING: sm90.mbarrier_init %f0, 1
// RING: sm90.mbarrier_wait %empty, %flipped
// RING-NEXT: sm90.mbarrier_arrive %full expect_tx 16384

// A ring in a nested loop and one of an if in it: the producer fills the if's stages in both
// branches of its copy, the consumers wait in both of theirs; both copies carry the number.
// NESTED: sm90.kernel @nested
// NESTED: producer {
// NESTED: %even = arith.cmpi eq, %r, %c0 : index
// NESTED-NEXT: scf.if %even -> (index) {
// NESTED: sm90.mbarrier_arrive {{.*}} expect_tx 8192
// NESTED: } else {
// NESTED: sm90.mbarrier_arrive {{.*}} expect_tx 8192
// NESTED: }{mirrored_if = 0 : i64}
// NESTED: consumer {
// NESTED: scf.if %even_1 -> (!sm90.frag<64x64xf32>, index) {
// NESTED: sm90.mbarrier_wait
// NESTED: } else {
// NESTED: sm90.mbarrier_wait
// NESTED: }{mirrored_if = 0 : i64}
