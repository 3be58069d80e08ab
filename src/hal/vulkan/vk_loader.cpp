// The Vulkan loader, opened at run time (see vk_api.h).
#include "hal/vulkan/vk_api.h"
#include "core/status.h"
#include "port.h"

#include <string.h>

namespace tern {
namespace hal {

tern_status vk_load(vk_fns * f) {
    memset(f, 0, sizeof(*f));
    const char * env = port_getenv("TERN_VULKAN_LOADER");
    const char * name = env && env[0] ? env : "libvulkan.so.1";
    char why[200];
    why[0] = 0;
    f->lib = port_dlopen(name, why, sizeof(why));
    if (!f->lib) {
        return tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan: no Vulkan loader: cannot open %s (%s); install libvulkan1 and a "
                              "driver (mesa-vulkan-drivers for lavapipe)", name, why);
    }
    f->vkGetInstanceProcAddr = (PFN_vkGetInstanceProcAddr) port_dlsym(f->lib, "vkGetInstanceProcAddr");
    if (!f->vkGetInstanceProcAddr) {
        vk_unload(f);
        return tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan: %s has no vkGetInstanceProcAddr (not a Vulkan loader)", name);
    }
#define TERN_VK_GET(fn)                                                                                       \
    f->fn = (PFN_##fn) f->vkGetInstanceProcAddr(NULL, #fn);                                                   \
    if (!f->fn) {                                                                                             \
        vk_unload(f);                                                                                         \
        return tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan: the loader %s lacks %s", name, #fn);             \
    }
    TERN_VK_GLOBAL(TERN_VK_GET)
#undef TERN_VK_GET
    return TERN_OK;
}

tern_status vk_load_instance(vk_fns * f, VkInstance instance) {
#define TERN_VK_GET(fn)                                                                                       \
    f->fn = (PFN_##fn) f->vkGetInstanceProcAddr(instance, #fn);                                               \
    if (!f->fn) return tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan: the instance lacks %s (Vulkan 1.1 needed)", #fn);
    TERN_VK_INSTANCE(TERN_VK_GET)
#undef TERN_VK_GET
    f->vkCreateDebugUtilsMessengerEXT =
        (PFN_vkCreateDebugUtilsMessengerEXT) f->vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT");
    f->vkDestroyDebugUtilsMessengerEXT =
        (PFN_vkDestroyDebugUtilsMessengerEXT) f->vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT");
    return TERN_OK;
}

tern_status vk_load_device(vk_fns * f, VkDevice device) {
#define TERN_VK_GET(fn)                                                                                       \
    f->fn = (PFN_##fn) f->vkGetDeviceProcAddr(device, #fn);                                                   \
    if (!f->fn) return tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan: the device lacks %s", #fn);
    TERN_VK_DEVICE(TERN_VK_GET)
#undef TERN_VK_GET
    f->vkGetMemoryHostPointerPropertiesEXT =
        (PFN_vkGetMemoryHostPointerPropertiesEXT) f->vkGetDeviceProcAddr(device, "vkGetMemoryHostPointerPropertiesEXT");
    return TERN_OK;
}

void vk_unload(vk_fns * f) {
    if (f->lib) port_dlclose(f->lib);
    memset(f, 0, sizeof(*f));
}

const char * vk_result_name(VkResult r) {
    switch (r) {
        case VK_SUCCESS: return "VK_SUCCESS";
        case VK_NOT_READY: return "VK_NOT_READY";
        case VK_TIMEOUT: return "VK_TIMEOUT";
        case VK_INCOMPLETE: return "VK_INCOMPLETE";
        case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
        case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
        case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
        case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
        case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
        case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
        case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
        case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
        case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
        case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
        case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
        case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
        case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
        case VK_ERROR_INVALID_EXTERNAL_HANDLE: return "VK_ERROR_INVALID_EXTERNAL_HANDLE";
        default: return "VkResult error";
    }
}

}  // namespace hal
}  // namespace tern
