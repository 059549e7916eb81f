// The application's synchronisation points on emulating devices: where finished graph dispatches that dropped work are
// reported (dispatch_reports.h). Each command is passed down unchanged.
#include "dispatch_reports.h"
#include "intercepts.h"
#include "layer_state.h"

namespace execgraph::intercept {
namespace {

template <typename Handle>
std::shared_ptr<DeviceState> DeviceOf(Handle handle) {
    return FindDeviceState(GetDispatchKey(handle));
}

void PollReports(const DeviceState& state) {
    if (state.reporter) state.reporter->Poll(state.messages());
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit(VkQueue queue, uint32_t submitCount, const VkSubmitInfo* pSubmits, VkFence fence) {
    std::shared_ptr<DeviceState> state = DeviceOf(queue);
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    PollReports(*state);
    return state->dispatch.QueueSubmit(queue, submitCount, pSubmits, fence);
}

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2(VkQueue queue, uint32_t submitCount, const VkSubmitInfo2* pSubmits, VkFence fence) {
    std::shared_ptr<DeviceState> state = DeviceOf(queue);
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    PollReports(*state);
    return state->dispatch.QueueSubmit2(queue, submitCount, pSubmits, fence);
}

VKAPI_ATTR VkResult VKAPI_CALL QueueWaitIdle(VkQueue queue) {
    std::shared_ptr<DeviceState> state = DeviceOf(queue);
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    VkResult result = state->dispatch.QueueWaitIdle(queue);
    PollReports(*state);
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL DeviceWaitIdle(VkDevice device) {
    std::shared_ptr<DeviceState> state = DeviceOf(device);
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    VkResult result = state->dispatch.DeviceWaitIdle(device);
    PollReports(*state);
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL WaitForFences(VkDevice device, uint32_t fenceCount, const VkFence* pFences, VkBool32 waitAll,
                                             uint64_t timeout) {
    std::shared_ptr<DeviceState> state = DeviceOf(device);
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    VkResult result = state->dispatch.WaitForFences(device, fenceCount, pFences, waitAll, timeout);
    PollReports(*state);
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL GetFenceStatus(VkDevice device, VkFence fence) {
    std::shared_ptr<DeviceState> state = DeviceOf(device);
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    VkResult result = state->dispatch.GetFenceStatus(device, fence);
    if (result == VK_SUCCESS) PollReports(*state);
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL WaitSemaphores(VkDevice device, const VkSemaphoreWaitInfo* pWaitInfo, uint64_t timeout) {
    std::shared_ptr<DeviceState> state = DeviceOf(device);
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    VkResult result = state->dispatch.WaitSemaphores(device, pWaitInfo, timeout);
    PollReports(*state);
    return result;
}

}  // namespace execgraph::intercept
