"""sm90-verify-barriers: a static check of the mbarrier protocol of every `sm90.kernel`.

A kernel whose barriers disagree with its threads or its TMA boxes hangs on the GPU, and a hang
costs minutes of device time; this check costs nothing. It runs right after sm90-build-rings
(which builds the protocol it checks), changes no IR, and raises a TkError (an internal
protocol violation in the generated kernel) at the first op that breaks one of these rules:

1. every barrier that is arrived on, waited on or that a TMA load completes on was initialised:
   `sm90.mbarrier_init` in a kernel-level `single_thread "block"` region, then
   `sm90.fence_barrier_init` in that region and an `sm90.sync_block` (or, in a cluster kernel,
   `sm90.cluster_sync`) before `sm90.roles`;
2. an arrive runs on as many threads as every barrier it may touch expects per phase (1 in a
   `single_thread`, one per warp in a `single_thread "warp"`, 128 x consumers in the consumer role, 128 in the producer role, the block's
   `threads` at kernel level); an arrive on the peer CTA's barrier (`in cta`) beside it, on the
   same barrier value, counts as many more (the peer does the same to ours);
3. an `expect_tx B` arrive is matched by TMA loads in its block on the same barrier value whose
   `box_bytes` add up to exactly B (a multicast box once for each CTA of its mask, since each
   sends its share to all), and every TMA load's barrier has such an arrive;
4. a wait's parity is a phase bit (`arith.andi x, 1`, or `arith.xori` of one with 1); the
   producer waits on `empty` barriers (no TMA completes on them) with the flipped phase, the
   consumers on `full` ones (TMA completes on them) with the plain phase; a phase bit
   `(it / S) & 1` on a barrier whose stage is `it % S` uses that same `it` and `S`;
5. every barrier waited on has an arrive, or the wait never completes;
6. store fences (tile-memory-order's, lowered to counter slots after the mbarriers): each slot is
   initialised with the barriers, signalled at one consumer site and waited on at one producer
   site at the same loop depth; before the signal the consumers fence their global stores for
   the async proxy (`sm90.fence_proxy_async_global`), wait in an elected thread until their TMA
   stores are written (`sm90.tma_store_wait 0`, not `read`) and meet on a named barrier of all
   consumer threads; after the wait the producer fences before it loads;
7. every producer TMA load of a tensor the consumers store says how it is ordered after those
   stores: `after_stores` (then a store-fence wait precedes it on its path, the wait of the
   tile.fence its claim names where it names one) or
   `disjoint_from_stores` (tile-memory-order proved no earlier store overlaps it);
8. the producer fills a ring's stages on the paths the consumers wait for them: each of its
   `expect_tx` arrives on a group of full barriers, and each consumers' wait on that group, lies
   in branches of the kernel's ifs (the role copies numbered `mirrored_if`; an unnumbered scf.if
   is a role's own guard, such as the consumers' first iteration of an overlapped loop, which
   runs where the producer's loop does), and the producer's fills and the consumers' waits of a
   group sit in the same sets of branches, so both roles count the same stages on every path;
   and the two copies of each such if branch on a condition computed alike (the same ops on the
   same constants, parameters, block indices and loop counters, and on vars that both copies
   carry through the same loops and ifs from values alike with updates alike (_Alike): an if's
   condition may use nothing else), so they take the same branch.
9. consumers that take turns (tile-pipeline's `turns`) pass one turn round: each
   `sm90.named_barrier_arrive` of the consumers either hands the first turn over (once, under an
   if at the top of the role, on turn barrier 0) or ends a turn that an `sm90.named_barrier` of
   2 x 128 threads started earlier in its block, with no other arrive between; turns exist iff
   the handover does, and the producer takes none;
10. before each fill of a ring's stage (`sm90.mbarrier_at %full, %empty[%stage]`), the producer
   waits on that stage's empty barrier in the same block.

Barriers are typed values: an op's `!sm90.mbarrier` is one stage of an `!sm90.mbarriers<N>`
group (`sm90.mbarrier_at %group[%stage]`), and each group lies at a fixed offset of shared
memory (`sm90.mbarrier_group`). So a barrier is (its group's offset, its stage), read off the
IR: a constant stage names one barrier, a stage `it % S` (S constant, at most the group's size)
any of the group's first S; any other stage is one the check cannot tell, and an error. Groups
lie in the kernel's shared memory and do not overlap, and the store-fence slots of rule 6 (plain
addresses: `sm90.smem_base` + a constant) lie outside them.
"""

from __future__ import annotations

import re

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass

from tkc.abi import PointerParam, TensorMapParam
from tkc.diagnostics import TkError, defect_at, error_at, location_of
from tkc.dialects import sm90
from tkc.dialects.tile import index_constant
from tkc.passes.plan import WARPGROUP_THREADS, turn_barrier

Barrier = tuple[int, int]
"""A barrier: its group's byte offset from the shared-memory base, and its stage in the group."""


def _names(barriers: frozenset[Barrier] | set[Barrier]) -> str:
    stages: dict[int, list[int]] = {}
    for offset, stage in sorted(barriers):
        stages.setdefault(offset, []).append(stage)
    groups = " and ".join(f"{', '.join(map(str, s))} of the group at smem+{offset}" for offset, s in stages.items())
    return ("the barrier " if len(barriers) == 1 else "the barriers ") + groups


def _stage_counter(barrier: SSAValue) -> tuple[SSAValue, int] | None:
    """(it, S) when the barrier's stage is `arith.remui it, S` with S constant."""
    at = barrier.owner
    if isinstance(at, sm90.MbarrierAtOp) and isinstance(op := at.stage.owner, arith.RemUIOp):
        if (stages := index_constant(op.rhs)) is not None and stages > 0:
            return op.lhs, stages
    return None


def _group_of(barrier: SSAValue) -> sm90.MbarrierGroupOp | None:
    at = barrier.owner
    return at.group_ops()[at.barriers.index(barrier)] if isinstance(at, sm90.MbarrierAtOp) else None


def _stages(barrier: SSAValue) -> range | None:
    """The stages an `!sm90.mbarrier` may be: c for a constant stage c, the first S for a stage
    it % S; None when it is neither (or not an sm90.mbarrier_at result)."""
    at = barrier.owner
    if not isinstance(at, sm90.MbarrierAtOp):
        return None
    if (stage := index_constant(at.stage)) is not None:
        return range(stage, stage + 1)
    counter = _stage_counter(barrier)
    return range(counter[1]) if counter is not None else None


def barriers_of(barrier: SSAValue) -> frozenset[Barrier] | None:
    """The barriers an `!sm90.mbarrier` may be (its group's offset and each of _stages)."""
    group, stages = _group_of(barrier), _stages(barrier)
    if group is None or stages is None:
        return None
    return frozenset((group.offset.value.data, s) for s in stages)


def _found(value: SSAValue) -> str:
    owner = value.owner
    return f"the result of {owner.name}" if isinstance(owner, Operation) else "a block argument"


def _role(op: Operation) -> str | None:
    """'producer' or 'consumer' when op lies in that region of an `sm90.roles`."""
    while (parent := op.parent_op()) is not None:
        if isinstance(parent, sm90.RolesOp):
            return "producer" if op.parent_region() is parent.producer else "consumer"
        op = parent
    return None


def _threads(op: Operation, kernel: sm90.KernelOp) -> int:
    """How many threads execute op (one per warp inside a `single_thread "warp"`)."""
    per_warp = False
    while (parent := op.parent_op()) is not None:
        if isinstance(parent, sm90.SingleThreadOp):
            if parent.scope.data != "warp":
                return 1
            per_warp = True
        if isinstance(parent, sm90.RolesOp):
            threads = WARPGROUP_THREADS * (1 if op.parent_region() is parent.producer else parent.consumers.value.data)
            return threads // 32 if per_warp else threads
        op = parent
    return kernel.threads.value.data // 32 if per_warp else kernel.threads.value.data


def _phase(parity: SSAValue) -> tuple[bool, SSAValue] | None:
    """(flipped, lap) when parity is the phase bit `lap & 1` (flipped: xori'd with 1 an odd
    number of times); None when it is not a phase bit."""
    op = parity.owner
    if not isinstance(op, arith.AndIOp | arith.XOrIOp):
        return None
    for bit, other in ((op.rhs, op.lhs), (op.lhs, op.rhs)):
        if index_constant(bit) != 1:
            continue
        if isinstance(op, arith.AndIOp):
            return False, other
        inner = _phase(other)
        return None if inner is None else (not inner[0], inner[1])
    return None


class _KernelCheck:
    def __init__(self, kernel: sm90.KernelOp):
        self.kernel = kernel
        self.groups: dict[int, int] = {}
        """The size of the barrier group at each offset."""
        self.counts: dict[Barrier, int] = {}

    def fail(self, op: Operation, what: str) -> TkError:
        return defect_at(
            op, f"internal mbarrier protocol violation in the generated kernel @{self.kernel.sym_name.data}: {what}"
        )

    def barriers(self, op: Operation, barrier: SSAValue) -> frozenset[Barrier]:
        """The barriers `barrier` may be (barriers_of), each one of its group's."""
        group, stages = _group_of(barrier), _stages(barrier)
        if group is None:
            raise self.fail(op, f"expected the barrier of {op.name} from sm90.mbarrier_at, found {_found(barrier)}")
        if stages is None:
            assert isinstance(at := barrier.owner, sm90.MbarrierAtOp)
            raise self.fail(
                op, f"expected the stage of the barrier of {op.name} to be a constant or it % S, found {_found(at.stage)}"
            )
        if stages.stop > group.count:
            raise self.fail(
                op, f"the barrier of {op.name} may be stage {stages.stop - 1} of the group at "
                f"smem+{group.offset.value.data}, which holds {group.count}",
            )
        return frozenset((group.offset.value.data, s) for s in stages)

    def check_groups(self) -> None:
        """Every group's barriers are its own and in the kernel's shared memory: groups at one
        offset agree on their size, others do not overlap."""
        for group in (op for op in self.kernel.walk() if isinstance(op, sm90.MbarrierGroupOp)):
            offset = group.offset.value.data
            if offset + sm90.MBARRIER_BYTES * group.count > self.kernel.smem_bytes.value.data:
                raise self.fail(group, f"the barrier group at smem+{offset} of {group.count} lies outside the "
                                f"kernel's {self.kernel.smem_bytes.value.data} bytes of shared memory")
            if self.groups.setdefault(offset, group.count) != group.count:
                raise self.fail(group, f"the barrier groups at smem+{offset} differ in size")
        spans = sorted(self.groups.items())
        for (offset, count), (next_offset, _) in zip(spans, spans[1:]):
            if offset + sm90.MBARRIER_BYTES * count > next_offset:
                raise self.fail(
                    self.kernel, f"the barrier group at smem+{offset} of {count} overlaps the one at smem+{next_offset}"
                )

    def in_group(self, offset: int) -> bool:
        return any(start <= offset < start + sm90.MBARRIER_BYTES * count for start, count in self.groups.items())

    def run(self) -> None:
        self.check_groups()
        self.check_inits()
        arrives = [op for op in self.kernel.walk() if isinstance(op, sm90.MbarrierArriveOp)]
        waits = [op for op in self.kernel.walk() if isinstance(op, sm90.MbarrierWaitOp)]
        loads = [op for op in self.kernel.walk() if isinstance(op, sm90.TmaLoadOp)]
        arrived: set[Barrier] = set()
        for arrive in arrives:
            touched = self.initialised(arrive, arrive.barrier)
            arrived |= touched
            if arrive.cta is not None:
                if not any(a.cta is None and a.barrier is arrive.barrier and a.parent_block() is arrive.parent_block()
                           for a in arrives):
                    raise self.fail(arrive, "expected a local arrive beside an arrive on the peer CTA's barrier, found none")
                continue
            remote = [a for a in arrives
                      if a.cta is not None and a.barrier is arrive.barrier and a.parent_block() is arrive.parent_block()]
            threads = _threads(arrive, self.kernel) * (1 + len(remote))
            for barrier in sorted(touched):
                if self.counts[barrier] != threads:
                    raise self.fail(
                        arrive,
                        f"{_names({barrier})} expects {self.counts[barrier]} arrivals per phase, "
                        f"found an arrive executed by {threads} thread{'s' if threads != 1 else ''}",
                    )
            if arrive.tx_bytes is not None:
                self.check_expect_tx(arrive, loads)
        full: set[Barrier] = set()
        for load in loads:
            full |= self.initialised(load, load.barrier)
            if not any(
                a.tx_bytes is not None and a.barrier is load.barrier and a.parent_block() is load.parent_block()
                for a in arrives
            ):
                raise self.fail(
                    load,
                    f"a TMA load completing on {_names(self.barriers(load, load.barrier))} expects an "
                    f"sm90.mbarrier_arrive expect_tx on the same barrier in its block, found none",
                )
        for wait in waits:
            self.check_wait(wait, arrived, full)
        self.check_mirrored_branches(arrives, waits)
        self.check_fills_wait_for_empty(arrives, waits)
        self.check_store_fences()
        self.check_loads_after_stores(loads)
        self.check_turns()

    def check_fills_wait_for_empty(self, arrives: list[sm90.MbarrierArriveOp], waits: list[sm90.MbarrierWaitOp]) -> None:
        """Rule 10: before the producer fills a stage of a ring (full and empty barriers taken
        together, `sm90.mbarrier_at %full, %empty[%stage]`), it waits in the same block on an
        empty barrier of that stage, or it would overwrite a stage the consumers still read."""
        for fill in arrives:
            at = fill.barrier.owner
            if fill.tx_bytes is None or _role(fill) != "producer" or not isinstance(at, sm90.MbarrierAtOp) \
                    or len(at.barriers) < 2:
                continue
            before = set()
            previous = fill.prev_op
            while previous is not None:
                before.add(previous)
                previous = previous.prev_op
            if not any(w in before and isinstance(o := w.barrier.owner, sm90.MbarrierAtOp)
                       and (o is at or o.stage is at.stage) and w.barrier is not fill.barrier for w in waits):
                raise self.fail(fill, "expected the producer to wait on the stage's empty barrier before it fills the "
                                      "stage (sm90.mbarrier_wait in the same block), found no such wait: it would "
                                      "overwrite a stage the consumers may still read")

    def check_turns(self) -> None:
        """Rule 9: the handover and every turn's start and end."""
        roles = next((op for op in self.kernel.walk() if isinstance(op, sm90.RolesOp)), None)
        arrives = [op for op in self.kernel.walk() if isinstance(op, sm90.NamedBarrierArriveOp)]
        if roles is None or not arrives:
            return
        turn_threads = 2 * WARPGROUP_THREADS
        handovers, turns = [], []
        for arrive in arrives:
            if _role(arrive) != "consumer":
                raise self.fail(arrive, "expected named-barrier arrives (turns) in the consumer role only")
            if arrive.threads.value.data != turn_threads:
                raise self.fail(arrive, f"expected a turn's arrive to count {turn_threads} threads, found "
                                        f"{arrive.threads.value.data}")
            guard = arrive.parent_op()
            if isinstance(guard, scf.IfOp) and guard.parent_block() is roles.consumer.block:
                first = turn_barrier(roles.consumers.value.data, 0)
                if index_constant(arrive.barrier_id) != first:
                    raise self.fail(arrive, f"expected the turn's handover on named barrier {first}")
                handovers.append(arrive)
                continue
            previous = arrive.prev_op
            while previous is not None and not isinstance(previous, sm90.NamedBarrierArriveOp | sm90.NamedBarrierOp):
                previous = previous.prev_op
            if not (isinstance(previous, sm90.NamedBarrierOp) and previous.threads.value.data == turn_threads):
                raise self.fail(arrive, f"expected a turn's end to follow its start (an sm90.named_barrier of "
                                        f"{turn_threads} threads) in its block")
            turns.append(arrive)
        if len(handovers) != 1 or not turns:
            raise self.fail(arrives[0], f"expected one handover of the first turn and turns after it, found "
                                        f"{len(handovers)} handover(s) and {len(turns)} turn(s)")

    def check_mirrored_branches(self, arrives: list[sm90.MbarrierArriveOp], waits: list[sm90.MbarrierWaitOp]) -> None:
        """Rule 8: fills and waits of each full-barrier group on the same branches of the
        kernel's ifs, whose two copies branch on conditions computed alike."""
        fills = [a for a in arrives if a.tx_bytes is not None and _role(a) == "producer"]
        sites: dict[int, dict[str, dict[tuple[tuple[int, int], ...], Operation]]] = {}
        copies: dict[int, dict[str, scf.IfOp]] = {}
        for fill in fills:
            group = _group_of(fill.barrier)
            assert group is not None  # initialised() checked it
            sites.setdefault(group.offset.value.data, {"producer": {}, "consumer": {}})
        handled: list[sm90.MbarrierArriveOp | sm90.MbarrierWaitOp] = [*fills, *(w for w in waits if _role(w) == "consumer")]
        for site in handled:
            group = _group_of(site.barrier)
            role = _role(site)
            if group is None or role is None or group.offset.value.data not in sites:
                continue
            sites[group.offset.value.data][role].setdefault(self.branches(site, role, copies), site)
        for offset, by_role in sites.items():
            for role, other in (("producer", "consumer"), ("consumer", "producer")):
                for branches, where_op in by_role[role].items():
                    if branches not in by_role[other]:
                        where = ", ".join(f"branch {b} of if #{n}" for n, b in branches) or "no if"
                        raise self.fail(
                            where_op, f"the {role} handles stages of the ring at smem+{offset} in {where}, where the "
                            f"{other}s handle none of them: the roles would count its stages differently",
                        )
        for number, pair in copies.items():
            if set(pair) != {"producer", "consumer"}:
                continue  # one role's copy only: no ring stage under it (checked above)
            alike = _Alike()
            if not alike.same(pair["producer"].cond, pair["consumer"].cond):
                raise self.fail(
                    pair["producer"], f"the producer's and the consumers' copies of if #{number} branch on conditions "
                    "not computed alike, so they may take different branches and count ring stages differently",
                )

    def branches(self, op: Operation, role: str, copies: dict[int, dict[str, scf.IfOp]]) -> tuple[tuple[int, int], ...]:
        """The (if number, branch) of each mirrored if around op in its role, outermost first."""
        found: list[tuple[int, int]] = []
        inner: Operation = op
        while (parent := inner.parent_op()) is not None and not isinstance(parent, sm90.RolesOp):
            if isinstance(parent, scf.IfOp):
                number = parent.attributes.get(sm90.MIRRORED_IF)
                if not isinstance(number, IntegerAttr):
                    # a role's own guard, not a branch of the kernel's (the first iteration of an
                    # overlapped loop, in the consumers, runs where the producer's loop does)
                    inner = parent
                    continue
                n = number.value.data
                copies.setdefault(n, {})[role] = parent
                found.append((n, parent.regions.index(inner.parent_region())))
            inner = parent
        return tuple(reversed(found))

    def slot(self, op: Operation, slot: SSAValue) -> int:
        """The offset of a store-fence slot: its address is sm90.smem_base + a constant."""
        add = slot.owner
        if isinstance(add, arith.AddiOp):
            for base, offset in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
                if isinstance(base.owner, sm90.SmemBaseOp) and (constant := index_constant(offset)) is not None:
                    return constant
        raise self.fail(
            op, f"expected {op.name} on one store-fence slot (sm90.smem_base + a constant), found {_found(slot)}"
        )

    def check_store_fences(self) -> None:
        sites: dict[int, dict[type[Operation], list[Operation]]] = {}
        for op in self.kernel.walk():
            if isinstance(op, sm90.StoreFenceInitOp | sm90.StoreFenceSignalOp | sm90.StoreFenceWaitOp):
                sites.setdefault(self.slot(op, op.slot), {}).setdefault(type(op), []).append(op)
        for offset, by_kind in sorted(sites.items()):
            inits = by_kind.get(sm90.StoreFenceInitOp, [])
            signals = by_kind.get(sm90.StoreFenceSignalOp, [])
            waits = by_kind.get(sm90.StoreFenceWaitOp, [])
            first = (inits + signals + waits)[0]
            if len(inits) != 1 or self.in_group(offset):
                raise self.fail(first, f"expected one sm90.store_fence_init of the slot at smem+{offset}, apart from the mbarriers")
            region = inits[0].parent_op()
            if not (isinstance(region, sm90.SingleThreadOp) and region.scope.data == "block"):
                raise self.fail(inits[0], "expected sm90.store_fence_init among the barrier inits, found it elsewhere")
            if len(signals) != 1 or len(waits) != 1:
                raise self.fail(
                    first,
                    f"the store fence at smem+{offset} expects one consumer signal and one producer wait, "
                    f"found {len(signals)} and {len(waits)}",
                )
            signal, wait = signals[0], waits[0]
            assert isinstance(signal, sm90.StoreFenceSignalOp)
            if _role(signal) != "consumer" or _role(wait) != "producer":
                raise self.fail(signal, "a store fence is signalled by the consumers and waited on by the producer")
            if _threads(signal, self.kernel) != 1:
                raise self.fail(signal, "expected one thread to signal a store fence, found several")
            if _loop_depth(signal) != _loop_depth(wait):
                raise self.fail(
                    wait, "the producer waits on a store fence in another loop nest than the consumers signal it: "
                    "their pass counts would differ",
                )
            self.check_signal_order(signal)
            following = _after(wait)
            if not following or not isinstance(following[0], sm90.FenceProxyAsyncGlobalOp):
                raise self.fail(wait, "expected sm90.fence_proxy_async_global right after the producer's store-fence wait")

    def check_signal_order(self, signal: sm90.StoreFenceSignalOp) -> None:
        """Before the signal, in the consumers' block that holds it (the signal sits in an elected
        thread under an if of the first consumer, all of it maybe in the branch of a program's if):
        proxy fence, full TMA store wait in an elected thread, named barrier of all consumer threads."""
        roles = next(p for p in _ancestors(signal) if isinstance(p, sm90.RolesOp))
        consumer_threads = WARPGROUP_THREADS * roles.consumers.value.data
        expected = ["fence", "store wait", "barrier"]

        def ordered_before(site: Operation) -> bool:
            seen: list[str] = []
            previous = site.prev_op
            while previous is not None and len(seen) < len(expected):
                if isinstance(previous, sm90.NamedBarrierOp) and previous.threads.value.data == consumer_threads and not seen:
                    seen.append("barrier")
                elif seen == ["barrier"] and isinstance(previous, sm90.SingleThreadOp) and any(
                    isinstance(o, sm90.TmaStoreWaitOp) and o.pending.value.data == 0 and o.read is None
                    for o in previous.walk()
                ):
                    seen.append("store wait")
                elif seen == ["barrier", "store wait"] and isinstance(previous, sm90.FenceProxyAsyncGlobalOp):
                    seen.append("fence")
                previous = previous.prev_op
            return len(seen) == len(expected)

        sites: list[Operation] = [signal]
        while isinstance(parent := sites[-1].parent_op(), sm90.SingleThreadOp | scf.IfOp):
            sites.append(parent)
        if not any(ordered_before(site) for site in sites):
            raise self.fail(
                signal,
                "expected the consumers to fence their global stores, wait until their TMA stores are written and "
                f"meet on a named barrier of all {consumer_threads} consumer threads before signalling a store fence",
            )

    def check_loads_after_stores(self, loads: list[sm90.TmaLoadOp]) -> None:
        arg_of = {p.name: p.arg for p in self.kernel.abi.data.params if isinstance(p, TensorMapParam | PointerParam)}

        def argument(value: SSAValue) -> str | None:
            owner = value.owner
            return arg_of.get(owner.param.data) if isinstance(owner, sm90.TensorMapParamOp | sm90.PointerParamOp) else None

        stored = {argument(op.tensor_map) for op in self.kernel.walk() if isinstance(op, sm90.TmaStoreOp)}
        stored |= {argument(op.base) for op in self.kernel.walk() if isinstance(op, sm90.StoreVectorGlobalOp)}
        for load in loads:
            arg = argument(load.tensor_map)
            if arg is None or arg not in stored:
                continue
            if "disjoint_from_stores" in load.attributes:
                continue
            if "after_stores" not in load.attributes:
                raise self.fail(
                    load, f"a TMA load of {arg}, which the consumers also store, expects after_stores or "
                    "disjoint_from_stores (tile-memory-order's decision), found neither",
                )
            waits = [op for op in _before_on_path(load) if isinstance(op, sm90.StoreFenceWaitOp)]
            if not waits:
                raise self.fail(load, f"a TMA load of {arg} after its stores expects a store-fence wait before it, found none")
            claim = load.attributes["after_stores"]
            named = _FENCE_LINE.search(claim.data) if isinstance(claim, StringAttr) else None
            if named is None or any(location_of(wait)[1] == int(named[1]) for wait in waits):
                continue
            if not any(location_of(wait)[1] == int(named[1]) for wait in self.kernel.walk()
                       if isinstance(wait, sm90.StoreFenceWaitOp)):
                # the decision's text and the fences' locations disagree: IR edited by hand
                raise error_at(load, f"the TMA load of {arg} is ordered by the tile.fence at line {named[1]} "
                                     f"(its memory_order says), and no tile.fence of the kernel is at line {named[1]}: "
                                     "an edited location or decision; compile the program again")
            raise self.fail(load, f"a TMA load of {arg} is ordered by the tile.fence at line {named[1]}, "
                                  f"whose store-fence wait is not before it on its path (a load moved past its fence)")

    def check_inits(self) -> None:
        body = self.kernel.body.block
        for init in (op for op in self.kernel.walk() if isinstance(op, sm90.MbarrierInitOp)):
            region = init.parent_op()
            if not (
                isinstance(region, sm90.SingleThreadOp)
                and region.scope.data == "block"
                and region.parent_block() is body
            ):
                raise self.fail(
                    init,
                    "expected sm90.mbarrier_init in a kernel-level single_thread \"block\" region, found it elsewhere",
                )
            barriers = self.barriers(init, init.barrier)
            if len(barriers) != 1:
                raise self.fail(init, f"expected sm90.mbarrier_init of one barrier, found one of {_names(barriers)}")
            (barrier,) = barriers
            if barrier in self.counts:
                raise self.fail(init, f"expected one sm90.mbarrier_init of {_names(barriers)}, found a second one")
            self.counts[barrier] = init.count.value.data
            self.check_fenced(init, region)

    def check_fenced(self, init: sm90.MbarrierInitOp, region: sm90.SingleThreadOp) -> None:
        if not any(isinstance(op, sm90.FenceBarrierInitOp) for op in _after(init)):
            raise self.fail(init, "expected sm90.fence_barrier_init after sm90.mbarrier_init in its region, found none")
        synced = False
        for op in _after(region):
            synced = synced or isinstance(op, sm90.SyncBlockOp | sm90.ClusterSyncOp)
            if isinstance(op, sm90.RolesOp):
                if synced:
                    return
                break
        raise self.fail(init, "expected sm90.sync_block after the barrier inits and before sm90.roles, found none")

    def initialised(self, op: Operation, barrier: SSAValue) -> frozenset[Barrier]:
        barriers = self.barriers(op, barrier)
        missing = barriers - self.counts.keys()
        if missing:
            raise self.fail(
                op, f"expected every barrier {op.name} may use to be initialised, found no init of {_names(missing)}"
            )
        return barriers

    def check_expect_tx(self, arrive: sm90.MbarrierArriveOp, loads: list[sm90.TmaLoadOp]) -> None:
        assert arrive.tx_bytes is not None
        expected = arrive.tx_bytes.value.data
        found = sum(
            load.box_bytes.value.data * (bin(load.multicast.value.data).count("1") if load.multicast else 1)
            for load in loads
            if load.barrier is arrive.barrier and load.parent_block() is arrive.parent_block()
        )
        if found != expected:
            raise self.fail(
                arrive,
                f"sm90.mbarrier_arrive expect_tx {expected} expects TMA loads of {expected} bytes on the same barrier "
                f"in its block, found {found} bytes",
            )

    def check_wait(self, wait: sm90.MbarrierWaitOp, arrived: set[Barrier], full: set[Barrier]) -> None:
        barriers = self.initialised(wait, wait.barrier)
        never = barriers - arrived
        if never:
            raise self.fail(
                wait,
                f"expected an arrive on every barrier sm90.mbarrier_wait may wait on, found none on {_names(never)}: "
                "the wait would never complete",
            )
        phase = _phase(wait.parity)
        if phase is None:
            raise self.fail(
                wait,
                "expected the parity of sm90.mbarrier_wait to be a phase bit (arith.andi x, 1, or arith.xori "
                f"of one with 1), found {_found(wait.parity)}",
            )
        flipped, lap = phase
        role = _role(wait)
        if role is None:
            raise self.fail(wait, "expected sm90.mbarrier_wait in the producer or consumer role, found it outside sm90.roles")
        on_full = barriers <= full
        if not on_full and barriers & full:
            raise self.fail(wait, f"a wait expects either full or empty barriers, found both among {_names(barriers)}")
        if role == "producer" and on_full:
            raise self.fail(
                wait, f"the producer waits on empty barriers, found a wait on {_names(barriers)}, which TMA completes"
            )
        if role == "consumer" and not on_full:
            raise self.fail(
                wait, f"consumers wait on full barriers, found a wait on {_names(barriers)}, which no TMA completes"
            )
        if flipped != (role == "producer"):
            expected, found = ("flipped", "plain") if role == "producer" else ("plain", "flipped")
            raise self.fail(wait, f"the {role} waits with the {expected} phase bit, found the {found} one")
        self.check_lap(wait, lap)

    def check_lap(self, wait: sm90.MbarrierWaitOp, lap: SSAValue) -> None:
        """A phase bit (it / S) & 1 must count laps of the ring whose stage is it % S."""
        division = lap.owner
        stage = _stage_counter(wait.barrier)
        if not (isinstance(division, arith.DivUIOp) and (laps := index_constant(division.rhs)) is not None and stage):
            return
        if (division.lhs, laps) == stage:
            return
        it, count = stage
        counter = "it" if division.lhs is it else "another count"
        raise self.fail(
            wait,
            f"expected the phase of sm90.mbarrier_wait to be (it / {count}) & 1 for its stage it % {count}, "
            f"found ({counter} / {laps}) & 1",
        )


class _Alike:
    """Whether two values, one of each role, are computed alike: the same ops (name, properties
    and attributes but the location) on operands computed alike, down to constants, parameters,
    block indices and the counters of loops at the same place of the source (their locations);
    a loop-carried value (a `var` updated in a loop: an iter_arg, or the loop's result) where both
    loops stand at the same place with bounds alike, start from values alike and yield values
    alike given that (by induction over the iterations); an if's result where both ifs stand at
    the same place, branch on conditions alike and yield values alike in each branch. Anything
    else is not proven alike."""

    def __init__(self) -> None:
        self.proven: set[tuple[SSAValue, SSAValue]] = set()

    def same(self, a: SSAValue, b: SSAValue) -> bool:
        if (a, b) in self.proven:
            return True
        if isinstance(a, BlockArgument) or isinstance(b, BlockArgument):
            if not (isinstance(a, BlockArgument) and isinstance(b, BlockArgument)):
                return False
            loops = a.block.parent_op(), b.block.parent_op()
            if not (isinstance(loops[0], scf.ForOp) and isinstance(loops[1], scf.ForOp)
                    and loops[0].location == loops[1].location):
                return False
            if a.index == 0 or b.index == 0:
                alike = a.index == b.index  # the counters
            else:
                alike = self.carried(loops[0], a.index - 1, loops[1], b.index - 1)
        else:
            assert isinstance(a, OpResult) and isinstance(b, OpResult)
            x, y = a.op, b.op
            if isinstance(x, scf.ForOp) and isinstance(y, scf.ForOp) and x.location == y.location:
                alike = self.carried(x, a.index, y, b.index)
            elif isinstance(x, scf.IfOp) and isinstance(y, scf.IfOp) and x.location == y.location:
                alike = self.same(x.cond, y.cond) and all(
                    self.same(_yielded(rx, a.index), _yielded(ry, b.index))
                    for rx, ry in ((x.true_region, y.true_region), (x.false_region, y.false_region)))
            else:
                alike = (
                    x.name == y.name and not x.regions and not y.regions and a.index == b.index
                    and x.properties == y.properties and x.attributes == y.attributes
                    and len(x.operands) == len(y.operands)
                    and all(self.same(p, q) for p, q in zip(x.operands, y.operands))
                )
        if alike:
            self.proven.add((a, b))
        return alike

    def carried(self, x: scf.ForOp, i: int, y: scf.ForOp, j: int) -> bool:
        """Whether carried value i of loop x and j of loop y are alike in every iteration: bounds
        and start values alike, and the yields alike where the carried values are (induction)."""
        if not (self.same(x.lb, y.lb) and self.same(x.ub, y.ub) and self.same(x.step, y.step)
                and self.same(x.iter_args[i], y.iter_args[j])):
            return False
        before = set(self.proven)
        self.proven.add((x.body.block.args[i + 1], y.body.block.args[j + 1]))
        if self.same(_yielded(x.body, i), _yielded(y.body, j)):
            return True
        self.proven = before  # the assumption failed: nothing proven under it stands
        return False


def _yielded(region: Region, index: int) -> SSAValue:
    terminator = region.block.last_op
    assert terminator is not None
    return terminator.operands[index]


def _ancestors(op: Operation) -> list[Operation]:
    chain = []
    while (parent := op.parent_op()) is not None:
        chain.append(parent)
        op = parent
    return chain


def _loop_depth(op: Operation) -> int:
    return sum(isinstance(p, scf.ForOp) for p in _ancestors(op))


_FENCE_LINE = re.compile(r"the tile\.fence at line (\d+) orders them")
"""How tile-memory-order's memory_order names the fence that orders a load (tkc.passes.tile_memory_order)."""


def _before_on_path(op: Operation) -> list[Operation]:
    """The ops that run before `op` on every path to it: earlier ops of its block and of each
    enclosing block, up to the role."""
    ops: list[Operation] = []
    current: Operation | None = op
    while current is not None and not isinstance(current, sm90.RolesOp):
        previous = current.prev_op
        while previous is not None:
            ops.append(previous)
            previous = previous.prev_op
        current = current.parent_op()
    return ops


def _after(op: Operation) -> list[Operation]:
    following: list[Operation] = []
    current = op.next_op
    while current is not None:
        following.append(current)
        current = current.next_op
    return following


class Sm90VerifyBarriersPass(ModulePass):
    name = "sm90-verify-barriers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.walk():
            if isinstance(kernel, sm90.KernelOp):
                _KernelCheck(kernel).run()
