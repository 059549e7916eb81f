// SPDX-License-Identifier: Apache-2.0
// Direct levels (docs/design.md, "Direct levels"): when every record of level L + 1 goes to one thread, coalescing or
// static broadcast node C, the scheduler records no level pass before L + 1. Instead the last workgroup of level L to
// finish prepares level L + 1, as the level pass would have (meta_shaders/level.comp): C's indirect arguments and statistics, the
// header's level, and the cleared half that level L + 1 writes. Level L + 1 then follows level L after one barrier, as in
// a hand-written chain of indirect dispatches, instead of a barrier, a level-pass dispatch and a second barrier.
//
// The pass wraps the entry point: a new entry function calls the lowered one, then runs the hand-off. Every return of
// the node's code (and of the prologue's early returns) ends up in the wrapper, so every workgroup the scheduler
// launched is counted, and the wrapper's workgroup barriers are in uniform control flow. The hand-off is active only
// where NodePushContext::next_level_consumer names a consumer for the next level (the scheduler pushes
// GraphHeader::direct_level_consumer[level + 1]); elsewhere it costs a branch.
//
// Counting: each workgroup of level L adds one to HalfHeader::level_pass_done of its input half (zero between uses);
// the one that reaches GraphHeader::level_workgroups[input half] (what the preparer of level L launched) is the last.
// The others have then finished with the input half, so the last one may clear it for level L + 1's outputs.
// Visibility follows level.comp's hand-off: every invocation fences its writes before the count, and the last
// workgroup reads what other workgroups wrote (the counters) with atomics; the node table and the statistics it reads
// with plain loads are not written during a level.
#include <string>

#include "lowering/lowering_passes.h"

namespace execgraph::spirv::lowering {

// The last workgroup of a level writes the consumer's state and statistics and the half's counters as vectors.
static_assert(offsets::kNodeStateRecordCount == 0 && offsets::kNodeStateDirectoryBase == 4 && offsets::kNodeStateWorkgroupCount == 8 &&
              offsets::kNodeStateDispatch == 12 && offsets::kNodeStateSize % 16 == 0);
static_assert(offsets::kNodeStatsRecords == 0 && offsets::kNodeStatsDispatches == 4 && offsets::kNodeStatsWorkgroups == 8 &&
              offsets::kNodeStatsDroppedRecords == 12 && offsets::kNodeStatsSize % 16 == 0);
static_assert(offsets::kHalfHeapTop == 0 && offsets::kHalfRecordCount == 4 && offsets::kHalfLevelPassDone == 8 &&
              offsets::kHalfLevelPassWorkgroups == 12);

Result<bool> LevelHandOffPass::Run(Module& module) {
    const std::uint32_t lowered_entry = ctx_.EntryFunction();
    if (FindFunction(module, lowered_entry) == nullptr) return Error{kNoWordOffset, "entry point function not found"};
    // The lowered workgroup's size (LoweringContext::lowered_local_size).
    const auto& local_size = ctx_.lowered_local_size;
    const std::uint32_t invocations = local_size[0] * local_size[1] * local_size[2];
    if (invocations == 0) return Error{kNoWordOffset, "workgroup of 0 invocations"};
    // Without the hand-off (LoweringOptions::level_hand_off) the wrapper is needed only to keep the other invocations out
    // of a node that only invocation 0 runs.
    const bool hand_off = ctx_.options.level_hand_off;
    if (!hand_off && !ctx_.only_invocation_0_runs_node_code) return false;
    const bool preload = hand_off && invocations == 1;
    std::uint32_t is_last_workgroup = 0, node_table_offset = 0, node_stats_offset = 0, record_capacity = 0, own_states = 0;
    std::uint32_t launched_workgroups = 0;
    if (hand_off) {
        // Shared by the workgroup's invocations through workgroup memory; a workgroup of one invocation keeps it in a
        // Private variable and needs no barriers, so that a node without workgroup memory of its own uses none (H100:
        // `overhead_chain32` -1%).
        is_last_workgroup =
            CreateGlobalVariable(module, ctx_, invocations == 1 ? StorageClass::Private : StorageClass::Workgroup, ctx_.u32);
        // What level L launched and the header words the last workgroup's leader needs. In a workgroup of one invocation
        // they are loaded before the node's code runs (below): after it, whether the workgroup counts itself (a branch)
        // waited for the first load, and the last workgroup's loads of the consumer's table entry and statistics for
        // the others, two round trips to memory at the end of every level of a chain of single-record levels (H100:
        // `overhead_chain32` -1%). Larger workgroups load them after the node's code, the leader's with its count: held
        // through the node's code, the three values cost the 16x16 shading workgroups of the 10240x5760
        // classifications 2 to 3% on an H100 (docs/performance.md).
        launched_workgroups = CreateGlobalVariable(module, ctx_, StorageClass::Private, ctx_.u32);
        node_table_offset = CreateGlobalVariable(module, ctx_, StorageClass::Private, ctx_.u32);
        node_stats_offset = CreateGlobalVariable(module, ctx_, StorageClass::Private, ctx_.u32);
        record_capacity = CreateGlobalVariable(module, ctx_, StorageClass::Private, ctx_.u32);
        own_states = CreateGlobalVariable(module, ctx_, StorageClass::Private, ctx_.u32);
    }
    // Where its allocations keep their counts (LoweringContext::HandOffCountsKeptLocally: the graph's node-table and
    // statistics offsets are known, so no load stands before these), a workgroup of one invocation also loads before the
    // node's code the next level's consumer's table entry and statistics (nobody writes their records, dispatches and
    // workgroups during a level; only drops, counted in the word after them, which the hand-off then leaves alone) and the
    // header's node count and record capacity, and takes the half's counts from its own sums where its level launched
    // one workgroup. A chain step's hand-off then waits for no memory at all (H100: `overhead_chain32` -2.0% and -3.1%
    // in two calls). With the offsets loaded from the header the consumer's loads waited for them, a round trip ahead of
    // the prologue's own loads, and the chain gained nothing (docs/performance.md).
    const bool counts_kept = preload && ctx_.var_hand_off_reserved != 0;
    std::uint32_t node_count_var = 0, consumer_launch = 0, consumer_per_workgroup = 0;
    std::array<std::uint32_t, 3> consumer_grid{}, consumer_stats{};
    if (counts_kept) {
        node_count_var = CreateGlobalVariable(module, ctx_, StorageClass::Private, ctx_.u32);
        consumer_launch = CreateGlobalVariable(module, ctx_, StorageClass::Private, ctx_.u32);
        consumer_per_workgroup = CreateGlobalVariable(module, ctx_, StorageClass::Private, ctx_.u32);
        for (std::uint32_t& var : consumer_grid) var = CreateGlobalVariable(module, ctx_, StorageClass::Private, ctx_.u32);
        for (std::uint32_t& var : consumer_stats) var = CreateGlobalVariable(module, ctx_, StorageClass::Private, ctx_.u32);
    }

    FunctionBuilder b(module, ctx_);
    const std::uint32_t wrapper = b.DefineFunction(ctx_.void_type, {}, [&](std::span<const std::uint32_t>) {
        Emitter& e = b.emit();
        // The hand-off's loads need the scratch address before the prologue has run (or where it does not run).
        if (preload || (hand_off && ctx_.only_invocation_0_runs_node_code)) {
            const std::uint32_t context_pointer = e.Emit(Op::OpAccessChain, ctx_.push_constant_u64_pointer,
                                                         {ctx_.push_constant_var, e.U32(ctx_.push_constant_member)});
            e.Store(ctx_.var_scratch, e.Load(ctx_.u64, context_pointer));
        }
        if (preload) {
            // Loads the node's code cannot delay: a compiler moves no load of scratch above the node's stores, which
            // might alias it, and the hardware starts these before the prologue's. What level L launched and the header
            // words are written before this dispatch's barrier (by the preparer of level L, and at the dispatch's start),
            // and the hand-off writes neither.
            if (counts_kept) {
                e.Store(ctx_.var_hand_off_reserved, e.U64(0));
                e.Store(ctx_.var_hand_off_sole_producer, e.U32(0));
            }
            const std::uint32_t pushed_consumer = e.LoadPushContextU32(PushContextMember::kNextLevelConsumer);
            b.If(e.NotEqual(pushed_consumer, e.U32(runtime::kInvalidNode)), [&]() {
                const std::uint32_t input_index = e.And(e.LoadPushContextU32(PushContextMember::kLevel), e.U32(1));
                const std::uint32_t launched =
                    e.LoadScratchU32(e.Add(e.U32(offsets::kHeaderLevelWorkgroups), e.Mul(input_index, e.U32(4))));
                e.Store(launched_workgroups, launched);
                // A level of this one workgroup before a direct level: its allocations need no atomics.
                if (counts_kept)
                    e.Store(ctx_.var_hand_off_sole_producer, e.SelectU32(e.Equal(launched, e.U32(1)), e.U32(1), e.U32(0)));
                // Where the layer passed the graph's offsets they are constants (Emitter::NodeTableOffset): the
                // consumer's entry and statistics load at once, beside the prologue's first loads, instead of a round
                // trip after them (counts_kept requires them).
                const std::uint32_t table = e.NodeTableOffset();
                const std::uint32_t statistics = e.NodeStatsOffset();
                e.Store(node_table_offset, table);
                e.Store(node_stats_offset, statistics);
                if (!counts_kept) return;
                e.Store(node_count_var, e.NodeCount());
                e.Store(record_capacity, e.LoadScratchU32(e.U32(offsets::kHeaderRecordCapacity)));
                const std::uint32_t consumer = e.And(pushed_consumer, e.U32(runtime::kDirectLevelConsumerMask));
                const std::uint32_t info = e.Add(table, e.Mul(consumer, e.U32(offsets::kNodeStaticInfoSize)));
                e.Store(consumer_launch, e.LoadScratchU32(e.Add(info, e.U32(offsets::kNodeStaticLaunch))));
                e.Store(consumer_per_workgroup, e.LoadScratchU32(e.Add(info, e.U32(offsets::kNodeStaticRecordsPerWorkgroup))));
                for (std::uint32_t i = 0; i < 3; ++i) {
                    e.Store(consumer_grid[i], e.LoadScratchU32(e.Add(info, e.U32(offsets::kNodeStaticStaticGrid + 4 * i))));
                }
                // The statistics only where the report keeps them (runtime::kDirectLevelStatistics).
                b.If(e.NotEqual(e.And(pushed_consumer, e.U32(runtime::kDirectLevelStatistics)), e.U32(0)), [&]() {
                    const std::array<std::uint32_t, 4> stats =
                        e.LoadScratchU32x4(e.Add(statistics, e.Mul(consumer, e.U32(offsets::kNodeStatsSize))));
                    for (std::uint32_t i = 0; i < 3; ++i) e.Store(consumer_stats[i], stats[i]);
                });
            });
        }
        if (ctx_.only_invocation_0_runs_node_code) {
            // The other invocations have nothing to do in the node's code (LowerOutputsPass), so they skip it and its
            // prologue's dependent loads: a workgroup of AMD's classify shape then keeps one invocation busy, as a
            // hand-written classify pass that returns at once in the others (bench/shaders/base_classify.comp) does.
            // What the hand-off below reads of the prologue's context comes straight from the push constants here.
            if (hand_off) {
                e.Store(ctx_.var_input_half, e.LoadPushContextU32(PushContextMember::kInputHalfOffset));
                e.Store(ctx_.var_output_half, e.LoadPushContextU32(PushContextMember::kOutputHalfOffset));
            }
            const std::uint32_t invocation_0 = e.Equal(e.Load(ctx_.u32, ctx_.builtin_local_invocation_index), e.U32(0));
            b.If(invocation_0, [&]() { e.Emit(Op::OpFunctionCall, ctx_.void_type, {lowered_entry}); });
        } else {
            e.Emit(Op::OpFunctionCall, ctx_.void_type, {lowered_entry});
        }
        if (!hand_off) {
            e.EmitVoid(Op::OpReturn, {});
            return;
        }
        // The prologue stored the scratch address before any of its returns, so every invocation has it here. The level and
        // the next level's consumer are pushed (NodePushContext): no load stands between the node's code and the count.
        const std::uint32_t level = e.LoadPushedLevelNumber();
        const std::uint32_t input_index = e.And(level, e.U32(1));  // level L reads half L % 2
        const std::uint32_t next_level = e.Add(level, e.U32(1));
        const std::uint32_t pushed_consumer = e.LoadPushContextU32(PushContextMember::kNextLevelConsumer);
        // Push constants: the condition is uniform across the workgroup, so the barriers inside are too.
        b.If(e.NotEqual(pushed_consumer, e.U32(runtime::kInvalidNode)), [&]() {
            // A dispatch group of static broadcast members consumes level L + 1 (runtime::kDirectLevelGroupConsumer): the
            // consumer is its first member, and the record list is the whole group's directory.
            // Only nodes lowered for it (LoweringOptions::group_level_hand_off) are ever told of a group consumer.
            const bool group_code = ctx_.options.group_level_hand_off;
            const std::uint32_t group =
                group_code ? e.NotEqual(e.And(pushed_consumer, e.U32(runtime::kDirectLevelGroupConsumer)), e.U32(0))
                           : e.Bool(false);
            // NodeStats' records, dispatches and workgroups only where the report keeps them.
            const std::uint32_t statistics_kept =
                e.NotEqual(e.And(pushed_consumer, e.U32(runtime::kDirectLevelStatistics)), e.U32(0));
            const std::uint32_t group_statistics = group_code ? e.LogicalAnd(group, statistics_kept) : e.Bool(false);
            const std::uint32_t consumer = e.And(pushed_consumer, e.U32(runtime::kDirectLevelConsumerMask));
            const std::uint32_t clears_own_states =
                e.NotEqual(e.And(pushed_consumer, e.U32(runtime::kDirectLevelClearsOwnStates)), e.U32(0));
            // What the preparer of level L launched (written before this dispatch's barrier, so a plain load). Where not
            // loaded before the node's code, loaded before the fence so that its round trip overlaps the fence's.
            if (!preload) {
                e.Store(launched_workgroups,
                        e.LoadScratchU32(e.Add(e.U32(offsets::kHeaderLevelWorkgroups), e.Mul(input_index, e.U32(4)))));
            }
            const std::uint32_t launched = e.LoadU32Var(launched_workgroups);
            // A level of one workgroup (a chain step: about 0.8 µs of each of its levels on an H200, docs/performance.md)
            // is its own last workgroup: no count to take. The fence orders this workgroup's writes before its count for
            // the last workgroup's reads; with one invocation as well, there is nobody else's write to order (the leader
            // reads back only its own atomics, and level L + 1 is ordered by the scheduler's barrier), so it goes too.
            // In a larger workgroup alone at its level, the leader reads back only what the workgroup's invocations changed
            // with atomics (the half's counters, the consumer's record count), so a workgroup-scope fence orders them, as
            // level.comp's FenceBeforeCount does for a level pass of one workgroup, without waiting for the level's
            // stores to reach memory.
            const std::uint32_t counted = e.NotEqual(launched, e.U32(1));
            b.If(counted, [&]() { e.DeviceMemoryBarrier(); });
            if (invocations != 1) {
                b.If(e.LogicalNot(counted), [&]() { e.WorkgroupBufferMemoryBarrier(); });
                e.WorkgroupBarrier();
            }
            const std::uint32_t local_index = e.Load(ctx_.u32, ctx_.builtin_local_invocation_index);
            const std::uint32_t leader = e.Equal(local_index, e.U32(0));
            const std::uint32_t input_half = e.LoadU32Var(ctx_.var_input_half);
            const std::uint32_t output_half = e.LoadU32Var(ctx_.var_output_half);
            // Every invocation clears node states if its workgroup is the last, so every one needs the node count.
            const std::uint32_t node_count = counts_kept ? e.LoadU32Var(node_count_var) : e.NodeCount();
            b.If(leader, [&]() {
                if (!preload) {
                    e.Store(node_table_offset, e.NodeTableOffset());
                    e.Store(node_stats_offset, e.NodeStatsOffset());
                }
                if (!counts_kept) e.Store(record_capacity, e.LoadScratchU32(e.U32(offsets::kHeaderRecordCapacity)));
                e.Store(is_last_workgroup, e.U32(1));
                b.If(counted, [&]() {
                    const std::uint32_t done =
                        e.AtomicScratch(Op::OpAtomicIAdd, e.Add(input_half, e.U32(offsets::kHalfLevelPassDone)), e.U32(1));
                    e.Store(is_last_workgroup, e.SelectU32(e.Equal(done, e.Sub(launched, e.U32(1))), e.U32(1), e.U32(0)));
                });
            });
            if (invocations != 1) e.WorkgroupBarrier();
            // No second fence: what other workgroups of the level wrote, the last one reads with atomics (the counters),
            // and what it reads with plain loads (the node table, statistics) nobody writes during a level.
            b.If(e.NotEqual(e.Load(ctx_.u32, is_last_workgroup), e.U32(0)), [&]() {
                auto node_state = [&](std::uint32_t half, std::uint32_t node) {
                    return e.Add(half, e.Add(e.U32(offsets::kHalfNodes), e.Mul(node, e.U32(offsets::kNodeStateSize))));
                };
                b.If(leader, [&]() {
                    // Every load and atomic read first, independent of each other, so that they overlap: a chain of
                    // single-record levels waits for this workgroup at every level.
                    const std::uint32_t state = node_state(output_half, consumer);
                    const std::uint32_t info =
                        e.Add(e.LoadU32Var(node_table_offset), e.Mul(consumer, e.U32(offsets::kNodeStaticInfoSize)));
                    const std::uint32_t stats =
                        e.Add(e.LoadU32Var(node_stats_offset), e.Mul(consumer, e.U32(offsets::kNodeStatsSize)));
                    auto read_both = [&]() {
                        return e.AtomicScratchU64(Op::OpAtomicIAdd, e.Add(output_half, e.U32(offsets::kHalfHeapTop)), e.U64(0));
                    };
                    // A level of one workgroup of one invocation had no other producer: the half's counts are what this
                    // invocation added (they start cleared; LowerOutputsPass kept the sums).
                    const std::uint32_t own_counts = counts_kept ? e.Equal(launched, e.U32(1)) : 0;
                    std::uint32_t heap_top = 0, record_top = 0;
                    if (ctx_.options.heap_holds_record_list) {
                        // The allocations reserved both with one 64-bit atomic (LowerOutputsPass): read them the same way.
                        const std::uint32_t both = counts_kept ? b.IfValue(e.LogicalNot(own_counts), ctx_.u64,
                                                                           e.Load(ctx_.u64, ctx_.var_hand_off_reserved), read_both)
                                                               : read_both();
                        heap_top = e.LowU32(both);
                        record_top = e.HighU32(both);
                    } else {
                        heap_top = e.AtomicScratch(Op::OpAtomicIAdd, e.Add(output_half, e.U32(offsets::kHalfHeapTop)), e.U32(0));
                        record_top =
                            e.AtomicScratch(Op::OpAtomicIAdd, e.Add(output_half, e.U32(offsets::kHalfRecordCount)), e.U32(0));
                    }
                    const std::uint32_t per_workgroup_stored =
                        counts_kept ? e.LoadU32Var(consumer_per_workgroup)
                                    : e.LoadScratchU32(e.Add(info, e.U32(offsets::kNodeStaticRecordsPerWorkgroup)));
                    const std::uint32_t grid = e.Add(info, e.U32(offsets::kNodeStaticStaticGrid));
                    const std::uint32_t grid_x = counts_kept ? e.LoadU32Var(consumer_grid[0]) : e.LoadScratchU32(grid);
                    const std::uint32_t grid_y =
                        counts_kept ? e.LoadU32Var(consumer_grid[1]) : e.LoadScratchU32(e.Add(grid, e.U32(4)));
                    const std::uint32_t grid_z =
                        counts_kept ? e.LoadU32Var(consumer_grid[2]) : e.LoadScratchU32(e.Add(grid, e.U32(8)));
                    const std::uint32_t launch = counts_kept ? e.LoadU32Var(consumer_launch)
                                                             : e.LoadScratchU32(e.Add(info, e.U32(offsets::kNodeStaticLaunch)));
                    const std::uint32_t capacity = e.LoadU32Var(record_capacity);
                    // Level L + 1's records are all the consumer's (or its group members'), and the record list holds
                    // as many of those reserved as fit: so the producers count none for a single consumer
                    // (LowerOutputsPass, count_records).
                    const std::uint32_t consumer_records = e.Min(record_top, capacity);
                    const std::uint32_t grid_workgroups = e.Mul(e.Mul(grid_x, grid_y), grid_z);
                    // A group's records are the half's record list, which only its members' records reach (the level is
                    // a list-directory level), as many as the list holds. With statistics kept each member gets its own
                    // as the level pass of such a level writes them (level.comp): records, one dispatch where it has
                    // any, and its records' workgroups; the members share the consumer's module, so they run its grid.
                    // That visits the members one after the other, which a level without statistics skips.
                    std::uint32_t records = consumer_records;
                    if (group_code) {
                        // Where the begin rewrote only level 0's consumer's tables (runtime::kDirectLevelChecksInitialization),
                        // nothing has checked yet that the members' table entries, which level L + 1 reads, are this
                        // graph's. As a level pass that checks initialization does (level.comp), scratch not initialized
                        // for the graph runs nothing at L + 1: its records are charged to their nodes as dropped, and the
                        // flag is set even without records, so that the report names the missing initialization.
                        // Only this workgroup loads the four header words, beside its other loads; only nodes lowered
                        // for it (LoweringOptions::group_hand_off_checks_initialization) have the code.
                        const bool check_code = ctx_.options.group_hand_off_checks_initialization;
                        std::uint32_t uninitialized = 0;  // with check_code: scratch not initialized for the graph
                        if (check_code) {
                            const std::uint32_t checks = e.LogicalAnd(
                                group,
                                e.NotEqual(e.And(pushed_consumer, e.U32(runtime::kDirectLevelChecksInitialization)), e.U32(0)));
                            uninitialized = b.IfValue(checks, ctx_.bool_type, e.Bool(false), [&]() {
                                const std::uint32_t tag = e.LoadScratchU32(e.U32(offsets::kHeaderDispatchGraphTag));
                                const std::uint32_t initialized = e.LogicalAnd(
                                    e.Equal(e.LoadScratchU32(e.U32(offsets::kHeaderMagic)), e.U32(runtime::kScratchMagic)),
                                    e.LogicalAnd(e.Equal(e.LoadScratchU32(e.U32(offsets::kHeaderGraphTag)), tag),
                                                 e.Equal(e.LoadScratchU32(e.U32(offsets::kHeaderTablesTag)), tag)));
                                const std::uint32_t not_initialized = e.LogicalNot(initialized);
                                b.If(not_initialized, [&]() {
                                    const std::uint32_t flag = e.U32(runtime::kStatusUninitialized);
                                    e.AtomicScratch(Op::OpAtomicOr, e.U32(offsets::kHeaderStatusFlags), flag);
                                    // Which members had records needs no table: the producers counted them per node.
                                    b.For(node_count, [&](std::uint32_t n) {
                                        const std::uint32_t count = e.AtomicScratch(
                                            Op::OpAtomicIAdd,
                                            e.Add(node_state(output_half, n), e.U32(offsets::kNodeStateRecordCount)), e.U32(0));
                                        b.If(e.NotEqual(count, e.U32(0)), [&]() { e.ReportDrop(n, next_level, flag, count); });
                                    });
                                });
                                return not_initialized;
                            });
                        }
                        if (check_code) records = e.SelectU32(uninitialized, e.U32(0), consumer_records);
                        b.If(check_code ? e.LogicalAnd(group_statistics, e.LogicalNot(uninitialized)) : group_statistics, [&]() {
                            const std::uint32_t members =
                                e.LoadScratchU32(e.Add(info, e.U32(offsets::kNodeStaticDispatchGroupSize)));
                            b.For(members, [&](std::uint32_t m) {
                                const std::uint32_t member = e.Add(consumer, m);
                                const std::uint32_t count = e.AtomicScratch(
                                    Op::OpAtomicIAdd, e.Add(node_state(output_half, member), e.U32(offsets::kNodeStateRecordCount)),
                                    e.U32(0));
                                b.If(e.NotEqual(count, e.U32(0)), [&]() {
                                    const std::uint32_t member_stats =
                                        e.Add(e.LoadU32Var(node_stats_offset), e.Mul(member, e.U32(offsets::kNodeStatsSize)));
                                    const std::array<std::uint32_t, 4> before = e.LoadScratchU32x4(member_stats);
                                    const std::uint32_t member_workgroups = e.Mul(count, grid_workgroups);
                                    e.StoreScratchU32x4(
                                        member_stats,
                                        {e.Add(before[0], count), e.Add(before[1], e.U32(1)),
                                         e.Add(before[2], e.Min(member_workgroups, e.Sub(e.U32(0xFFFFFFFFu), before[2]))),
                                         before[3]});
                                });
                            });
                        });
                    }

                    const std::uint32_t per_workgroup = e.Max(per_workgroup_stored, e.U32(1));
                    // A fixed level L + 1 (runtime::kLevelNextFixedWorkgroupsShift) launches the workgroups the scheduler
                    // recorded, whatever the records: records they cannot run (only a shader that enqueued more than its
                    // NodeMaxPayloadsAMDX allow, VUID-...-NodeMaxPayloadsAMDX-09188, brings any) are dropped and
                    // reported rather than left in the list unseen. Not for a group consumer (the scheduler fixes only
                    // single-node levels).
                    const std::uint32_t fixed_workgroups = e.And(e.ShiftRight(e.LoadPushContextU32(PushContextMember::kLevel),
                                                                              e.U32(runtime::kLevelNextFixedWorkgroupsShift)),
                                                                 e.U32(runtime::kLevelNextFixedWorkgroupsMax));
                    const std::uint32_t fixed = e.NotEqual(fixed_workgroups, e.U32(0));
                    {
                        const std::uint32_t static_broadcast =
                            e.Equal(launch, e.U32(static_cast<std::uint32_t>(LaunchKind::kBroadcastStatic)));
                        const std::uint32_t runnable =
                            e.SelectU32(static_broadcast, e.Div(fixed_workgroups, e.Max(grid_workgroups, e.U32(1))),
                                        e.Mul(fixed_workgroups, per_workgroup));
                        const std::uint32_t kept = e.SelectU32(fixed, e.Min(records, runnable), records);
                        const std::uint32_t excess = e.Sub(records, kept);
                        b.If(e.NotEqual(excess, e.U32(0)),
                             [&]() { e.ReportDrop(consumer, next_level, e.U32(runtime::kStatusFixedLevelExceeded), excess); });
                        records = kept;
                    }
                    // Level L + 1's workgroups. A static broadcast node runs its grid per record (the scheduler makes
                    // such a level direct only where a full record list's workgroups fit one dispatch); a coalescing or
                    // thread node runs its records in batches of records_per_workgroup, as BatchedWorkgroups in
                    // level_common.glsl. Producers deliver at most record_capacity records, so all are kept.
                    const std::uint32_t batches =
                        e.Add(e.Div(records, per_workgroup),
                              e.SelectU32(e.NotEqual(e.Mod(records, per_workgroup), e.U32(0)), e.U32(1), e.U32(0)));
                    const std::uint32_t is_static_broadcast =
                        e.Equal(launch, e.U32(static_cast<std::uint32_t>(LaunchKind::kBroadcastStatic)));
                    const std::uint32_t workgroups = e.SelectU32(is_static_broadcast, e.Mul(records, grid_workgroups), batches);
                    const std::uint32_t has_work = e.NotEqual(workgroups, e.U32(0));
                    // x ≤ 65535 and y = the rows of kDispatchSplitWidth, as DispatchShape in level_common.glsl.
                    const std::uint32_t width = e.U32(runtime::kDispatchSplitWidth);
                    const std::uint32_t x = e.Min(workgroups, width);
                    const std::uint32_t y = e.Div(e.Add(workgroups, e.U32(runtime::kDispatchSplitWidth - 1)), width);
                    const std::uint32_t z = e.SelectU32(has_work, e.U32(1), e.U32(0));

                    // C's state: its directory is the record list (entry i is record i; the list lies record_capacity
                    // entries before the directory, as level.comp's SoleConsumer), and its arguments. C is the only
                    // node of its level, so the scheduler dispatches it alone even where it belongs to a dispatch group
                    // (GraphPlan::FormDispatchGroups).
                    // Whole vectors rather than field by field, as the level pass writes its nodes' (level.comp): the
                    // record count as read (the producers are done), then the directory base, workgroups and arguments.
                    auto write_consumer = [&]() {
                        e.StoreScratchU32x4(state, {records, e.Sub(e.U32(0), capacity), workgroups, x});
                        e.StoreScratchU32x2(e.Add(state, e.U32(offsets::kNodeStateDispatch + 4)), {y, z});
                        // Statistics, as the level pass keeps them (NodeStats; the consumer's fields are this workgroup's
                        // alone), where the report keeps them. Records, dispatches, workgroups and dropped records in one
                        // access: the level's other workgroups are done, so nothing else writes them until this workgroup
                        // ends. Loaded before the node's code, the dropped records are left out: this level's own drops
                        // may have changed them.
                        b.If(statistics_kept, [&]() {
                            std::array<std::uint32_t, 4> before{};
                            if (counts_kept) {
                                for (std::uint32_t i = 0; i < 3; ++i) before[i] = e.LoadU32Var(consumer_stats[i]);
                            } else {
                                before = e.LoadScratchU32x4(stats);
                            }
                            const std::uint32_t records_after = e.Add(before[0], records);
                            const std::uint32_t dispatches_after = e.Add(before[1], e.SelectU32(has_work, e.U32(1), e.U32(0)));
                            const std::uint32_t workgroups_after =
                                e.Add(before[2], e.Min(workgroups, e.Sub(e.U32(0xFFFFFFFFu), before[2])));
                            if (counts_kept) {
                                e.StoreScratchU32x2(stats, {records_after, dispatches_after});
                                e.StoreScratchU32(e.Add(stats, e.U32(offsets::kNodeStatsWorkgroups)), workgroups_after);
                            } else {
                                e.StoreScratchU32x4(stats, {records_after, dispatches_after, workgroups_after, before[3]});
                            }
                        });
                    };
                    if (group_code) {
                        b.If(e.LogicalNot(group), write_consumer);
                    } else {
                        write_consumer();
                    }
                    // A group's arguments are its first member's, and its workgroups read their record at the group's
                    // directory base (the record list, record_capacity entries before the directory) plus workgroup /
                    // grid, where each entry names its member (the lowered static broadcast prologue's group path).
                    static_assert(offsets::kNodeStateGroupFirstWorkgroup == 32 && offsets::kNodeStateGroupDirectoryBase == 36 &&
                                  offsets::kNodeStateGroupWorkgroups == 40);
                    if (group_code)
                        b.If(group, [&]() {
                            e.StoreScratchU32(e.Add(state, e.U32(offsets::kNodeStateDispatch)), x);
                            e.StoreScratchU32x2(e.Add(state, e.U32(offsets::kNodeStateDispatch + 4)), {y, z});
                            e.StoreScratchU32x4(e.Add(state, e.U32(offsets::kNodeStateGroupFirstWorkgroup)),
                                                {e.U32(0), e.Sub(e.U32(0), capacity), workgroups, e.U32(0)});
                        });
                    // The header: level L + 1 reads the output half, and launches x * y workgroups (C's dispatch alone),
                    // or the fixed level's, every one of which counts itself.
                    const std::uint32_t output_index = e.Sub(e.U32(1), input_index);
                    e.StoreScratchU32(e.Add(e.U32(offsets::kHeaderLevelWorkgroups), e.Mul(output_index, e.U32(4))),
                                      e.SelectU32(fixed, fixed_workgroups, e.Mul(x, y)));
                    e.StoreScratchU32(e.U32(offsets::kHeaderLevel), next_level);
                    e.StoreScratchU32(e.U32(offsets::kHeaderInputHalf), output_index);
                    b.If(e.NotEqual(records, e.U32(0)),
                         [&]() { e.StoreScratchU32(e.U32(offsets::kHeaderLevelsRun), e.Add(next_level, e.U32(1))); });
                    e.AtomicScratch(Op::OpAtomicUMax, e.U32(offsets::kHeaderHeapHighWater), heap_top);
                    e.AtomicScratch(Op::OpAtomicUMax, e.U32(offsets::kHeaderRecordHighWater), record_top);
                    // The input half receives level L + 1's outputs: its counters start cleared.
                    const std::uint32_t zero = e.U32(0);
                    // Where level passes are dispatched by level_pass_workgroups, it is at least 1 (HalfHeader).
                    e.StoreScratchU32x4(input_half, {zero, zero, zero, ctx_.options.indirect_level_pass ? e.U32(1) : zero});
                });
                // ... and so do its nodes' states, spread over the workgroup in 16-byte stores, neighbouring invocations
                // at neighbouring addresses so that a subgroup's stores combine (as ClearNodeStates in scratch_layout.glsl;
                // per field at the states' 48-byte stride, each store was a memory transaction of its own).
                // Where this level is one node dispatch (runtime::kDirectLevelClearsOwnStates), only its node's or group's
                // states can be set: the pushed node's, and for a group's dispatch (output_table_base pushed as
                // kDispatchGroupMarker) those of the members its table entry counts. Only a group's dispatch loads that
                // count, so a chain step's last workgroup waits for no load before it clears. (The leader's copy of the
                // node table's offset is its own; the other invocations load the header word.)
                static_assert(offsets::kHalfNodes % 16 == 0 && offsets::kNodeStateSize % 16 == 0);
                const std::uint32_t own_node = e.LoadPushContextU32(PushContextMember::kNodeIndex);
                const std::uint32_t group_dispatch =
                    e.Equal(e.LoadPushContextU32(PushContextMember::kOutputTableBase), e.U32(runtime::kDispatchGroupMarker));
                e.Store(own_states, e.U32(1));
                b.If(e.LogicalAnd(clears_own_states, group_dispatch), [&]() {
                    const std::uint32_t table_offset = invocations == 1 ? e.LoadU32Var(node_table_offset) : e.NodeTableOffset();
                    const std::uint32_t own_info = e.Add(table_offset, e.Mul(own_node, e.U32(offsets::kNodeStaticInfoSize)));
                    e.Store(own_states,
                            e.Max(e.LoadScratchU32(e.Add(own_info, e.U32(offsets::kNodeStaticDispatchGroupSize))), e.U32(1)));
                });
                const std::uint32_t clear_first = e.SelectU32(clears_own_states, own_node, e.U32(0));
                const std::uint32_t clear_count = e.SelectU32(clears_own_states, e.LoadU32Var(own_states), node_count);
                const std::uint32_t vectors = e.Mul(clear_count, e.U32(offsets::kNodeStateSize / 16));
                const std::uint32_t rounds = e.Div(e.Add(vectors, e.U32(invocations - 1)), e.U32(invocations));
                const std::uint32_t states =
                    e.Add(input_half, e.Add(e.U32(offsets::kHalfNodes), e.Mul(clear_first, e.U32(offsets::kNodeStateSize))));
                const std::uint32_t zero = e.U32(0);
                b.For(rounds, [&](std::uint32_t round) {
                    const std::uint32_t vector = e.Add(e.Mul(round, e.U32(invocations)), local_index);
                    b.If(e.Less(vector, vectors), [&]() {
                        e.StoreScratchU32x4(e.Add(states, e.Mul(vector, e.U32(16))), {zero, zero, zero, zero});
                    });
                });
            });
        });
        e.EmitVoid(Op::OpReturn, {});
    });
    FlushPendingFunctions(module, ctx_);

    RetargetEntryPoint(module, lowered_entry, wrapper);
    return true;
}

}  // namespace execgraph::spirv::lowering
