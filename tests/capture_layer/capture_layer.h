// The test-side view of VK_LAYER_EXECGRAPH_test_capture (capture_layer.cpp): the names of the functions a test looks up
// with dlsym in the loaded layer, and the layer's name for ppEnabledLayerNames.
#pragma once

#include <cstdint>

extern "C" {
// Every recorded command since the last clear, one per line: "begin <label name>", "end", "insert <label name>",
// "dispatch", "dispatch_indirect", "barrier" (vkCmdPipelineBarrier or vkCmdPipelineBarrier2), "bind_pipeline <handle>"
// (compute binds only). The pointer stays valid until the next call.
using ExecgraphCaptureEventsFunction = const char* (*)();
using ExecgraphCaptureClearFunction = void (*)();  // also zeroes the counts below
// Bytes written with vkCmdUpdateBuffer since the last clear (kept apart from the events).
using ExecgraphCaptureUpdateBufferBytesFunction = uint64_t (*)();
// vkCmdFillBuffer commands recorded since the last clear (kept apart from the events).
using ExecgraphCaptureFillBufferCommandsFunction = uint64_t (*)();
// Barriers since the last clear whose second synchronization scope includes VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT (kept
// apart from the events, which name every barrier "barrier").
using ExecgraphCaptureIndirectBarriersFunction = uint64_t (*)();
}

namespace execgraph::test {
inline constexpr char kCaptureLayerName[] = "VK_LAYER_EXECGRAPH_test_capture";
}  // namespace execgraph::test
