// tern.h's device entry points: where a model and a context run, and how.
#include "context/context.h"
#include "core/status.h"
#include "model/placement.h"
#include "tensor/types.h"

#include <stdio.h>
#include <string.h>

namespace tern {

namespace {

// The weight bytes of every weight of the model the host runs, with devices or not.
uint64_t host_weight_bytes(const tern_model * m) {
#if TERN_WITH_HAL
    if (m->devices) return m->devices->host_weight_bytes ? m->devices->host_weight_bytes : tern_model_size(m);
#endif
    return tern_model_size(m);
}

int32_t fill_model(const tern_model * m, tern_device_usage * out, int32_t n) {
    if (!m || m->vocab_only) return 0;
    int32_t count = 1;
#if TERN_WITH_HAL
    const model_devices * md = m->devices;
    if (md) count += md->n;
#endif
    for (int32_t i = 0; i < n && i < count; i++) memset(&out[i], 0, sizeof(out[i]));
    if (n > 0) {
        snprintf(out[0].name, sizeof(out[0].name), "CPU");
        out[0].weights = host_weight_bytes(m);
        out[0].layers = (int32_t) m->hp.n_layer;
        out[0].output = 1;
    }
#if TERN_WITH_HAL
    if (md && md->n > 0) {
        if (n > 0) {
            out[0].layers = 0;
            for (uint32_t il = 0; il < m->hp.n_layer; il++) out[0].layers += md->layer_device[il] < 0;
            out[0].output = md->layer_device[m->hp.n_layer] < 0;
        }
        for (int32_t d = 0; d < md->n && d + 1 < n; d++) {
            tern_device_usage * u = &out[d + 1];
            snprintf(u->name, sizeof(u->name), "%s", md->dev[d].name);
            u->weights = md->weight_bytes[d];
            u->layers = md->n_layers_on[d];
            u->output = md->layer_device[m->hp.n_layer] == d;
        }
    }
#endif
    return count;
}

}  // namespace

extern "C" int32_t tern_model_devices(const tern_model * model, tern_device_usage * out, int32_t n) {
    return fill_model(model, out, out ? n : 0);
}

extern "C" int32_t tern_context_devices(const tern_context * ctx, tern_device_usage * out, int32_t n) {
    if (!ctx) return 0;
    if (!out) n = 0;
    const int32_t count = fill_model(ctx->model, out, n);
    if (n > 0) {
        out[0].kv = ctx->kv_host.size;
        out[0].compute = ctx->activation_bytes + ctx->exec.work_size;
    }
#if TERN_WITH_HAL
    if (ctx->exec.hal) {
        const hal::hal_context * hc = ctx->exec.hal;
        if (n > 0 && hc->staging_dev < 0) out[0].compute += ctx->staging_bytes;
        for (int32_t d = 0; d < hc->n_dev && d + 1 < n; d++) {
            out[d + 1].kv = ctx->dev_kv_bytes[d];
            out[d + 1].compute = ctx->dev_act_bytes[d] + (hc->staging_dev == d ? ctx->staging_bytes : 0);
        }
    }
#endif
    return count;
}

extern "C" int32_t tern_model_layer_device(const tern_model * model, int32_t il) {
    if (!model || model->vocab_only || il < 0 || il > (int32_t) model->hp.n_layer) return -1;
#if TERN_WITH_HAL
    if (model->devices && model->devices->n > 0) return model->devices->layer_device[il] + 1;
#endif
    return 0;
}

extern "C" int32_t tern_context_describe(tern_context * ctx, char * buf, size_t size) {
    if (!ctx) {
        tern_fail(TERN_ERR_INVALID_ARG, "context is NULL");
        return -1;
    }
    if (!context_enter(ctx)) {
        tern_fail(TERN_ERR_BUSY, "context_describe: context is in use by another thread");
        return -1;
    }
    size_t n = 0;
    auto put = [&](const char * text) {
        const size_t k = strlen(text);
        if (buf && n < size) {
            const size_t c = k < size - n - 1 ? k : size - n - 1;
            memcpy(buf + n, text, c);
            buf[n + c] = 0;
        }
        n += k;
    };
    struct { const char * name; exec_plan * plan; int kind; bool small; } kinds[4] = {
        { "forward", &ctx->plan, 0, false }, { "forward (small batches)", &ctx->plan_small, 0, true },
        { "K-shift", &ctx->plan_shift, 1, false }, { "defrag", &ctx->plan_defrag, 2, false },
    };
    char line[256];
    // Where each layer and its cache run, as runs of layers.
    const tern_model * m = ctx->model;
    const int32_t n_layer = (int32_t) m->hp.n_layer;
    tern_device_usage u[TERN_MAX_DEVICES + 1];
    const int32_t n_dev = fill_model(m, u, TERN_MAX_DEVICES + 1);
    for (int part = 0; part < 2; part++) {
        put(part == 0 ? "layers:" : "KV caches:");
        int32_t il = 0;
        while (il < n_layer) {
            int32_t d = tern_model_layer_device(m, il);
#if TERN_WITH_HAL
            if (part == 1) d = ctx->kv_device[il] + 1;
#endif
            int32_t end = il + 1;
            while (end < n_layer) {
                int32_t e = tern_model_layer_device(m, end);
#if TERN_WITH_HAL
                if (part == 1) e = ctx->kv_device[end] + 1;
#endif
                if (e != d) break;
                end++;
            }
            snprintf(line, sizeof(line), " %.31s %d-%d", d >= 0 && d < n_dev ? u[d].name : "?", (int) il, (int) end - 1);
            put(line);
            il = end;
        }
        if (part == 0) {
            const int32_t d = tern_model_layer_device(m, n_layer);
            snprintf(line, sizeof(line), ", output %.31s; ", d >= 0 && d < n_dev ? u[d].name : "?");
            put(line);
        } else {
            put("\n");
        }
    }
    for (auto & k : kinds) {
        if (k.small && !ctx->offload_threshold) continue;
        tern_status st = TERN_OK;
        const tern_context_params * p = &ctx->params;
        if (k.kind == 0) {
            const uint32_t nt = k.small ? ctx->offload_threshold - 1 : p->n_batch;
            forward_shape worst = { nt, nt };
            st = forward_build(ctx->model, &ctx->kv, worst, &ctx->gb, &ctx->graph, &ctx->io);
        } else if (k.kind == 1) {
            st = forward_build_shift(ctx->model, &ctx->kv, p->n_ctx, &ctx->gb, &ctx->graph, &ctx->shift_io);
        } else {
            st = kv_defrag_build(&ctx->kv, p->n_ctx, &ctx->gb, &ctx->graph, &ctx->defrag_io);
        }
        if (st == TERN_OK) st = exec_bind(&ctx->exec, k.plan, &ctx->gb, &ctx->graph);
        if (st != TERN_OK) break;
        snprintf(line, sizeof(line), "%s graph: %d nodes, ", k.name, (int) ctx->graph.n_nodes);
        put(line);
#if TERN_WITH_HAL
        if (k.plan->sched) {
            const bool room = buf && n < size;
            n += (size_t) hal::sched_describe(ctx->exec.hal, k.plan->sched, &ctx->graph, room ? buf + n : NULL, room ? size - n : 0);
            continue;
        }
#endif
        put("1 split: CPU\n");
    }
    ctx->built_kind = GRAPH_NONE;
    context_leave(ctx);
    return (int32_t) n;
}

}  // namespace tern
