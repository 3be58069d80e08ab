// The device registry (see device.h) and tern_hal.h's entry points.
#include "hal/device.h"
#include "core/status.h"
#include "hal/sim/sim_device.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#if TERN_WITH_DEVICE_VULKAN
#include "hal/vulkan/vk_device.h"
#endif

namespace tern {
namespace hal {

namespace {

// Kinds registered at run time, after the built-in ones (a static table: no
// constructor, zero before main).
const tern_hal_device_desc * g_registered[TERN_MAX_DEVICE_KINDS];
int32_t g_n_registered;
char g_kinds[256];

// Built-in kinds, then the registered ones; NULL past the end.
const tern_hal_device_desc * kind_at(int32_t i) {
    const tern_hal_device_desc * builtin[] = {
#if TERN_WITH_DEVICE_SIM
        sim_device_desc(),
#endif
#if TERN_WITH_DEVICE_VULKAN
        vk_device_desc(),
#endif
        NULL,
    };
    const int32_t n_builtin = (int32_t) (sizeof(builtin) / sizeof(builtin[0])) - 1;
    if (i < n_builtin) return builtin[i];
    i -= n_builtin;
    return i < __atomic_load_n(&g_n_registered, __ATOMIC_ACQUIRE) ? g_registered[i] : NULL;
}

bool desc_complete(const tern_hal_device_desc * d) {
    return d->name && d->name[0] && d->count && d->open && d->close && d->describe && d->get_caps && d->buffer_alloc &&
           d->buffer_free && d->buffer_host_ptr && d->copy_h2d && d->copy_d2h && d->copy_d2d && d->supports_op &&
           d->launch && d->synchronize;
}

tern_status open_instance(const tern_hal_device_desc * k, int32_t index, const char * params, hal_device * out) {
    memset(out, 0, sizeof(*out));
    TERN_TRY(k->open(index, params, &out->dev));
    out->desc = k;
    snprintf(out->name, sizeof(out->name), "%s%d", k->name, (int) index);
    k->get_caps(out->dev, &out->caps);
    // Optional parts the caps promise must be there; otherwise they are off.
    if (!k->event_create || !k->event_destroy || !k->event_record || !k->event_wait) out->caps.events = 0;
    if (!k->capture_begin || !k->capture_end || !k->replay || !k->graph_release) out->caps.capture = 0;
    if (!k->buffer_import_host) out->caps.import_host = 0;
    if (out->caps.alignment == 0) out->caps.alignment = 64;
    return TERN_OK;
}

}  // namespace

const char * device_kinds(void) {
    size_t n = 0;
    g_kinds[0] = 0;
    for (int32_t i = 0; kind_at(i); i++) {
        n += (size_t) snprintf(g_kinds + n, sizeof(g_kinds) - n, "%s%s", i ? " " : "", kind_at(i)->name);
        if (n >= sizeof(g_kinds)) break;
    }
    return g_kinds[0] ? g_kinds : "none";
}

tern_status device_open(const char * spec, size_t len, hal_device * out) {
    const char * colon = (const char *) memchr(spec, ':', len);
    const size_t name_len = colon ? (size_t) (colon - spec) : len;
    char params[256];
    const size_t plen = colon ? len - name_len - 1 : 0;
    if (plen >= sizeof(params)) return tern_fail(TERN_ERR_INVALID_ARG, "device '%.*s': parameters too long", (int) len, spec);
    memcpy(params, colon ? colon + 1 : "", plen);
    params[plen] = 0;
    // NAME = kind + optional index
    size_t k = name_len;
    while (k > 0 && spec[k - 1] >= '0' && spec[k - 1] <= '9') k--;
    int32_t index = 0;
    if (k < name_len) {
        if (name_len - k > 3) return tern_fail(TERN_ERR_INVALID_ARG, "device '%.*s': bad index", (int) name_len, spec);
        for (size_t i = k; i < name_len; i++) index = index * 10 + (spec[i] - '0');
    }
    for (int32_t i = 0; kind_at(i); i++) {
        const tern_hal_device_desc * kd = kind_at(i);
        if (strlen(kd->name) != k || memcmp(kd->name, spec, k) != 0) continue;
        tern_error_clear();
        const int32_t n = kd->count();
        if (index >= n) {
            // count() may have said why there are none (no driver): keep its line.
            char why[400];
            snprintf(why, sizeof(why), "%s", n == 0 ? tern_last_error() : "");
            return tern_fail(TERN_ERR_NOT_FOUND, "device '%.*s': %s has %d instance%s here%s%s", (int) name_len, spec, kd->name,
                             (int) n, n == 1 ? "" : "s", why[0] ? ": " : "", why);
        }
        tern_status st = open_instance(kd, index, params, out);
        if (st != TERN_OK) tern_error_prefix("device '%.*s': ", (int) name_len, spec);
        return st;
    }
    return tern_fail(TERN_ERR_NOT_FOUND, "no device '%.*s' (devices built in: %s)", (int) name_len, spec, device_kinds());
}

void device_close(hal_device * d) {
    if (d->desc && d->dev) d->desc->close(d->dev);
    memset(d, 0, sizeof(*d));
}

int32_t device_open_implicit(hal_device * out, int32_t n_max) {
    int32_t n = 0;
    for (int32_t i = 0; kind_at(i) && n < n_max; i++) {
        const tern_hal_device_desc * kd = kind_at(i);
        if (!kd->implicit) continue;
        const int32_t count = kd->count();
        for (int32_t j = 0; j < count && n < n_max; j++) {
            if (open_instance(kd, j, "", &out[n]) != TERN_OK) continue;
            if (out[n].caps.software) device_close(&out[n]);   // used only where --device names it
            else n++;
        }
    }
    tern_error_clear();
    return n;
}

}  // namespace hal
}  // namespace tern

using namespace tern;
using namespace tern::hal;

extern "C" tern_status tern_hal_register(const tern_hal_device_desc * desc) {
    if (!desc) return tern_fail(TERN_ERR_INVALID_ARG, "hal_register: NULL device table");
    if (desc->abi_version != TERN_HAL_ABI_VERSION) {
        return tern_fail(TERN_ERR_INVALID_ARG, "hal_register: ABI version %u, this build speaks %d", desc->abi_version,
                         TERN_HAL_ABI_VERSION);
    }
    if (!desc_complete(desc)) {
        return tern_fail(TERN_ERR_INVALID_ARG, "hal_register: '%s' lacks a required entry (tern_hal.h)", desc->name ? desc->name : "?");
    }
    const size_t n = strlen(desc->name);
    if (n >= 24 || desc->name[n - 1] < 'A' || (desc->name[n - 1] >= '0' && desc->name[n - 1] <= '9')) {
        return tern_fail(TERN_ERR_INVALID_ARG, "hal_register: name '%s' must be short and not end in a digit", desc->name);
    }
    for (int32_t i = 0; kind_at(i); i++) {
        if (strcmp(kind_at(i)->name, desc->name) == 0) {
            return tern_fail(TERN_ERR_INVALID_ARG, "hal_register: a device '%s' is registered already", desc->name);
        }
    }
    const int32_t at = __atomic_load_n(&g_n_registered, __ATOMIC_ACQUIRE);
    if (at >= TERN_MAX_DEVICE_KINDS) return tern_fail(TERN_ERR_NO_MEMORY, "hal_register: %d kinds at most", TERN_MAX_DEVICE_KINDS);
    g_registered[at] = desc;
    __atomic_store_n(&g_n_registered, at + 1, __ATOMIC_RELEASE);
    return TERN_OK;
}

extern "C" tern_status tern_hal_error(tern_status status, const char * fmt, ...) {
    char line[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    return tern_fail(status, "%s", line);
}

extern "C" int32_t tern_hal_list_devices(char (*names)[32], int32_t n) {
    int32_t total = 0;
    for (int32_t i = 0; kind_at(i); i++) {
        const tern_hal_device_desc * kd = kind_at(i);
        const int32_t count = kd->count();
        for (int32_t j = 0; j < count; j++, total++) {
            if (names && total < n) snprintf(names[total], 32, "%s%d", kd->name, (int) j);
        }
    }
    return total;
}

extern "C" tern_status tern_hal_describe_device(const char * name, char * buf, size_t size) {
    if (!name || !buf || size == 0) return tern_fail(TERN_ERR_INVALID_ARG, "hal_describe_device: NULL argument");
    hal_device d;
    const tern_status st = device_open(name, strlen(name), &d);
    if (st != TERN_OK) return st;
    snprintf(buf, size, "%s", d.desc->describe(d.dev));
    device_close(&d);
    return TERN_OK;
}
