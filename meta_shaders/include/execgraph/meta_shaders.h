// SPIR-V of the scheduler's meta shaders (meta_shaders/*.comp), compiled at build time. docs/design.md, "One graph
// dispatch", says what each pass does; layer/meta_pipelines.h turns them into pipelines.
#pragma once

#include <cstddef>
#include <cstdint>

namespace execgraph::meta_shaders {

extern const uint32_t kEnqueueEntriesSpv[];
extern const size_t kEnqueueEntriesSpvWords;
extern const uint32_t kPrepareSpv[];
extern const size_t kPrepareSpvWords;
extern const uint32_t kScatterSpv[];
extern const size_t kScatterSpvWords;
extern const uint32_t kWriteArgsSpv[];
extern const size_t kWriteArgsSpvWords;
extern const uint32_t kLevelSpv[];
extern const size_t kLevelSpvWords;
extern const uint32_t kFinishSpv[];
extern const size_t kFinishSpvWords;

}  // namespace execgraph::meta_shaders
