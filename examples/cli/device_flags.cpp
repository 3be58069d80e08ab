// Accelerator flags shared by tern run, tern chat and tern-bench (see device_flags.h).
#include "device_flags.h"

#include <stdlib.h>
#include <string.h>

#if TERN_WITH_HAL
#include "tern_hal.h"
#endif

void cli_devices_from_args(const cli_args & a, cli_devices * d) {
    d->ngl = a.num(O_NGL, -2);
    if (a.has(O_DEVICE)) d->devices = a.str(O_DEVICE);
    for (const std::string & v : a.items[O_OVERRIDE_TENSOR]) {  // llama.cpp's list: PATTERN=DEV,PATTERN=DEV
        for (size_t at = 0; at <= v.size();) {
            size_t comma = v.find(',', at);
            if (comma == std::string::npos) comma = v.size();
            if (!d->overrides.empty()) d->overrides += ';';
            d->overrides += v.substr(at, comma - at);
            at = comma + 1;
        }
    }
    if (a.has(O_TENSOR_SPLIT)) {  // the last -ts (checked by the table: numbers >= 0 between ',' or '/')
        d->split.clear();
        for (const char * p = a.str(O_TENSOR_SPLIT); p && *p;) {
            char * end = NULL;
            d->split.push_back(strtof(p, &end));
            p = *end ? end + 1 : NULL;
        }
    }
    d->nkvo = a.has(O_NKVO);
    d->no_op_offload = a.has(O_NO_OP_OFFLOAD);
    d->graph_cache = a.num(O_GRAPH_CACHE, -1);
    d->list = a.has(O_LIST_DEVICES);
}

void cli_devices_apply(const char * cmd, const cli_devices & d, tern_model_params * mp, tern_context_params * cp) {
#if TERN_WITH_HAL
    const bool none = d.devices == "none";
    mp->devices = d.devices.empty() || none ? NULL : d.devices.c_str();
    mp->n_gpu_layers = none || d.ngl == -2 ? 0 : (int32_t) d.ngl;
    if (!d.devices.empty() && !none && d.ngl == -2) {
        fprintf(stderr, "%s: --device without -ngl: no layer is offloaded (add -ngl 99 for all of them)\n", cmd);
    }
    mp->tensor_overrides = d.overrides.empty() ? NULL : d.overrides.c_str();
    mp->tensor_split = d.split.empty() ? NULL : d.split.data();
#else
    if (d.ngl > 0) fprintf(stderr, "%s: -ngl %lld: this build has no accelerator; every layer runs on the CPU\n", cmd, d.ngl);
    // A device list or overrides reach the library, which refuses them with the reason.
    mp->devices = d.devices.empty() || d.devices == "none" ? NULL : d.devices.c_str();
    mp->tensor_overrides = d.overrides.empty() ? NULL : d.overrides.c_str();
#endif
    if (cp) {
        cp->offload_kqv = !d.nkvo;
        cp->op_offload = !d.no_op_offload;
        cp->graph_cache = (int32_t) d.graph_cache;
    }
}

void cli_devices_loaded(const char * cmd, const cli_devices & d, const tern_model * m) {
#if TERN_WITH_HAL
    if (d.ngl != 0 && d.ngl != -2 && d.devices != "none" && tern_model_devices(m, NULL, 0) <= 1) {
        fprintf(stderr, "%s: -ngl %lld: no accelerator is present (the sim device and software drivers run only when --device names them); every "
                "layer runs on the CPU\n", cmd, d.ngl);
    }
#else
    (void) cmd; (void) d; (void) m;
#endif
}

void cli_list_devices(FILE * f) {
#if TERN_WITH_HAL
    char names[16][32];
    const int32_t n = tern_hal_list_devices(names, 16);
    if (n == 0) fprintf(f, "no devices%s%s\n", tern_last_error()[0] ? ": " : "", tern_last_error());
    for (int32_t i = 0; i < n && i < 16; i++) fprintf(f, "%s\n", names[i]);
#else
    fprintf(f, "no devices (this build has none: TERN_DEVICES)\n");
#endif
}

void cli_print_device_lines(FILE * f, const char * prefix) {
#if TERN_WITH_HAL
    char names[16][32];
    const int32_t n = tern_hal_list_devices(names, 16);
    for (int32_t i = 0; i < n && i < 16; i++) {
        char line[512];
        if (tern_hal_describe_device(names[i], line, sizeof(line)) == TERN_OK) fprintf(f, "%s%s\n", prefix, line);
        else fprintf(f, "%s%s: %s\n", prefix, names[i], tern_last_error());
    }
#else
    (void) f;
    (void) prefix;
#endif
}

void cli_print_model_devices(FILE * f, const tern_model * m) {
#if TERN_WITH_HAL
    tern_device_usage u[9];
    const int32_t n = tern_model_devices(m, u, 9);
    for (int32_t i = 1; i < n && i < 9; i++) {
        char line[512];
        if (tern_hal_describe_device(u[i].name, line, sizeof(line)) == TERN_OK) fprintf(f, "device: %s\n", line);
    }
#else
    (void) f;
    (void) m;
#endif
}

static void mib(char * buf, size_t n, uint64_t bytes) { snprintf(buf, n, "%.2f MiB", (double) bytes / (1024.0 * 1024.0)); }

void cli_print_placement(FILE * f, const tern_model * m, const tern_context * ctx) {
    tern_device_usage u[9];
    const int32_t n = ctx ? tern_context_devices(ctx, u, 9) : tern_model_devices(m, u, 9);
    if (n <= 1) return;  // the CPU alone: nothing to say
    const int32_t n_layer = tern_model_n_layer(m);
    int32_t off = 0, out = 0;
    for (int32_t i = 1; i < n && i < 9; i++) {
        off += u[i].layers;
        out |= u[i].output;
    }
    fprintf(f, "load: offloaded %d/%d layers to the devices%s\n", (int) (off + out), (int) (n_layer + 1), out ? " (the output layer too)" : "");
    for (int32_t i = 0; i < n && i < 9; i++) {
        char w[32], k[32], c[32];
        mib(w, sizeof(w), u[i].weights);
        mib(k, sizeof(k), u[i].kv);
        mib(c, sizeof(c), u[i].compute);
        if (ctx) fprintf(f, "load: %-8s %2d layers%s  weights %12s  KV %12s  compute %12s\n", u[i].name, (int) u[i].layers,
                         u[i].output ? " + output" : "         ", w, k, c);
        else fprintf(f, "load: %-8s %2d layers%s  weights %12s\n", u[i].name, (int) u[i].layers, u[i].output ? " + output" : "         ", w);
    }
}

void cli_print_layers(FILE * f, const tern_model * m) {
    tern_device_usage u[9];
    const int32_t n = tern_model_devices(m, u, 9);
    if (n <= 1) return;
    const int32_t n_layer = tern_model_n_layer(m);
    fprintf(f, "placement:       layers");
    for (int32_t il = 0; il < n_layer;) {
        const int32_t d = tern_model_layer_device(m, il);
        int32_t end = il + 1;
        while (end < n_layer && tern_model_layer_device(m, end) == d) end++;
        fprintf(f, " %s %d-%d", d >= 0 && d < n ? u[d].name : "?", (int) il, (int) end - 1);
        il = end;
    }
    const int32_t out = tern_model_layer_device(m, n_layer);
    fprintf(f, ", output %s\n", out >= 0 && out < n ? u[out].name : "?");
    for (int32_t i = 0; i < n && i < 9; i++) {
        char w[32];
        mib(w, sizeof(w), u[i].weights);
        fprintf(f, "                 %-8s %2d layers%s, weights %s\n", u[i].name, (int) u[i].layers, u[i].output ? " + output" : "", w);
    }
}
