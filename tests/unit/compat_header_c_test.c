// SPDX-License-Identifier: Apache-2.0
//
// Proves that vk_amdx_compat.h is valid C: this file includes only the compat header (which includes
// <vulkan/vulkan.h> itself), is compiled as strict C99, and reports what the C compiler sees to the C++ test.
#include <execgraph/vk_amdx_compat.h>

#include "compat_header_facts.h"

#define EXECGRAPH_FACT_COUNT_SIZE(type, bytes) +1
#define EXECGRAPH_FACT_COUNT_OFFSET(type, member, bytes) +1
#define EXECGRAPH_FACT_COUNT_VALUE(name, expected) +1
enum {
    kFactCount = 0 EXECGRAPH_COMPAT_LAYOUT_FACTS(EXECGRAPH_FACT_COUNT_SIZE, EXECGRAPH_FACT_COUNT_OFFSET)
        EXECGRAPH_COMPAT_VALUE_FACTS(EXECGRAPH_FACT_COUNT_VALUE)
};

const ExecgraphCompatFactFromC* ExecgraphCompatFactsFromC(size_t* count) {
    // Filled at run time: in C the enum constants of the compat header are `static const` objects, which are
    // not constant expressions and so cannot appear in a static initializer.
    static ExecgraphCompatFactFromC facts[kFactCount];
    size_t next = 0;
#define EXECGRAPH_FACT_SIZE(type, bytes)        \
    facts[next].name = "sizeof(" #type ")";     \
    facts[next].value = (uint64_t)sizeof(type); \
    ++next;
#define EXECGRAPH_FACT_OFFSET(type, member, bytes)         \
    facts[next].name = "offsetof(" #type ", " #member ")"; \
    facts[next].value = (uint64_t)offsetof(type, member);  \
    ++next;
#define EXECGRAPH_FACT_VALUE(name_, expected) \
    facts[next].name = #name_;                \
    facts[next].value = (uint64_t)(name_);    \
    ++next;
    EXECGRAPH_COMPAT_LAYOUT_FACTS(EXECGRAPH_FACT_SIZE, EXECGRAPH_FACT_OFFSET)
    EXECGRAPH_COMPAT_VALUE_FACTS(EXECGRAPH_FACT_VALUE)
    *count = next;
    return facts;
}

const char* ExecgraphCompatAmdxExtensionNameFromC(void) {
    // Also exercises the v2 command typedefs from C: a table of PFNs must be declarable.
    PFN_vkCmdDispatchGraphIndirectCountAMDX dispatch_indirect_count = NULL;
    VkDispatchGraphCountInfoAMDX count_info = {0};
    count_info.infos.hostAddress = &count_info;
    (void)dispatch_indirect_count;
    return VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME;
}

const char* ExecgraphCompatLayerSettingsExtensionNameFromC(void) { return VK_EXT_LAYER_SETTINGS_EXTENSION_NAME; }
