// Shader modules on emulating devices: AMDX modules stay in the layer; everything else goes to the driver.
#include <cstring>

#include "intercepts.h"
#include "layer_state.h"

namespace execgraph {

// SPIR-V declares capabilities first (SPIR-V spec 2.4, "Logical Layout of a Module"), so a module uses AMDX exactly when
// an OpCapability ShaderEnqueueAMDX (5067) appears before the first non-OpCapability instruction.
bool DeclaresShaderEnqueue(const uint32_t* words, size_t word_count) {
    constexpr uint32_t kOpCapability = 17;
    constexpr uint32_t kCapabilityShaderEnqueueAMDX = 5067;
    constexpr size_t kHeaderWords = 5;
    if (words == nullptr || word_count < kHeaderWords || words[0] != 0x07230203u) return false;
    for (size_t i = kHeaderWords; i < word_count;) {
        const uint32_t instruction_words = words[i] >> 16;
        const uint32_t opcode = words[i] & 0xFFFFu;
        if (opcode != kOpCapability || instruction_words < 2 || i + instruction_words > word_count) return false;
        if (words[i + 1] == kCapabilityShaderEnqueueAMDX) return true;
        i += instruction_words;
    }
    return false;
}

namespace intercept {

VKAPI_ATTR VkResult VKAPI_CALL CreateShaderModule(VkDevice device, const VkShaderModuleCreateInfo* pCreateInfo,
                                                  const VkAllocationCallbacks* pAllocator, VkShaderModule* pShaderModule) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    const size_t word_count = pCreateInfo->codeSize / sizeof(uint32_t);
    if (!DeclaresShaderEnqueue(pCreateInfo->pCode, word_count)) {
        return state->dispatch.CreateShaderModule(device, pCreateInfo, pAllocator, pShaderModule);
    }
    // The handle is the address of the layer's object: unique while it lives, and never passed down the chain.
    auto module = std::make_shared<AmdxShaderModule>();
    module->words.assign(pCreateInfo->pCode, pCreateInfo->pCode + word_count);
    *pShaderModule = reinterpret_cast<VkShaderModule>(module.get());
    state->amdx_shader_modules.InsertOrAssign(*pShaderModule, std::move(module));
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL DestroyShaderModule(VkDevice device, VkShaderModule shaderModule, const VkAllocationCallbacks* pAllocator) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state || shaderModule == VK_NULL_HANDLE) return;
    if (state->amdx_shader_modules.Pop(shaderModule)) return;
    state->dispatch.DestroyShaderModule(device, shaderModule, pAllocator);
}

}  // namespace intercept
}  // namespace execgraph
