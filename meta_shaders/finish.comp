// Finish pass: the one pass after the last level of a graph dispatch (docs/design.md, "One graph dispatch", step 4),
// recorded when there is a leftover check to make, or a report to write that the pass preparing the last level does not
// write itself (layer/scheduler.cpp, RecordDispatch; layer/scheduler.h, ReportSlot).
//
// 1. Leftover check (`leftover_check`): records the last level wrote have no level left to run them
//    (maxExecutionGraphDepth); issue "Robustness" asks for them to be counted and flagged, per node that would have
//    consumed them, at level `level` (the level count, one past the last level that ran). Entries past the capacity were
//    counted by producers, and producers only count the records they delivered.
// 2. Report (the header's `report_slot` != 0): WriteReport (level_common.glsl) copies NodeStats and the GraphHeader into
//    the slot of the layer's host-visible ring and writes the slot's serial last (layer/dispatch_reports.cpp). The slot,
//    serial and statistics count come from the header, which the begin transfers write for every dispatch, not from push
//    constants: so the pass records the same commands in every dispatch of a graph, and a prepared secondary command
//    buffer (layer/prepared_levels.h) can hold it with the last level it runs beside.
//
// Grid-stride over the nodes for the leftover check. The header and the statistics collect every workgroup's drops, so
// the last workgroup to finish (a device-scope counter in the written half's HalfHeader, as in level.comp: zero between
// passes, reset by whoever counted last) copies it. Without the Vulkan memory model (the layer does not enable
// vulkanMemoryModel) every invocation fences its stores with memoryBarrierBuffer() before its workgroup increments the
// counter, the last workgroup fences after seeing the final count and reads the header through a coherent reference,
// and the serial follows a fence and a workgroup barrier after the last header word. A single workgroup needs neither
// the counter nor device-scope fences before the copy (FenceBeforeCount in level_common.glsl).
#version 460
#extension GL_GOOGLE_include_directive : require
#include "level_common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Params {
    uint64_t scratch;
    uint level;           // the level count: leftovers are charged to it, and half level % 2 holds them
    uint leftover_check;  // nonzero: count the records the last level wrote
} pc;

shared bool s_last;

void main() {
    GraphHeader header = GraphHeader(pc.scratch);
    const uint t = gl_LocalInvocationIndex;
    const uint node_count = header.node_count;
    Half written = HalfAt(pc.scratch, header, pc.level & 1u);
    // The header's report words (scratch_layout.glsl): the slot's device address (16-byte aligned; 0: no report), the
    // serial written to its first word last, and the NodeStats count (node_count, or 0 for a header-only report; with
    // kReportStatsOnlyOnDrops set, only when the header shows dropped work).
    const uint64_t report_slot = header.report_slot;
    const bool report = report_slot != 0ul;

    const uint invocations = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    if (pc.leftover_check != 0u) {
        for (uint n = gl_GlobalInvocationID.x; n < node_count; n += invocations) {
            const uint left = written.nodes[n].record_count;
            if (left != 0u) ReportDrop(pc.scratch, header, n, pc.level, kStatusDepthLimit, left);
        }
    }

    // The last workgroup to get here finishes the dispatch. A single workgroup is the last one without the device-scope
    // hand-off and its fences.
    const bool alone = gl_NumWorkGroups.x == 1u;
    FenceBeforeCount(alone);
    barrier();
    if (t == 0u) s_last = alone || atomicAdd(written.level_pass_done, 1u) == gl_NumWorkGroups.x - 1u;
    barrier();
    if (!s_last) return;
    if (!alone) memoryBarrierBuffer();
    if (t == 0u) {
        if (pc.leftover_check != 0u) {
            atomicMax(header.heap_high_water, written.heap_top);
            atomicMax(header.record_high_water, written.record_count);
        }
        // Every other workgroup has counted. A pass alone took no count, so it leaves the word alone: without a leftover
        // check it runs alongside the last level's node dispatches, and writes nothing but the report.
        if (!alone) written.level_pass_done = 0u;
    }
    if (report) WriteReport(pc.scratch, header, report_slot, header.report_serial, header.report_stats, gl_WorkGroupSize.x);
}
