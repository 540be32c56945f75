// The kernels convert-tile-to-sm90 generates keep the barrier protocol, and the check leaves
// the IR as it was.
// RUN: tkc-opt %S/Inputs/gemm.mlir -p tile-pipeline,tile-warp-specialize,convert-tile-to-sm90,sm90-build-rings,sm90-verify-barriers | filecheck %s --check-prefix=GEMM
// RUN: tkc-opt %S/Inputs/attention.mlir -p tile-pipeline,tile-warp-specialize,convert-tile-to-sm90,sm90-build-rings,sm90-verify-barriers | filecheck %s --check-prefix=ATTN
// RUN: tkc-opt %S/Inputs/ring.mlir -p sm90-verify-barriers | filecheck %s --check-prefix=RING
// RUN: tkc compile %S/Inputs/gemm.mlir --emit=sm90 | filecheck %s --check-prefix=GEMM

// GEMM: sm90.kernel @gemm
// GEMM: sm90.mbarrier_arrive {{.*}} expect_tx
// ATTN: sm90.kernel @attn_fwd
// ATTN: sm90.mbarrier_arrive {{.*}} expect_tx 32768
// ATTN: sm90.mbarrier_arrive {{.*}} expect_tx 65536
// RING: sm90.mbarrier_init %f0, 1
// RING: sm90.mbarrier_wait %empty, %flipped
// RING-NEXT: sm90.mbarrier_arrive %full expect_tx 16384
