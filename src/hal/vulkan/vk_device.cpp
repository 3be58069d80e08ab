// The Vulkan device: probing, instance and device, memory and buffers, and
// the vtable (see vk_device.h).
#include "hal/vulkan/vk_device.h"
#include "hal/vulkan/vk_internal.h"
#include "core/log.h"
#include "core/status.h"
#include "port.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

namespace tern {
namespace hal {

namespace {

const int32_t kMaxInstances = 8;
const uint64_t kRingBytes = 8ull << 20;   // host bytes in transit (copies from and to plain host memory)

// The probe's result, once per process (count() is asked often): a static
// table, zero before main; state 0 not probed, 1 probing, 2 done.
struct vk_probe_result {
    int32_t state;
    int32_t count;
    char    error[400];
};
vk_probe_result g_probe;

bool validation_wanted(void) {
    const char * v = port_getenv("TERN_VULKAN_VALIDATION");
    return v && v[0] && strcmp(v, "0") != 0;
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
                                             const VkDebugUtilsMessengerCallbackDataEXT * data, void * user) {
    (void) severity;
    const char * msg = data && data->pMessage ? data->pMessage : "?";
    tern_log_write(TERN_LOG_ERROR, "vulkan validation: %s", msg);
    vk_device * d = (vk_device *) user;
    if (d) {
        char line[300];
        snprintf(line, sizeof(line), "vulkan%d: validation: %.260s", (int) d->index, msg);
        vk_fail(d, TERN_ERR_INTERNAL, line);
    }
    return VK_FALSE;
}

// An instance (with the validation layer when asked), its functions loaded.
tern_status make_instance(vk_fns * f, vk_device * user, VkInstance * out, VkDebugUtilsMessengerEXT * messenger) {
    *out = VK_NULL_HANDLE;
    *messenger = VK_NULL_HANDLE;
    VkApplicationInfo app = {};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "tern";
    app.pEngineName = "tern";
    app.apiVersion = VK_API_VERSION_1_2;   // the highest we use; a 1.1 device still works through it
    const char * layers[1] = { "VK_LAYER_KHRONOS_validation" };
    const char * exts[1] = { VK_EXT_DEBUG_UTILS_EXTENSION_NAME };
    VkValidationFeatureEnableEXT enables[1] = { VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT };
    VkValidationFeaturesEXT features = {};
    features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = enables;
    VkInstanceCreateInfo ci = {};
    ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ci.pApplicationInfo = &app;
    const bool validate = validation_wanted();
    if (validate) {
        uint32_t n = 0;
        f->vkEnumerateInstanceLayerProperties(&n, NULL);
        VkLayerProperties props[64];
        if (n > 64) n = 64;
        f->vkEnumerateInstanceLayerProperties(&n, props);
        bool found = false;
        for (uint32_t i = 0; i < n; i++) found = found || strcmp(props[i].layerName, layers[0]) == 0;
        if (!found) {
            return tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan: TERN_VULKAN_VALIDATION is set but %s is missing "
                                  "(install vulkan-validationlayers)", layers[0]);
        }
        ci.enabledLayerCount = 1;
        ci.ppEnabledLayerNames = layers;
        ci.enabledExtensionCount = 1;
        ci.ppEnabledExtensionNames = exts;
        ci.pNext = &features;
    }
    VkResult r = f->vkCreateInstance(&ci, NULL, out);
    if (r != VK_SUCCESS) {
        *out = VK_NULL_HANDLE;
        return tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan: no Vulkan driver (vkCreateInstance: %s); install one "
                              "(mesa-vulkan-drivers gives lavapipe) or check VK_ICD_FILENAMES", vk_result_name(r));
    }
    tern_status st = vk_load_instance(f, *out);
    if (st == TERN_OK && validate && f->vkCreateDebugUtilsMessengerEXT) {
        VkDebugUtilsMessengerCreateInfoEXT mi = {};
        mi.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
        mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
        mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
        mi.pfnUserCallback = on_validation;
        mi.pUserData = user;
        if (f->vkCreateDebugUtilsMessengerEXT(*out, &mi, NULL, messenger) != VK_SUCCESS) *messenger = VK_NULL_HANDLE;
    }
    if (st != TERN_OK) {
        f->vkDestroyInstance(*out, NULL);
        *out = VK_NULL_HANDLE;
    }
    return st;
}

void destroy_instance(vk_fns * f, VkInstance inst, VkDebugUtilsMessengerEXT messenger) {
    if (!inst) return;
    if (messenger && f->vkDestroyDebugUtilsMessengerEXT) f->vkDestroyDebugUtilsMessengerEXT(inst, messenger, NULL);
    f->vkDestroyInstance(inst, NULL);
}

// A physical device Tern can use: Vulkan 1.1 and a compute queue.
bool usable(vk_fns * f, VkPhysicalDevice pd, uint32_t * family) {
    VkPhysicalDeviceProperties p;
    f->vkGetPhysicalDeviceProperties(pd, &p);
    if (VK_API_VERSION_MINOR(p.apiVersion) < 1 && VK_API_VERSION_MAJOR(p.apiVersion) == 1) return false;
    uint32_t n = 0;
    f->vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties q[16];
    if (n > 16) n = 16;
    f->vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    // A compute-only family first (an async compute engine), else any with compute.
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < n; i++) {
            const bool compute = (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0;
            const bool graphics = (q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) != 0;
            if (compute && (pass == 1 || !graphics)) {
                *family = i;
                return true;
            }
        }
    }
    return false;
}

// Usable physical devices, in the loader's order; out may be NULL.
int32_t list_usable(vk_fns * f, VkInstance inst, VkPhysicalDevice * out, uint32_t * families) {
    uint32_t n = 0;
    f->vkEnumeratePhysicalDevices(inst, &n, NULL);
    VkPhysicalDevice pds[kMaxInstances];
    if (n > (uint32_t) kMaxInstances) n = kMaxInstances;
    if (f->vkEnumeratePhysicalDevices(inst, &n, pds) < 0) return 0;
    int32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t fam = 0;
        if (!usable(f, pds[i], &fam)) continue;
        if (out) out[k] = pds[i];
        if (families) families[k] = fam;
        k++;
    }
    return k;
}

void probe(void) {
    int32_t expect = 0;
    if (!__atomic_compare_exchange_n(&g_probe.state, &expect, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&g_probe.state, __ATOMIC_ACQUIRE) != 2) port_thread_yield();
        return;
    }
    vk_fns f;
    int32_t count = 0;
    tern_status st = vk_load(&f);
    VkInstance inst = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    if (st == TERN_OK) st = make_instance(&f, NULL, &inst, &messenger);
    if (st == TERN_OK) {
        count = list_usable(&f, inst, NULL, NULL);
        if (count == 0) tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan: the driver lists no device with Vulkan 1.1 and a compute queue");
        destroy_instance(&f, inst, messenger);
    }
    if (f.lib) vk_unload(&f);
    if (count == 0) snprintf(g_probe.error, sizeof(g_probe.error), "%s", tern_last_error());
    g_probe.count = count;
    __atomic_store_n(&g_probe.state, 2, __ATOMIC_RELEASE);
}

int32_t find_type(const VkPhysicalDeviceMemoryProperties & mp, uint32_t bits, VkMemoryPropertyFlags want) {
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++) {
        if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return (int32_t) i;
    }
    return -1;
}

bool has_ext(const VkExtensionProperties * e, uint32_t n, const char * name) {
    for (uint32_t i = 0; i < n; i++) if (strcmp(e[i].extensionName, name) == 0) return true;
    return false;
}

bool parse_u64(const char * s, size_t n, uint64_t * out) {
    uint64_t v = 0;
    size_t i = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) v = v * 10 + (uint64_t) (s[i] - '0');
    if (i == 0) return false;
    if (i + 1 == n && (s[i] == 'K' || s[i] == 'M')) v <<= s[i] == 'K' ? 10 : 20;
    else if (i != n) return false;
    *out = v;
    return true;
}

int op_by_name(const char * s, size_t n) {
    static const struct { const char * name; int op; } ops[] = {
        {"GET_ROWS", TERN_HAL_OP_GET_ROWS}, {"RMS_NORM", TERN_HAL_OP_RMS_NORM}, {"ADD", TERN_HAL_OP_ADD}, {"MUL", TERN_HAL_OP_MUL},
        {"SCALE", TERN_HAL_OP_SCALE}, {"MUL_MAT", TERN_HAL_OP_MUL_MAT}, {"ROPE_CACHE", TERN_HAL_OP_ROPE_CACHE},
        {"ROPE", TERN_HAL_OP_ROPE}, {"SET_ROWS", TERN_HAL_OP_SET_ROWS}, {"ATTN", TERN_HAL_OP_ATTN},
        {"SWIGLU", TERN_HAL_OP_SWIGLU}, {"ARGMAX", TERN_HAL_OP_ARGMAX}, {"COPY_ROWS", TERN_HAL_OP_COPY_ROWS},
    };
    for (const auto & o : ops) {
        if (strlen(o.name) == n && memcmp(o.name, s, n) == 0) return o.op;
    }
    return -1;
}

tern_status parse_params(vk_device * d, const char * params, bool * no_import, bool * discrete, bool * no_int_dot) {
    for (const char * p = params; p && *p;) {
        const char * end = strchr(p, ';');
        const size_t len = end ? (size_t) (end - p) : strlen(p);
        const char * eq = (const char *) memchr(p, '=', len);
        const size_t klen = eq ? (size_t) (eq - p) : len;
        auto key = [&](const char * k) { return strlen(k) == klen && memcmp(k, p, klen) == 0; };
        uint64_t v = 0;
        if (key("max_binding") && eq && parse_u64(eq + 1, len - klen - 1, &v) && v >= 4096) {
            if (v < d->max_binding) d->max_binding = v;
        } else if (key("refuse") && eq) {
            for (const char * o = eq + 1; o < p + len;) {
                const char * plus = (const char *) memchr(o, '+', (size_t) (p + len - o));
                const size_t olen = plus ? (size_t) (plus - o) : (size_t) (p + len - o);
                const int op = op_by_name(o, olen);
                if (op < 0) return tern_hal_error(TERN_ERR_INVALID_ARG, "vulkan: refuse: no op '%.*s'", (int) olen, o);
                d->refuse[op] = true;
                o += olen + (plus ? 1 : 0);
            }
        } else if (key("no_int_dot") && !eq) {
            *no_int_dot = true;
        } else if (key("no_import") && !eq) {
            *no_import = true;
        } else if (key("no_capture") && !eq) {
            d->capture_ok = false;
        } else if (key("profile") && !eq) {   // GPU time per shader, logged at close; eager work only
            d->profile = true;
        } else if (key("discrete") && !eq) {
            *discrete = true;
        } else {
            return tern_hal_error(TERN_ERR_INVALID_ARG, "vulkan: unknown parameter '%.*s' (max_binding=BYTES (>= 4096), "
                                  "refuse=OP[+OP...], no_int_dot, no_import, no_capture, profile, discrete)", (int) len, p);
        }
        p = end ? end + 1 : NULL;
    }
    return TERN_OK;
}

// ---- opening ---------------------------------------------------------------

tern_status open_device(vk_device * d, const char * params) {
    TERN_TRY(vk_load(&d->f));
    vk_fns * f = &d->f;
    TERN_TRY(make_instance(f, d, &d->instance, &d->messenger));
    VkPhysicalDevice pds[kMaxInstances];
    uint32_t fams[kMaxInstances];
    const int32_t n = list_usable(f, d->instance, pds, fams);
    if (d->index >= n) return tern_hal_error(TERN_ERR_NOT_FOUND, "vulkan: no instance %d (%d here)", (int) d->index, (int) n);
    d->phys = pds[d->index];
    d->queue_family = fams[d->index];
    f->vkGetPhysicalDeviceProperties(d->phys, &d->props);
    f->vkGetPhysicalDeviceMemoryProperties(d->phys, &d->mem_props);
    const uint32_t api = d->props.apiVersion;
    const bool v12 = VK_API_VERSION_MINOR(api) >= 2, v13 = VK_API_VERSION_MINOR(api) >= 3;

    // Extensions.
    uint32_t n_ext = 0;
    f->vkEnumerateDeviceExtensionProperties(d->phys, NULL, &n_ext, NULL);
    static const uint32_t kMaxExt = 512;
    VkExtensionProperties * exts = (VkExtensionProperties *) port_alloc(sizeof(VkExtensionProperties) * kMaxExt);
    if (!exts) return tern_hal_error(TERN_ERR_NO_MEMORY, "vulkan: out of host memory");
    if (n_ext > kMaxExt) n_ext = kMaxExt;
    f->vkEnumerateDeviceExtensionProperties(d->phys, NULL, &n_ext, exts);
    const bool ext_host = has_ext(exts, n_ext, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    const bool ext_intdot = has_ext(exts, n_ext, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
    port_free(exts);

    // Features and properties: what the shaders need (16-bit storage) and what is reported.
    VkPhysicalDevice16BitStorageFeatures s16 = {};
    s16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    VkPhysicalDevice8BitStorageFeatures s8 = {};
    s8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
    VkPhysicalDeviceShaderFloat16Int8Features f16i8 = {};
    f16i8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
    VkPhysicalDeviceShaderIntegerDotProductFeatures idot = {};
    idot.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES;
    VkPhysicalDeviceFeatures2 feat = {};
    feat.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    feat.pNext = &s16;
    if (v12) {
        s16.pNext = &s8;
        s8.pNext = &f16i8;
        if (v13 || ext_intdot) f16i8.pNext = &idot;
    }
    f->vkGetPhysicalDeviceFeatures2(d->phys, &feat);
    if (!s16.storageBuffer16BitAccess) {
        return tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan%d: %s has no 16-bit storage buffers (storageBuffer16BitAccess), "
                              "which every Tern shader reads", (int) d->index, d->props.deviceName);
    }
    d->storage8 = s8.storageBuffer8BitAccess != 0;
    d->fp16_math = f16i8.shaderFloat16 != 0;
    d->int8_math = f16i8.shaderInt8 != 0;
    d->int_dot = idot.shaderIntegerDotProduct != 0;
    VkPhysicalDeviceSubgroupProperties sub = {};
    sub.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    VkPhysicalDeviceMaintenance3Properties m3 = {};
    m3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
    sub.pNext = &m3;
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT hostp = {};
    hostp.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT;
    if (ext_host) m3.pNext = &hostp;
    VkPhysicalDeviceProperties2 props2 = {};
    props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    props2.pNext = &sub;
    f->vkGetPhysicalDeviceProperties2(d->phys, &props2);
    d->subgroup_size = sub.subgroupSize;
    d->max_alloc = m3.maxMemoryAllocationSize ? m3.maxMemoryAllocationSize : (1ull << 30);
    d->max_binding = d->props.limits.maxStorageBufferRange;
    d->bind_align = d->props.limits.minStorageBufferOffsetAlignment ? d->props.limits.minStorageBufferOffsetAlignment : 16;
    d->import_align = hostp.minImportedHostPointerAlignment;
    d->capture_ok = true;
    bool no_import = false, discrete = false, no_int_dot = false;
    TERN_TRY(parse_params(d, params, &no_import, &discrete, &no_int_dot));
    // integer dot products through the extension (the instance asks for Vulkan 1.2)
    d->use_int_dot = d->int_dot && ext_intdot && !no_int_dot;
    if (d->profile && !d->props.limits.timestampComputeAndGraphics) {
        return tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan%d: profile: %s has no timestamps on its compute queue", (int) d->index,
                              d->props.deviceName);
    }

    // Memory types: UMA when a device-local type is host-visible and coherent on an integrated GPU or a CPU device.
    const VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    const bool integrated = d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                            d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    const int32_t both = find_type(d->mem_props, ~0u, local | host);
    d->uma = integrated && both >= 0 && !discrete;
    d->type_device = d->uma ? both : find_type(d->mem_props, ~0u, local);
    d->type_host = find_type(d->mem_props, ~0u, host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (d->type_host < 0) d->type_host = find_type(d->mem_props, ~0u, host);
    if (d->type_device < 0) d->type_device = d->type_host;
    if (d->type_device < 0 || d->type_host < 0) {
        return tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan%d: %s has no host-visible coherent memory", (int) d->index,
                              d->props.deviceName);
    }
    d->heap_size = d->mem_props.memoryHeaps[d->mem_props.memoryTypes[d->type_device].heapIndex].size;
    d->has_import = ext_host && d->uma && !no_import && d->import_align > 0;

    // The device: one compute queue, 16-bit storage, host-memory import where present.
    const float prio = 1.0f;
    VkDeviceQueueCreateInfo qi = {};
    qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qi.queueFamilyIndex = d->queue_family;
    qi.queueCount = 1;
    qi.pQueuePriorities = &prio;
    VkPhysicalDevice16BitStorageFeatures en16 = {};
    en16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    en16.storageBuffer16BitAccess = VK_TRUE;
    VkPhysicalDeviceShaderIntegerDotProductFeatures en_idot = {};
    en_idot.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES;
    en_idot.shaderIntegerDotProduct = VK_TRUE;
    const char * dev_exts[3];
    uint32_t n_dev_ext = 0;
    if (ext_host) {
        dev_exts[n_dev_ext++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
        dev_exts[n_dev_ext++] = VK_KHR_EXTERNAL_MEMORY_EXTENSION_NAME;
    }
    if (d->use_int_dot) {
        dev_exts[n_dev_ext++] = VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME;
        en16.pNext = &en_idot;
    }
    VkDeviceCreateInfo di = {};
    di.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    di.pNext = &en16;
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    di.enabledExtensionCount = n_dev_ext;
    di.ppEnabledExtensionNames = dev_exts;
    TERN_TRY(vk_check(d, f->vkCreateDevice(d->phys, &di, NULL, &d->device), "vkCreateDevice"));
    TERN_TRY(vk_load_device(f, d->device));
    f->vkGetDeviceQueue(d->device, d->queue_family, 0, &d->queue);

    // One descriptor set layout for every shader: binding 0 the destination, 1..5 the sources.
    VkDescriptorSetLayoutBinding binds[VK_BINDINGS];
    for (int32_t i = 0; i < VK_BINDINGS; i++) {
        binds[i] = {};
        binds[i].binding = (uint32_t) i;
        binds[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        binds[i].descriptorCount = 1;
        binds[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo li = {};
    li.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    li.bindingCount = VK_BINDINGS;
    li.pBindings = binds;
    TERN_TRY(vk_check(d, f->vkCreateDescriptorSetLayout(d->device, &li, NULL, &d->dsl), "vkCreateDescriptorSetLayout"));
    VkPushConstantRange pcr = { VK_SHADER_STAGE_COMPUTE_BIT, 0, VK_PUSH_WORDS * 4 };
    VkPipelineLayoutCreateInfo pli = {};
    pli.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &d->dsl;
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &pcr;
    TERN_TRY(vk_check(d, f->vkCreatePipelineLayout(d->device, &pli, NULL, &d->layout), "vkCreatePipelineLayout"));

    TERN_TRY(vk_stream_init(d));
    TERN_TRY(vk_buffer_new(d, 256, false, &d->dummy));
    TERN_TRY(vk_buffer_new(d, kRingBytes, true, &d->ring));

    const uint64_t mib = d->heap_size >> 20;
    snprintf(d->desc, sizeof(d->desc),
             "vulkan%d: %s (%s, Vulkan %u.%u), %s, %llu MiB; fp16 %s, int8 %s, int-dot %s, 8-bit storage %s, subgroup %u, "
             "max binding %llu MiB%s",
             (int) d->index, d->props.deviceName,
             d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? "CPU" : d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU
                 ? "integrated GPU" : d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ? "discrete GPU" : "GPU",
             VK_API_VERSION_MAJOR(api), VK_API_VERSION_MINOR(api), d->uma ? "UMA" : "discrete memory", (unsigned long long) mib,
             d->fp16_math ? "yes" : "no", d->int8_math ? "yes" : "no",
             d->use_int_dot ? "yes (used)" : d->int_dot ? "yes" : "no", d->storage8 ? "yes" : "no",
             d->subgroup_size, (unsigned long long) (d->max_binding >> 20), d->has_import ? ", imports host memory" : "");
    return TERN_OK;
}

void close_device(vk_device * d) {
    vk_fns * f = &d->f;
    if (d->device) {
        f->vkDeviceWaitIdle(d->device);
        vk_profile_report(d);
        while (d->buffers) vk_buffer_delete(d, d->buffers);
        vk_stream_free(d);
        vk_pipelines_free(d);
        if (d->layout) f->vkDestroyPipelineLayout(d->device, d->layout, NULL);
        if (d->dsl) f->vkDestroyDescriptorSetLayout(d->device, d->dsl, NULL);
        f->vkDestroyDevice(d->device, NULL);
    }
    destroy_instance(f, d->instance, d->messenger);
    if (f->lib) vk_unload(f);
    port_free(d);
}

// ---- the vtable ---------------------------------------------------------------

int32_t vk_count(void) {
    probe();
    if (g_probe.count == 0) tern_hal_error(TERN_ERR_UNSUPPORTED, "%s", g_probe.error);
    return g_probe.count;
}

tern_status vk_open(int32_t index, const char * params, void ** out) {
    *out = NULL;
    vk_device * d = (vk_device *) port_alloc(sizeof(vk_device));
    if (!d) return tern_hal_error(TERN_ERR_NO_MEMORY, "vulkan: cannot allocate the device");
    memset((void *) d, 0, sizeof(*d));
    d->index = index;
    tern_status st = open_device(d, params);
    if (st != TERN_OK) {
        char msg[400];
        snprintf(msg, sizeof(msg), "%s", tern_last_error());
        close_device(d);
        return tern_hal_error(st, "%s", msg);
    }
    *out = d;
    return TERN_OK;
}

void vk_close(void * dev) {
    if (dev) close_device((vk_device *) dev);
}

const char * vk_describe(void * dev) { return ((vk_device *) dev)->desc; }

void vk_get_caps(void * dev, tern_hal_caps * c) {
    const vk_device * d = (const vk_device *) dev;
    memset(c, 0, sizeof(*c));
    c->mem_total = d->heap_size;
    c->mem_free = d->heap_size > d->used ? d->heap_size - d->used : 0;
    c->uma = d->uma;
    c->host_visible = 1;
    c->import_host = d->has_import;
    c->capture = d->capture_ok;
    c->events = 1;
    c->alignment = d->bind_align > 64 ? d->bind_align : 64;
    c->max_buffer_size = d->max_alloc < d->heap_size ? d->max_alloc : d->heap_size;
    c->max_binding_size = d->max_binding;
    c->op_offload_min_batch = 32;
    // lavapipe and other CPU drivers: never chosen by -ngl alone (llama.cpp's
    // Vulkan backend passes them over too); --device vulkanN still names one.
    c->software = d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

tern_status vk_buffer_alloc(void * dev, uint64_t size, tern_hal_usage usage, tern_hal_buffer ** out) {
    vk_device * d = (vk_device *) dev;
    *out = NULL;
    TERN_TRY(vk_buffer_new(d, size, usage == TERN_HAL_USAGE_STAGING, out));
    (*out)->usage = usage;
    return TERN_OK;
}

void vk_buffer_free(void * dev, tern_hal_buffer * b) {
    if (b) vk_buffer_delete((vk_device *) dev, b);
}

void * vk_buffer_host_ptr(void * dev, tern_hal_buffer * b) { return b->usage == TERN_HAL_USAGE_STAGING ? b->host : NULL; }

// Host memory as a device buffer (VK_EXT_external_memory_host): host and size
// must be multiples of minImportedHostPointerAlignment (a page).
tern_status vk_buffer_import_host(void * dev, void * host, uint64_t size, tern_hal_buffer ** out) {
    vk_device * d = (vk_device *) dev;
    vk_fns * f = &d->f;
    *out = NULL;
    if (!d->has_import || !f->vkGetMemoryHostPointerPropertiesEXT) {
        return tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan%d: cannot import host memory", (int) d->index);
    }
    if ((uintptr_t) host % d->import_align || size % d->import_align) {
        return tern_hal_error(TERN_ERR_INVALID_ARG, "vulkan%d: import of %llu bytes at %p: not aligned to %llu", (int) d->index,
                              (unsigned long long) size, host, (unsigned long long) d->import_align);
    }
    if (size > d->max_alloc) {
        return tern_hal_error(TERN_ERR_NO_MEMORY, "vulkan%d: import of %llu bytes: one allocation holds at most %llu",
                              (int) d->index, (unsigned long long) size, (unsigned long long) d->max_alloc);
    }
    VkMemoryHostPointerPropertiesEXT hp = {};
    hp.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT;
    TERN_TRY(vk_check(d, f->vkGetMemoryHostPointerPropertiesEXT(d->device, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT,
                                                               host, &hp), "vkGetMemoryHostPointerPropertiesEXT"));
    tern_hal_buffer * b = (tern_hal_buffer *) port_alloc(sizeof(tern_hal_buffer));
    if (!b) return tern_hal_error(TERN_ERR_NO_MEMORY, "vulkan: out of host memory");
    memset((void *) b, 0, sizeof(*b));
    VkExternalMemoryBufferCreateInfo ext = {};
    ext.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
    ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    VkBufferCreateInfo bi = {};
    bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bi.pNext = &ext;
    bi.size = size;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    tern_status st = vk_check(d, f->vkCreateBuffer(d->device, &bi, NULL, &b->buf), "vkCreateBuffer (import)");
    VkMemoryRequirements req = {};
    if (st == TERN_OK) f->vkGetBufferMemoryRequirements(d->device, b->buf, &req);
    const int32_t type = find_type(d->mem_props, hp.memoryTypeBits & req.memoryTypeBits, 0);
    if (st == TERN_OK && type < 0) st = tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan%d: no memory type imports this host memory", (int) d->index);
    if (st == TERN_OK) {
        VkImportMemoryHostPointerInfoEXT imp = {};
        imp.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT;
        imp.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
        imp.pHostPointer = host;
        VkMemoryAllocateInfo ai = {};
        ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
        ai.pNext = &imp;
        ai.allocationSize = size;
        ai.memoryTypeIndex = (uint32_t) type;
        st = vk_check(d, f->vkAllocateMemory(d->device, &ai, NULL, &b->mem), "vkAllocateMemory (import)");
    }
    if (st == TERN_OK) st = vk_check(d, f->vkBindBufferMemory(d->device, b->buf, b->mem, 0), "vkBindBufferMemory (import)");
    if (st != TERN_OK) {
        if (b->buf) f->vkDestroyBuffer(d->device, b->buf, NULL);
        if (b->mem) f->vkFreeMemory(d->device, b->mem, NULL);
        port_free(b);
        return st;
    }
    b->size = b->alloc = size;
    b->host = (uint8_t *) host;   // the host's bytes: read, never written through this buffer
    b->usage = TERN_HAL_USAGE_WEIGHTS;
    b->imported = true;
    b->next = d->buffers;
    d->buffers = b;
    *out = b;
    return TERN_OK;
}

tern_status vk_dev_copy_h2d(void * dev, tern_hal_buffer * dst, uint64_t off, const void * src, uint64_t size) {
    return vk_copy_h2d((vk_device *) dev, dst, off, src, size);
}
tern_status vk_dev_copy_d2h(void * dev, void * dst, tern_hal_buffer * src, uint64_t off, uint64_t size) {
    return vk_copy_d2h((vk_device *) dev, dst, src, off, size);
}
tern_status vk_dev_copy_d2d(void * dev, tern_hal_buffer * dst, uint64_t doff, tern_hal_buffer * src, uint64_t soff, uint64_t size) {
    return vk_copy_d2d((vk_device *) dev, dst, doff, src, soff, size);
}
int vk_dev_supports_op(void * dev, const tern_hal_op_desc * op) { return vk_supports_op((vk_device *) dev, op); }
tern_status vk_dev_prepare(void * dev, const tern_hal_op_desc * op) { return vk_prepare((vk_device *) dev, op); }
tern_status vk_dev_launch(void * dev, const tern_hal_op_desc * op) { return vk_launch((vk_device *) dev, op); }
tern_status vk_dev_synchronize(void * dev) { return vk_synchronize((vk_device *) dev); }

tern_status vk_event_create(void * dev, tern_hal_event ** out) {
    tern_hal_event * e = (tern_hal_event *) port_alloc(sizeof(tern_hal_event));
    if (!e) return tern_hal_error(TERN_ERR_NO_MEMORY, "vulkan: cannot allocate an event");
    e->serial = 0;
    *out = e;
    return TERN_OK;
}
void vk_event_destroy(void *, tern_hal_event * e) { port_free(e); }
tern_status vk_dev_event_record(void * dev, tern_hal_event * e) { return vk_event_record((vk_device *) dev, e); }
tern_status vk_dev_event_wait(void * dev, tern_hal_event * e) { return vk_event_wait((vk_device *) dev, e); }
tern_status vk_dev_capture_begin(void * dev) { return vk_capture_begin((vk_device *) dev); }
tern_status vk_dev_capture_end(void * dev, tern_hal_graph ** out) { return vk_capture_end((vk_device *) dev, out); }
tern_status vk_dev_replay(void * dev, tern_hal_graph * g) { return vk_replay((vk_device *) dev, g); }
void vk_dev_graph_release(void * dev, tern_hal_graph * g) { vk_graph_release((vk_device *) dev, g); }
void vk_get_counters(void * dev, tern_hal_counters * out) { *out = ((vk_device *) dev)->counters; }

const tern_hal_device_desc kVkDesc = {
    TERN_HAL_ABI_VERSION, "vulkan", 1,
    vk_count, vk_open, vk_close, vk_describe, vk_get_caps,
    vk_buffer_alloc, vk_buffer_free, vk_buffer_host_ptr, vk_buffer_import_host,
    vk_dev_copy_h2d, vk_dev_copy_d2h, vk_dev_copy_d2d,
    vk_dev_supports_op, vk_dev_prepare, vk_dev_launch, NULL, vk_dev_synchronize,
    vk_event_create, vk_event_destroy, vk_dev_event_record, vk_dev_event_wait,
    vk_dev_capture_begin, vk_dev_capture_end, vk_dev_replay, vk_dev_graph_release,
    vk_get_counters,
};

}  // namespace

tern_status vk_check(vk_device * d, VkResult r, const char * what) {
    if (r == VK_SUCCESS) return TERN_OK;
    const tern_status st = r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ? TERN_ERR_NO_MEMORY : TERN_ERR_INTERNAL;
    return tern_hal_error(st, "vulkan%d: %s: %s", (int) d->index, what, vk_result_name(r));
}

tern_status vk_buffer_new(vk_device * d, uint64_t size, bool host, tern_hal_buffer ** out) {
    vk_fns * f = &d->f;
    *out = NULL;
    if (size > d->max_alloc) {
        return tern_hal_error(TERN_ERR_NO_MEMORY, "vulkan%d: %llu bytes asked, one allocation holds at most %llu", (int) d->index,
                              (unsigned long long) size, (unsigned long long) d->max_alloc);
    }
    tern_hal_buffer * b = (tern_hal_buffer *) port_alloc(sizeof(tern_hal_buffer));
    if (!b) return tern_hal_error(TERN_ERR_NO_MEMORY, "vulkan: out of host memory");
    memset((void *) b, 0, sizeof(*b));
    b->size = size;
    b->alloc = (size + 15) / 16 * 16;
    if (b->alloc == 0) b->alloc = 16;
    VkBufferCreateInfo bi = {};
    bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bi.size = b->alloc;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    tern_status st = vk_check(d, f->vkCreateBuffer(d->device, &bi, NULL, &b->buf), "vkCreateBuffer");
    VkMemoryRequirements req = {};
    int32_t type = -1;
    if (st == TERN_OK) {
        f->vkGetBufferMemoryRequirements(d->device, b->buf, &req);
        const int32_t want = host ? d->type_host : d->type_device;
        type = (req.memoryTypeBits & (1u << want)) ? want : -1;
        if (type < 0) st = tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan%d: no memory type for a buffer", (int) d->index);
    }
    if (st == TERN_OK) {
        VkMemoryAllocateInfo ai = {};
        ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
        ai.allocationSize = req.size;
        ai.memoryTypeIndex = (uint32_t) type;
        st = vk_check(d, f->vkAllocateMemory(d->device, &ai, NULL, &b->mem), "vkAllocateMemory");
        if (st != TERN_OK) tern_error_prefix("%llu bytes: ", (unsigned long long) size);
    }
    if (st == TERN_OK) st = vk_check(d, f->vkBindBufferMemory(d->device, b->buf, b->mem, 0), "vkBindBufferMemory");
    const bool mapped = (d->mem_props.memoryTypes[type < 0 ? 0 : type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) &&
                        (host || d->uma);
    if (st == TERN_OK && mapped) {
        void * p = NULL;
        st = vk_check(d, f->vkMapMemory(d->device, b->mem, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory");
        b->host = (uint8_t *) p;
    }
    if (st != TERN_OK) {
        if (b->buf) f->vkDestroyBuffer(d->device, b->buf, NULL);
        if (b->mem) f->vkFreeMemory(d->device, b->mem, NULL);
        port_free(b);
        return st;
    }
    d->used += req.size;
    b->next = d->buffers;
    d->buffers = b;
    *out = b;
    return TERN_OK;
}

void vk_buffer_delete(vk_device * d, tern_hal_buffer * b) {
    vk_fns * f = &d->f;
    // Work in flight may still read it: the core frees buffers only when idle,
    // but a failed run may have left work queued.
    vk_wait_all(d);
    for (tern_hal_buffer ** p = &d->buffers; *p; p = &(*p)->next) {
        if (*p == b) {
            *p = b->next;
            break;
        }
    }
    if (!b->imported) {
        VkMemoryRequirements req;
        f->vkGetBufferMemoryRequirements(d->device, b->buf, &req);
        d->used -= req.size < d->used ? req.size : d->used;
    }
    if (b->host && !b->imported) f->vkUnmapMemory(d->device, b->mem);
    f->vkDestroyBuffer(d->device, b->buf, NULL);
    f->vkFreeMemory(d->device, b->mem, NULL);
    port_free(b);
}

tern_hal_buffer * vk_host_buffer(vk_device * d, const void * p, uint64_t size) {
    const uint8_t * q = (const uint8_t *) p;
    for (tern_hal_buffer * b = d->buffers; b; b = b->next) {
        if (b->host && !b->imported && q >= b->host && q + size <= b->host + b->size) return b;
    }
    return NULL;
}

const tern_hal_device_desc * vk_device_desc(void) { return &kVkDesc; }

}  // namespace hal
}  // namespace tern
