// The Vulkan entry points the device calls, loaded at run time: the loader
// (libvulkan.so.1, or TERN_VULKAN_LOADER) is opened with port_dlopen when a
// device is probed or opened, vkGetInstanceProcAddr is its one symbol looked up
// by name, and every other function comes through it (instance level) or
// vkGetDeviceProcAddr (device level). libtern.a thus links no Vulkan library;
// the headers (vulkan/vulkan_core.h, Debian's libvulkan-dev) are a build-time
// dependency only.
#pragma once
#define VK_NO_PROTOTYPES 1
#include <vulkan/vulkan_core.h>
#include "tern.h"
#include "tern_hal.h"

namespace tern {
namespace hal {

// X(name): every function the device uses, by level.
#define TERN_VK_GLOBAL(X) \
    X(vkCreateInstance) X(vkEnumerateInstanceExtensionProperties) X(vkEnumerateInstanceLayerProperties)
#define TERN_VK_INSTANCE(X) \
    X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties) \
    X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2) X(vkGetPhysicalDeviceMemoryProperties) \
    X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkEnumerateDeviceExtensionProperties) X(vkCreateDevice) \
    X(vkGetDeviceProcAddr)
#define TERN_VK_DEVICE(X) \
    X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkQueueSubmit) X(vkDeviceWaitIdle) X(vkAllocateMemory) X(vkFreeMemory) \
    X(vkMapMemory) X(vkUnmapMemory) X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements) \
    X(vkBindBufferMemory) X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout) \
    X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) X(vkCreateComputePipelines) \
    X(vkDestroyPipeline) X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool) X(vkResetDescriptorPool) \
    X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets) X(vkCreateCommandPool) X(vkDestroyCommandPool) \
    X(vkAllocateCommandBuffers) X(vkResetCommandBuffer) X(vkBeginCommandBuffer) X(vkEndCommandBuffer) \
    X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) X(vkCmdPushConstants) X(vkCmdDispatch) X(vkCmdPipelineBarrier) \
    X(vkCmdCopyBuffer) X(vkCreateFence) X(vkDestroyFence) X(vkWaitForFences) X(vkResetFences) X(vkGetFenceStatus) \
    X(vkInvalidateMappedMemoryRanges) X(vkCreateQueryPool) X(vkDestroyQueryPool) X(vkCmdResetQueryPool) \
    X(vkCmdWriteTimestamp) X(vkGetQueryPoolResults)

struct vk_fns {
    void * lib;   // the loader (port_dlopen)
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
#define TERN_VK_MEMBER(name) PFN_##name name;
    TERN_VK_GLOBAL(TERN_VK_MEMBER)
    TERN_VK_INSTANCE(TERN_VK_MEMBER)
    TERN_VK_DEVICE(TERN_VK_MEMBER)
#undef TERN_VK_MEMBER
    // Optional (extensions): NULL when absent.
    PFN_vkGetMemoryHostPointerPropertiesEXT vkGetMemoryHostPointerPropertiesEXT;
    PFN_vkCreateDebugUtilsMessengerEXT      vkCreateDebugUtilsMessengerEXT;
    PFN_vkDestroyDebugUtilsMessengerEXT     vkDestroyDebugUtilsMessengerEXT;
};

// Open the loader and take the global functions. TERN_ERR_UNSUPPORTED with a
// line naming what is missing (the library and how to get it).
tern_status vk_load(vk_fns * f);
tern_status vk_load_instance(vk_fns * f, VkInstance instance);
tern_status vk_load_device(vk_fns * f, VkDevice device);
void        vk_unload(vk_fns * f);
// "VK_ERROR_OUT_OF_DEVICE_MEMORY" etc., for messages.
const char * vk_result_name(VkResult r);

}  // namespace hal
}  // namespace tern
