// Accelerator flags shared by tern run, tern chat and tern-bench (see device_flags.h).
#include "device_flags.h"

#include <stdlib.h>
#include <string.h>

#if TERN_WITH_HAL
#include "tern_hal.h"
#endif

const char * const cli_devices_help =
    "  -ngl, --n-gpu-layers N   the last N layers run on the devices (-1 or >= the layer count: all;\n"
    "                           the output layer follows the last one; default 0)\n"
    "  -dev, --device LIST      devices to use, comma-separated NAME[:PARAMS] (sim0, vulkan0, none);\n"
    "                           default: every accelerator present (never the sim device)\n"
    "  -ot, --override-tensor P=DEV  weights whose name matches the regex P go to DEV (a device\n"
    "                           or CPU); comma-separated or repeated, the first match wins\n"
    "  -ts, --tensor-split A,B  proportions of the offloaded layers per device (default: even)\n"
    "  -nkvo, --no-kv-offload   keep every layer's KV cache on the CPU\n"
    "  --no-op-offload          never move large matmuls of CPU weights to a device for prompts\n"
    "  --graph-cache N          captured device graphs kept (default 12; 0: capture off)\n"
    "  --list-devices           print the devices this build sees and exit\n";

static bool want_value(const char * cmd, int argc, char ** argv, int & i, const char *& v) {
    if (i + 1 >= argc) {
        fprintf(stderr, "%s: %s needs a value\n", cmd, argv[i]);
        return false;
    }
    v = argv[++i];
    return true;
}

static bool whole_int(const char * s, long long lo, long long hi, long long * out) {
    char * end = NULL;
    const long long v = strtoll(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool cli_device_flag(const char * cmd, int argc, char ** argv, int & i, cli_devices & d, bool * ok) {
    const char * a = argv[i];
    const char * v = NULL;
    *ok = true;
    if (!strcmp(a, "-ngl") || !strcmp(a, "--n-gpu-layers") || !strcmp(a, "--gpu-layers")) {
        *ok = want_value(cmd, argc, argv, i, v) && whole_int(v, -1, INT32_MAX, &d.ngl);
        if (v && !*ok) fprintf(stderr, "%s: %s: '%s' is not a layer count (-1 or more)\n", cmd, a, v);
    } else if (!strcmp(a, "-dev") || !strcmp(a, "--device")) {
        *ok = want_value(cmd, argc, argv, i, v);
        if (*ok) d.devices = v;
    } else if (!strcmp(a, "-ot") || !strcmp(a, "--override-tensor")) {
        *ok = want_value(cmd, argc, argv, i, v);
        // llama.cpp's list: PATTERN=DEV,PATTERN=DEV
        for (const char * p = v; *ok && p && *p;) {
            const char * comma = strchr(p, ',');
            const std::string one = comma ? std::string(p, comma) : std::string(p);
            if (one.find('=') == std::string::npos || one.front() == '=' || one.back() == '=') {
                fprintf(stderr, "%s: %s: '%s' is not PATTERN=DEVICE\n", cmd, a, one.c_str());
                *ok = false;
                break;
            }
            if (!d.overrides.empty()) d.overrides += ';';
            d.overrides += one;
            p = comma ? comma + 1 : NULL;
        }
    } else if (!strcmp(a, "-ts") || !strcmp(a, "--tensor-split")) {
        *ok = want_value(cmd, argc, argv, i, v);
        d.split.clear();
        for (const char * p = v; *ok && p && *p;) {
            char * end = NULL;
            const float f = strtof(p, &end);
            if (end == p || !(f >= 0.0f) || (*end && *end != ',' && *end != '/')) {
                fprintf(stderr, "%s: %s: '%s' is not a list of proportions (3,1)\n", cmd, a, v);
                *ok = false;
                break;
            }
            d.split.push_back(f);
            p = *end ? end + 1 : NULL;
        }
    } else if (!strcmp(a, "-nkvo") || !strcmp(a, "--no-kv-offload")) {
        d.nkvo = true;
    } else if (!strcmp(a, "--no-op-offload")) {
        d.no_op_offload = true;
    } else if (!strcmp(a, "--graph-cache")) {
        *ok = want_value(cmd, argc, argv, i, v) && whole_int(v, 0, 1 << 16, &d.graph_cache);
        if (v && !*ok) fprintf(stderr, "%s: %s: '%s' is not a count\n", cmd, a, v);
    } else if (!strcmp(a, "--list-devices")) {
        d.list = true;
    } else {
        return false;
    }
    return true;
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
