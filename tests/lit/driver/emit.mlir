// --emit stops at each stage: tile IR, sm90 IR, PTX text, a cubin, SASS; -D reaches the frontend.
// RUN: tkc compile %examples/gemm.tk -k gemm -D BN=128 --emit=tile | filecheck %s --check-prefix=TILE
// RUN: tkc compile %examples/gemm.tk -k gemm --emit=sm90 | filecheck %s --check-prefix=SM90
// RUN: tkc compile %examples/gemm.tk -k gemm --emit=ptx -o %t.ptx
// RUN: filecheck %s --check-prefix=PTX < %t.ptx
// RUN: tkc compile %examples/gemm.tk -k gemm --emit=cubin -o %t.cubin
// RUN: od -A n -N 4 -t x1 %t.cubin | filecheck %s --check-prefix=ELF
// RUN: tkc compile %examples/gemm.tk -k gemm --emit=sass | filecheck %s --check-prefix=SASS

// TILE:     tile.kernel @gemm
// TILE-SAME: params = {BM = 128 : i64, BN = 128 : i64, BK = 64 : i64}
// TILE:     !tile.st<64x128xbf16, swizzle 128>
// TILE-NOT: sm90.

// SM90:     sm90.kernel @gemm
// SM90-NOT: tile.

// PTX:      .version
// PTX:      .target sm_90a
// PTX:      .entry gemm(
// PTX:      cp.async.bulk.tensor
// PTX:      wgmma.mma_async

// ELF: 7f 45 4c 46

// SASS: UTMALDG
// SASS: HGMMA
