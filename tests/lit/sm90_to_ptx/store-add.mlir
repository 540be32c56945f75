// tile.store reduce add (store_add) down to PTX: a register tile goes through the staging chunks
// of a store (here all eight at once: the plan stages whole tiles in a kernel without an mma)
// and each chunk is TMA reduce-added (cp.reduce.async.bulk.tensor ... .add, one bulk group like
// a TMA store's, waited for with .read just before its buffers are rewritten); an f32 row vector
// is added element by element with red.global.add.f32 where a store would st.global it.
// RUN: tkc compile %s --emit=ptx | filecheck %s
// RUN: tkc compile %s --emit=cubin -o %t.cubin
// CHECK-NOT:  cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// CHECK:      cp.async.bulk.wait_group.read 0;
// CHECK-COUNT-8: cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.bulk_group [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [%r{{[0-9]+}}];
// CHECK-NEXT: cp.async.bulk.commit_group;
// CHECK-NOT:  st.global
// CHECK:      red.global.add.f32 [%rd[[A:[0-9]+]]], %f{{[0-9]+}};
// CHECK:      red.global.add.f32 [%rd[[A]]+32], %f{{[0-9]+}};
// CHECK-NOT:  st.global

builtin.module {
  tile.kernel @adds(%X: !tile.gl<[M, 64], f32>, %C: !tile.gl<[M, 64], f32>, %S: !tile.gl<[M], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, 64], f32>
    %c64 = arith.constant 64 : index
    %g = arith.ceildivui %M, %c64 : index
    tile.grid(%g) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %x = tile.load %X[%i, %c0] : !tile.gl<[M, 64], f32> -> !tile.st<64x64xf32>
    %r = tile.to_reg %x : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    tile.store reduce add %r, %C[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, 64], f32>
    %s = tile.reduce sum row %r : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
    tile.store reduce add %s, %S[%i] : !tile.rv<64xf32>, !tile.gl<[M], f32>
    tile.return
  }
}
