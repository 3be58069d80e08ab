// The Vulkan device (TERN_DEVICES=vulkan): Tern's first real accelerator
// behind tern_hal.h, for every GPU class an edge board carries (Jetson, Mali,
// Adreno, Intel and AMD integrated GPUs) and for lavapipe, Mesa's software
// driver, on which CI runs it under synchronization validation.
//
//   loader    libvulkan.so.1 opened with dlopen when the device is probed or
//             opened (vk_api.h): libtern.a links no Vulkan library. No loader
//             or no driver: a one-line error naming what to install.
//   instances vulkan0, vulkan1, ... one per physical device that has a compute
//             queue and 16-bit storage buffers (Vulkan 1.1).
//   memory    vk_device.cpp: one VkDeviceMemory per buffer the core asks for,
//             obtained once. UMA (a device-local, host-visible type: integrated
//             GPUs, lavapipe): every buffer host-mapped, copies from the host
//             are memcpy when the queue is idle; discrete: device-local
//             buffers, host bytes go through a host-visible ring. Weights of an
//             mmap'd model are imported (VK_EXT_external_memory_host) where the
//             device can, held once.
//   commands  vk_stream.cpp: eager work is recorded into a command buffer that
//             is submitted at synchronize / event points (or when its pools
//             fill); capture records the same calls into a command buffer of
//             its own, replay submits it (one vkQueueSubmit). A barrier goes
//             between two commands only when they touch overlapping bytes and
//             one of them writes (read-after-write, write-after-read,
//             write-after-write); independent dispatches run without one.
//   ops       vk_ops.cpp + shaders/: every graph op, GLSL compute shaders
//             compiled to SPIR-V by glslc at build time and embedded.
//             Portable rules: 8/16-bit data read through 16-bit storage, math
//             in fp32/int32, at most 16 KiB of shared memory, no subgroup,
//             fp16, int8 or integer-dot arithmetic required; prompts' quantized
//             MUL_MAT uses integer dot products where the device reports them.
//             supports_op refuses what a device cannot run (the CPU runs it then).
//
// Device parameters ("vulkan0:max_binding=65536"):
//   max_binding=BYTES  caps the bytes one binding may address below the
//                      device's maxStorageBufferRange (tests: the split paths)
//   refuse=OP[+OP...]  ops supports_op refuses (the CPU runs them: fallback, bisecting)
//   profile            GPU time per shader, from timestamps written after each
//                      eager dispatch, logged (warning level) when the device closes;
//                      captured graphs are not timed (use --graph-cache 0)
//   no_int_dot         the tiled MUL_MAT without integer dot products where the
//                      device has them (mul_mat.comp, not mul_mat_idot.comp: the same results)
//   no_import          caps.import_host off (weights copied even on UMA)
//   no_capture         caps.capture off
//   discrete           a UMA device run as a discrete GPU's memory: device buffers not
//                      mapped, every copy recorded or staged (the path a desktop GPU takes)
// Environment: TERN_VULKAN_LOADER (the loader's path), TERN_VULKAN_VALIDATION=1
// (the Khronos validation layer with synchronization validation; every
// message is printed as "vulkan validation: ..." and fails the next call).
#pragma once
#include "tern_hal.h"

namespace tern {
namespace hal {

const tern_hal_device_desc * vk_device_desc(void);

}  // namespace hal
}  // namespace tern
