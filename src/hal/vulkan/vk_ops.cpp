// Ops: which shader runs a node, its bindings and push constants, and the
// dispatch (see vk_device.h and shaders/*.comp for each op's algorithm).
//
// A tensor is bound at its offset rounded down to minStorageBufferOffsetAlignment
// (the remainder goes to the shader as a byte offset) over the bytes its
// shape spans. A weight or table larger than one binding (maxStorageBufferRange,
// e.g. a 151936-row embedding on a 128 MiB device) is bound a window of rows
// at a time: one dispatch per window (MUL_MAT, GET_ROWS); supports_op refuses
// any other tensor that large.
#include "hal/vulkan/vk_internal.h"
#include "core/status.h"
#include "graph/graph.h"
#include "tensor/types.h"

#include <math.h>
#include <string.h>

namespace tern {
namespace hal {

namespace {

const uint32_t kMaxGroups = 65535;   // guaranteed maxComputeWorkGroupCount per dimension
const int64_t kVecMaxM = 2;          // mul_mat_vec.comp: activation rows (any K: it walks K in chunks)
const int64_t kVecRowsQ = 8;         // ... weight rows per workgroup, quantized weights (its R)
const int64_t kVecRowsF = 4;         // ... and float weights (its NR)

bool is_weight_type(int32_t t) {
    switch (t) {
        case TERN_TYPE_F32: case TERN_TYPE_F16: case TERN_TYPE_BF16: case TERN_TYPE_Q4_0: case TERN_TYPE_Q4_1:
        case TERN_TYPE_Q5_0: case TERN_TYPE_Q5_1: case TERN_TYPE_Q8_0: case TERN_TYPE_Q2_K: case TERN_TYPE_Q3_K:
        case TERN_TYPE_Q4_K: case TERN_TYPE_Q5_K: case TERN_TYPE_Q6_K: case TERN_TYPE_IQ4_NL: return true;
        default: return false;
    }
}

bool is_cache_type(int32_t t) {
    return t == TERN_TYPE_F32 || t == TERN_TYPE_F16 || t == TERN_TYPE_Q8_0 || t == TERN_TYPE_Q4_0;
}

// Shader ids of the per-type families (vk_shaders.h lists them in this type order).
int32_t type_slot(int32_t t) {
    static const int32_t order[] = { TERN_TYPE_F32, TERN_TYPE_F16, TERN_TYPE_BF16, TERN_TYPE_Q4_0, TERN_TYPE_Q4_1, TERN_TYPE_Q5_0,
                                     TERN_TYPE_Q5_1, TERN_TYPE_Q8_0, TERN_TYPE_Q2_K, TERN_TYPE_Q3_K, TERN_TYPE_Q4_K, TERN_TYPE_Q5_K,
                                     TERN_TYPE_Q6_K, TERN_TYPE_IQ4_NL };
    for (int32_t i = 0; i < (int32_t) (sizeof(order) / sizeof(order[0])); i++) if (order[i] == t) return i;
    return -1;
}

// Values per activation block of a weight type's dot product (act.glsl's QKA).
int64_t act_block(int32_t t) {
    if (t == TERN_TYPE_F32 || t == TERN_TYPE_F16 || t == TERN_TYPE_BF16) return 1;
    if (t >= TERN_TYPE_Q2_K && t <= TERN_TYPE_Q6_K) return 256;
    return 32;
}

size_t row_bytes(int32_t type, int64_t ne0) { return tern_row_size((tern_type) type, ne0); }

// Bytes a tensor's shape spans from its offset.
uint64_t span(const tern_hal_tensor & t) {
    for (int i = 0; i < 4; i++) if (t.ne[i] <= 0) return 0;
    uint64_t s = row_bytes(t.type, t.ne[0]);
    for (int i = 1; i < 4; i++) s += (uint64_t) (t.ne[i] - 1) * t.nb[i];
    return s;
}

int64_t nrows(const tern_hal_tensor & t) { return t.ne[1] * t.ne[2] * t.ne[3]; }
bool present(const tern_hal_tensor & t) { return t.type != TERN_HAL_TYPE_NONE; }
uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

// A binding: buffer, offset rounded down, range; rem: the offset's remainder (the shader's o_*).
struct binding {
    tern_hal_buffer * buf;
    uint64_t          off, range;
    bool              write;
};

binding bind_bytes(vk_device * d, tern_hal_buffer * b, uint64_t offset, uint64_t bytes, bool write, uint32_t * rem) {
    binding r;
    r.buf = b;
    r.off = offset / d->bind_align * d->bind_align;
    *rem = (uint32_t) (offset - r.off);
    r.range = (*rem + bytes + 3) / 4 * 4;
    if (r.range == 0) r.range = 4;
    if (r.off + r.range > b->alloc) r.range = b->alloc - r.off;
    r.write = write;
    return r;
}

binding bind(vk_device * d, const tern_hal_tensor & t, bool write, uint32_t * rem) {
    return bind_bytes(d, t.buffer, t.offset, span(t), write, rem);
}

binding none(vk_device * d) {
    binding r = { d->dummy, 0, d->dummy->alloc, false };
    return r;
}

// ---- pipelines ---------------------------------------------------------------

tern_status pipeline(vk_device * d, int32_t id, VkPipeline * out) {
    if (d->pipe[id]) {
        *out = d->pipe[id];
        return TERN_OK;
    }
    vk_fns * f = &d->f;
    VkShaderModuleCreateInfo mi = {};
    mi.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    mi.codeSize = vk_spirv_table[id].bytes;
    mi.pCode = vk_spirv_table[id].words;
    VkShaderModule mod = VK_NULL_HANDLE;
    TERN_TRY(vk_check(d, f->vkCreateShaderModule(d->device, &mi, NULL, &mod), "vkCreateShaderModule"));
    VkComputePipelineCreateInfo ci = {};
    ci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = mod;
    ci.stage.pName = "main";
    ci.layout = d->layout;
    const VkResult r = f->vkCreateComputePipelines(d->device, VK_NULL_HANDLE, 1, &ci, NULL, &d->pipe[id]);
    f->vkDestroyShaderModule(d->device, mod, NULL);
    if (r != VK_SUCCESS) {
        d->pipe[id] = VK_NULL_HANDLE;
        TERN_TRY(vk_check(d, r, "vkCreateComputePipelines"));
        tern_error_prefix("shader %s: ", vk_spirv_table[id].name);
    }
    *out = d->pipe[id];
    return TERN_OK;
}

// One dispatch: n groups (spread over x and y past 65535), bindings, push constants.
tern_status dispatch(vk_device * d, int32_t shader, const binding * b, int32_t nb, const uint32_t * pc, uint64_t n,
                     uint32_t gy_fixed = 0) {
    if (n == 0) return TERN_OK;
    VkPipeline pipe = VK_NULL_HANDLE;
    TERN_TRY(pipeline(d, shader, &pipe));
    vk_cmd * c = NULL;
    TERN_TRY(vk_recorder(d, &c));
    if (!c) return TERN_OK;   // a failed capture records nothing (the core runs the split eagerly)
    if (c->n_sets >= c->max_sets) {   // only a capture gets here full
        d->capture_failed = true;
        return TERN_OK;
    }
    vk_access acc[VK_BINDINGS];
    VkDescriptorBufferInfo info[VK_BINDINGS];
    for (int32_t i = 0; i < VK_BINDINGS; i++) {
        const binding x = i < nb && b[i].buf ? b[i] : none(d);
        info[i] = { x.buf->buf, x.off, x.range };
        acc[i] = { x.buf->buf, x.off, x.range, x.write, false };
    }
    vk_hazard(d, c, acc, VK_BINDINGS);
    VkDescriptorSet set = VK_NULL_HANDLE;
    TERN_TRY(vk_alloc_set(d, c, &set));
    VkWriteDescriptorSet w[VK_BINDINGS];
    for (int32_t i = 0; i < VK_BINDINGS; i++) {
        w[i] = {};
        w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        w[i].dstSet = set;
        w[i].dstBinding = (uint32_t) i;
        w[i].descriptorCount = 1;
        w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w[i].pBufferInfo = &info[i];
    }
    vk_fns * f = &d->f;
    f->vkUpdateDescriptorSets(d->device, VK_BINDINGS, w, 0, NULL);
    f->vkCmdBindPipeline(c->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    f->vkCmdBindDescriptorSets(c->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d->layout, 0, 1, &set, 0, NULL);
    f->vkCmdPushConstants(c->cmd, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, VK_PUSH_WORDS * 4, pc);
    uint32_t gx, gy;
    if (gy_fixed) {
        gx = (uint32_t) n;
        gy = gy_fixed;
    } else {
        gx = n < kMaxGroups ? (uint32_t) n : kMaxGroups;
        gy = (uint32_t) ((n + gx - 1) / gx);
    }
    f->vkCmdDispatch(c->cmd, gx, gy, 1);
    if (d->profile && !d->capturing) vk_profile_mark(d, c, shader);
    c->has_work = true;
    (d->capturing ? d->capturing->rec : d->counters).launches++;
    return TERN_OK;
}

// ---- op by op ----------------------------------------------------------------------

bool f32(const tern_hal_tensor & t) { return t.type == TERN_TYPE_F32 && t.nb[0] == 4; }
bool i32(const tern_hal_tensor & t) { return t.type == TERN_TYPE_I32; }
bool fits(vk_device * d, const tern_hal_tensor & t) { return span(t) + d->bind_align <= d->max_binding; }
bool fits_u32(const tern_hal_tensor & t) {
    for (int i = 0; i < 4; i++) if (t.nb[i] > 0xffffffffull || t.ne[i] > 0x7fffffff) return false;
    return true;
}
bool rows_even(const tern_hal_tensor & t) { return row_bytes(t.type, t.ne[0]) % 2 == 0 && t.nb[1] % 2 == 0; }

// Rows of a weight / table (row stride nb1) per binding window.
int64_t window_rows(vk_device * d, const tern_hal_tensor & w) {
    const uint64_t room = d->max_binding > d->bind_align ? d->max_binding - d->bind_align : d->max_binding;
    const int64_t rows = (int64_t) (room / (w.nb[1] ? w.nb[1] : 1));
    return rows < w.ne[1] ? rows : w.ne[1];
}

tern_status op_get_rows(vk_device * d, const tern_hal_op_desc * op) {
    const tern_hal_tensor & t = op->src[0], & ids = op->src[1], & dst = op->dst;
    const int64_t win = window_rows(d, t);
    for (int64_t r0 = 0; r0 < t.ne[1]; r0 += win) {
        const int64_t rows = t.ne[1] - r0 < win ? t.ne[1] - r0 : win;
        uint32_t pc[VK_PUSH_WORDS] = {0};
        binding b[3];
        b[0] = bind(d, dst, true, &pc[0]);
        b[1] = bind_bytes(d, t.buffer, t.offset + (uint64_t) r0 * t.nb[1], (uint64_t) rows * t.nb[1], false, &pc[1]);
        b[2] = bind(d, ids, false, &pc[2]);
        pc[3] = (uint32_t) t.ne[0];
        pc[4] = (uint32_t) t.ne[1];
        pc[5] = (uint32_t) t.nb[1];
        pc[6] = (uint32_t) ids.nb[0];
        pc[7] = (uint32_t) dst.nb[1];
        pc[8] = (uint32_t) dst.ne[1];
        pc[9] = (uint32_t) r0;
        pc[10] = (uint32_t) (r0 + rows);
        pc[11] = r0 == 0;
        TERN_TRY(dispatch(d, VKS_get_rows_F32 + type_slot(t.type), b, 3, pc, (uint64_t) dst.ne[1]));
    }
    return TERN_OK;
}

bool mul_mat_vec(int64_t M) { return M <= kVecMaxM; }

// The tiled path with integer dot products (mul_mat_idot.comp, the same results):
// its shader for weights of this type where the device runs it, else -1.
int32_t idot_shader(vk_device * d, int32_t type) {
    if (!d->use_int_dot) return -1;
    switch (type) {
        case TERN_TYPE_Q4_0: return VKS_mul_mat_idot_Q4_0;
        case TERN_TYPE_Q4_1: return VKS_mul_mat_idot_Q4_1;
        case TERN_TYPE_Q5_0: return VKS_mul_mat_idot_Q5_0;
        case TERN_TYPE_Q5_1: return VKS_mul_mat_idot_Q5_1;
        case TERN_TYPE_Q8_0: return VKS_mul_mat_idot_Q8_0;
        case TERN_TYPE_Q2_K: return VKS_mul_mat_idot_Q2_K;
        case TERN_TYPE_Q3_K: return VKS_mul_mat_idot_Q3_K;
        case TERN_TYPE_Q4_K: return VKS_mul_mat_idot_Q4_K;
        case TERN_TYPE_Q5_K: return VKS_mul_mat_idot_Q5_K;
        case TERN_TYPE_Q6_K: return VKS_mul_mat_idot_Q6_K;
        default: return -1;   // float weights, IQ4_NL (its 4-value lanes): mul_mat.comp
    }
}

// Activation rows per dispatch: all of them, or as many as keep X and dst
// (a vocabulary-wide output of a 512-token prompt: 311 MB at 151936 rows) within
// one binding each; X is then 2-D (supports_op).
int64_t mul_mat_rows(vk_device * d, const tern_hal_op_desc * op) {
    const tern_hal_tensor & x = op->src[1], & dst = op->dst;
    const int64_t M = nrows(x);
    if (fits(d, x) && fits(d, dst)) return M;
    const uint64_t room = d->max_binding - d->bind_align;
    const uint64_t per = (x.nb[1] > dst.nb[1] ? x.nb[1] : dst.nb[1]);
    const int64_t rows = (int64_t) (room / (per ? per : 1));
    return rows < M ? rows : M;
}

tern_status op_mul_mat(vk_device * d, const tern_hal_op_desc * op) {
    const tern_hal_tensor & w = op->src[0], & x = op->src[1], & bias = op->src[2], & dst = op->dst;
    const int64_t K = w.ne[0], N = w.ne[1], M = nrows(x);
    const int64_t mc = mul_mat_rows(d, op);
    const int64_t win = window_rows(d, w);
    for (int64_t m0 = 0; m0 < M; m0 += mc) {
        const int64_t rows_m = M - m0 < mc ? M - m0 : mc;
        const bool chunked = rows_m != M;   // X is 2-D then: rows m0 .. m0 + rows_m at stride nb1
        const bool vec = mul_mat_vec(rows_m);
        const int32_t idot = idot_shader(d, w.type);
        const int32_t shader = vec ? VKS_mul_mat_vec_F32 + type_slot(w.type) : idot >= 0 ? idot : VKS_mul_mat_F32 + type_slot(w.type);
        for (int64_t n0 = 0; n0 < N; n0 += win) {
            const int64_t rows = N - n0 < win ? N - n0 : win;
            uint32_t pc[VK_PUSH_WORDS] = {0};
            binding b[4];
            b[0] = chunked ? bind_bytes(d, dst.buffer, dst.offset + (uint64_t) m0 * dst.nb[1], (uint64_t) rows_m * dst.nb[1], true, &pc[0])
                           : bind(d, dst, true, &pc[0]);
            b[1] = bind_bytes(d, w.buffer, w.offset + (uint64_t) n0 * w.nb[1], (uint64_t) rows * w.nb[1], false, &pc[1]);
            b[2] = chunked ? bind_bytes(d, x.buffer, x.offset + (uint64_t) m0 * x.nb[1],
                                        (uint64_t) (rows_m - 1) * x.nb[1] + (uint64_t) K * 4, false, &pc[2])
                           : bind(d, x, false, &pc[2]);
            b[3] = present(bias) ? bind(d, bias, false, &pc[3]) : none(d);
            pc[4] = (uint32_t) K;
            pc[5] = (uint32_t) N;
            pc[6] = (uint32_t) n0;
            pc[7] = (uint32_t) rows;
            pc[8] = (uint32_t) rows_m;
            pc[9] = (uint32_t) (chunked ? rows_m : x.ne[1]);
            pc[10] = (uint32_t) (chunked ? 1 : x.ne[2]);
            pc[11] = (uint32_t) x.nb[1];
            pc[12] = (uint32_t) x.nb[2];
            pc[13] = (uint32_t) x.nb[3];
            pc[14] = (uint32_t) w.nb[1];
            pc[15] = present(bias);
            if (vec) {
                const int64_t per = act_block(w.type) > 1 ? kVecRowsQ : kVecRowsF;
                TERN_TRY(dispatch(d, shader, b, 4, pc, (uint64_t) ((rows + per - 1) / per)));
            } else {   // tiles of 64 x 64 (IQ4_NL: 32 x 32), mul_mat.comp's T
                const int64_t t = w.type == TERN_TYPE_IQ4_NL ? 32 : 64;
                TERN_TRY(dispatch(d, shader, b, 4, pc, (uint64_t) ((rows + t - 1) / t), (uint32_t) ((rows_m + t - 1) / t)));
            }
        }
    }
    return TERN_OK;
}

tern_status op_rms_norm(vk_device * d, const tern_hal_op_desc * op) {
    const tern_hal_tensor & x = op->src[0], & w = op->src[1], & dst = op->dst;
    uint32_t pc[VK_PUSH_WORDS] = {0};
    binding b[3];
    b[0] = bind(d, dst, true, &pc[0]);
    b[1] = bind(d, x, false, &pc[1]);
    b[2] = present(w) ? bind(d, w, false, &pc[2]) : none(d);
    pc[3] = (uint32_t) x.ne[0];
    pc[4] = (uint32_t) x.ne[1];
    pc[5] = (uint32_t) x.ne[2];
    pc[6] = (uint32_t) nrows(x);
    pc[7] = (uint32_t) x.nb[1];
    pc[8] = (uint32_t) x.nb[2];
    pc[9] = (uint32_t) x.nb[3];
    pc[10] = (uint32_t) dst.nb[1];
    pc[11] = (uint32_t) dst.nb[2];
    pc[12] = (uint32_t) dst.nb[3];
    pc[13] = present(w);
    pc[14] = (uint32_t) op->params[0];
    return dispatch(d, VKS_rms_norm, b, 3, pc, (uint64_t) nrows(x));
}

// ADD (0), MUL (1), SCALE (2), SWIGLU (3).
tern_status op_eltwise(vk_device * d, const tern_hal_op_desc * op, uint32_t kind) {
    const tern_hal_tensor & a = op->src[0], & dst = op->dst;
    const tern_hal_tensor & bt = kind == 2 ? a : op->src[1];
    uint32_t pc[VK_PUSH_WORDS] = {0};
    binding b[3];
    b[0] = bind(d, dst, true, &pc[0]);
    b[1] = bind(d, a, false, &pc[1]);
    b[2] = kind == 2 ? none(d) : bind(d, bt, false, &pc[2]);
    for (int i = 0; i < 4; i++) pc[3 + i] = (uint32_t) a.ne[i];
    for (int i = 1; i < 4; i++) pc[6 + i] = (uint32_t) a.nb[i];
    for (int i = 0; i < 4; i++) pc[10 + i] = (uint32_t) bt.ne[i];
    for (int i = 1; i < 4; i++) pc[13 + i] = (uint32_t) bt.nb[i];
    for (int i = 1; i < 4; i++) pc[16 + i] = (uint32_t) dst.nb[i];
    pc[20] = kind;
    pc[21] = (uint32_t) op->params[0];
    const uint64_t n = (uint64_t) a.ne[0] * (uint64_t) nrows(a);
    return dispatch(d, VKS_eltwise, b, 3, pc, (n + 63) / 64);
}

tern_status op_argmax(vk_device * d, const tern_hal_op_desc * op) {
    const tern_hal_tensor & x = op->src[0], & dst = op->dst;
    uint32_t pc[VK_PUSH_WORDS] = {0};
    binding b[2];
    b[0] = bind(d, dst, true, &pc[0]);
    b[1] = bind(d, x, false, &pc[1]);
    pc[2] = (uint32_t) x.ne[0];
    pc[3] = (uint32_t) x.ne[1];
    pc[4] = (uint32_t) x.ne[2];
    pc[5] = (uint32_t) nrows(x);
    pc[6] = (uint32_t) x.nb[1];
    pc[7] = (uint32_t) x.nb[2];
    pc[8] = (uint32_t) x.nb[3];
    return dispatch(d, VKS_argmax, b, 2, pc, (uint64_t) nrows(x));
}

tern_hal_rope_params rope_params(const tern_hal_op_desc * op) {
    tern_hal_rope_params p;
    memcpy(&p, op->params, sizeof(p));
    return p;
}

// As cpu/ops/rope.cpp's yarn_corr_dims, in the same float operations.
float corr_dim(int n_dims, int n_ctx_orig, float n_rot_turns, float base) {
    return n_dims * logf(n_ctx_orig / (n_rot_turns * 2 * (float) 3.14159265358979323846)) / (2 * logf(base));
}

tern_status op_rope_cache(vk_device * d, const tern_hal_op_desc * op) {
    const tern_hal_tensor & pos = op->src[0], & dst = op->dst;
    const tern_hal_rope_params p = rope_params(op);
    const float theta_scale = powf(p.freq_base, -2.0f / (float) p.n_rot);
    const float start = floorf(corr_dim(p.n_rot, p.n_ctx_orig, p.beta_fast, p.freq_base));
    const float end = ceilf(corr_dim(p.n_rot, p.n_ctx_orig, p.beta_slow, p.freq_base));
    const float corr0 = start > 0 ? start : 0, corr1 = end < (float) (p.n_rot - 1) ? end : (float) (p.n_rot - 1);
    float mscale = p.attn_factor;
    if (p.ext_factor != 0.0f) mscale *= 1.0f + 0.1f * logf(1.0f / p.freq_scale);
    uint32_t pc[VK_PUSH_WORDS] = {0};
    binding b[2];
    b[0] = bind(d, dst, true, &pc[0]);
    b[1] = bind(d, pos, false, &pc[1]);
    pc[2] = (uint32_t) dst.ne[1];
    pc[3] = (uint32_t) p.n_rot;
    pc[4] = (uint32_t) pos.nb[0];
    pc[5] = (uint32_t) dst.nb[1];
    pc[6] = fbits(theta_scale);
    pc[7] = fbits(p.freq_scale);
    pc[8] = fbits(p.ext_factor);
    pc[9] = fbits(corr0);
    pc[10] = fbits(corr1);
    pc[11] = fbits(mscale);
    return dispatch(d, VKS_rope_cache, b, 2, pc, (uint64_t) ((dst.ne[1] + 63) / 64));
}

tern_status op_rope(vk_device * d, const tern_hal_op_desc * op) {
    const tern_hal_tensor & x = op->src[0], & cache = op->src[1], & dst = op->dst;
    const tern_hal_rope_params p = rope_params(op);
    uint32_t pc[VK_PUSH_WORDS] = {0};
    binding b[3];
    b[0] = bind(d, dst, true, &pc[0]);
    b[1] = bind(d, x, false, &pc[1]);
    b[2] = bind(d, cache, false, &pc[2]);
    pc[3] = (uint32_t) x.ne[0];
    pc[4] = (uint32_t) x.ne[1];
    pc[5] = (uint32_t) (x.ne[1] * x.ne[2]);
    pc[6] = (uint32_t) p.n_rot;
    pc[7] = p.mode == 2;
    pc[8] = (uint32_t) x.nb[1];
    pc[9] = (uint32_t) x.nb[2];
    pc[10] = (uint32_t) cache.nb[1];
    pc[11] = (uint32_t) dst.nb[1];
    pc[12] = (uint32_t) dst.nb[2];
    return dispatch(d, VKS_rope, b, 3, pc, (uint64_t) (x.ne[1] * x.ne[2]));
}

// Raw rows: scatter (SET_ROWS of the destination's type) or gather (COPY_ROWS).
tern_status op_copy_rows(vk_device * d, const tern_hal_tensor & dst, const tern_hal_tensor & src, const tern_hal_tensor & idx,
                         int64_t n, int64_t n_slots, bool gather) {
    uint32_t pc[VK_PUSH_WORDS] = {0};
    binding b[3];
    b[0] = bind(d, dst, true, &pc[0]);
    b[1] = bind(d, src, false, &pc[1]);
    b[2] = bind(d, idx, false, &pc[2]);
    pc[3] = (uint32_t) row_bytes(src.type, src.ne[0]);
    pc[4] = (uint32_t) n_slots;
    pc[5] = (uint32_t) dst.nb[1];
    pc[6] = (uint32_t) src.nb[1];
    pc[7] = (uint32_t) idx.nb[0];
    pc[8] = (uint32_t) n;
    pc[9] = gather;
    return dispatch(d, VKS_copy_rows, b, 3, pc, (uint64_t) n);
}

int32_t set_rows_shader(int32_t type) {
    switch (type) {
        case TERN_TYPE_F32: return VKS_set_rows_F32;
        case TERN_TYPE_F16: return VKS_set_rows_F16;
        case TERN_TYPE_Q8_0: return VKS_set_rows_Q8_0;
        case TERN_TYPE_Q4_0: return VKS_set_rows_Q4_0;
        default: return -1;
    }
}

tern_status op_set_rows(vk_device * d, const tern_hal_op_desc * op) {
    const tern_hal_tensor & target = op->src[0], & rows = op->src[1], & idx = op->src[2];
    const tern_hal_tensor & dst = op->dst;   // the target's bytes
    if (rows.type == target.type) return op_copy_rows(d, dst, rows, idx, rows.ne[1], dst.ne[1], false);
    uint32_t pc[VK_PUSH_WORDS] = {0};
    binding b[3];
    b[0] = bind(d, dst, true, &pc[0]);
    b[1] = bind(d, rows, false, &pc[1]);
    b[2] = bind(d, idx, false, &pc[2]);
    pc[3] = (uint32_t) rows.ne[0];
    pc[4] = (uint32_t) dst.ne[1];
    pc[5] = (uint32_t) dst.nb[1];
    pc[6] = (uint32_t) rows.nb[1];
    pc[7] = (uint32_t) idx.nb[0];
    pc[8] = (uint32_t) rows.ne[1];
    return dispatch(d, set_rows_shader(target.type), b, 3, pc, (uint64_t) rows.ne[1]);
}

bool quantized_cache(int32_t t) { return t == TERN_TYPE_Q8_0 || t == TERN_TYPE_Q4_0; }

// attn_<K>_<V> variants (vulkan.cmake's order: F16 F32 Q8_0 Q4_0, K outer).
int32_t cache_slot(int32_t t) { return t == TERN_TYPE_F16 ? 0 : t == TERN_TYPE_F32 ? 1 : t == TERN_TYPE_Q8_0 ? 2 : 3; }
// Prompts over an F16 cache with even head sizes up to 128: attn_tile (16
// tokens a workgroup, K and V tiles shared); otherwise attn.comp (a token a workgroup).
bool attn_tiled(const tern_hal_op_desc * op) {
    const tern_hal_tensor & q = op->src[0], & dst = op->dst;
    const int64_t hd = q.ne[0], hd_v = dst.ne[0] / q.ne[1];
    return q.ne[2] > 1 && op->src[1].type == TERN_TYPE_F16 && op->src[2].type == TERN_TYPE_F16 && hd % 2 == 0 && hd <= 128 &&
           hd_v % 2 == 0 && hd_v <= 128;
}
const int64_t kAttnTileTokens = 16;   // attn_tile.comp's TQ

int32_t attn_shader(const tern_hal_op_desc * op) {   // attn.comp's variant for the op's K and V types
    return VKS_attn_F16_F16 + 4 * cache_slot(op->src[1].type) + cache_slot(op->src[2].type);
}

tern_status op_attn(vk_device * d, const tern_hal_op_desc * op) {
    const tern_hal_tensor & q = op->src[0], & k = op->src[1], & v = op->src[2], & mask = op->src[3], & bounds = op->src[4];
    const tern_hal_tensor & dst = op->dst;
    const int64_t hd = q.ne[0], n_head = q.ne[1], n_tokens = q.ne[2];
    const bool kq = quantized_cache(k.type), vq = quantized_cache(v.type);
    const int64_t n_kv = kq ? k.ne[1] : k.ne[2];
    const int64_t n_head_kv = kq ? k.ne[0] / hd : k.ne[1];
    uint32_t pc[VK_PUSH_WORDS] = {0};
    binding b[6];
    b[0] = bind(d, dst, true, &pc[0]);
    b[1] = bind(d, q, false, &pc[1]);
    b[2] = bind(d, k, false, &pc[2]);
    b[3] = bind(d, v, false, &pc[3]);
    b[4] = present(mask) ? bind(d, mask, false, &pc[4]) : none(d);
    b[5] = present(bounds) ? bind(d, bounds, false, &pc[5]) : none(d);
    pc[6] = (uint32_t) hd;
    pc[7] = (uint32_t) (dst.ne[0] / n_head);
    pc[8] = (uint32_t) n_head;
    pc[9] = (uint32_t) (n_head / n_head_kv);
    pc[10] = (uint32_t) n_kv;
    pc[11] = (uint32_t) q.nb[1];
    pc[12] = (uint32_t) q.nb[2];
    pc[13] = (uint32_t) k.type;
    pc[14] = (uint32_t) k.nb[1];
    pc[15] = (uint32_t) (kq ? 0 : k.nb[2]);
    pc[16] = (uint32_t) v.type;
    pc[17] = (uint32_t) v.nb[1];
    pc[18] = (uint32_t) (vq ? 0 : v.nb[2]);
    pc[19] = present(mask) ? (uint32_t) mask.nb[1] : 0;
    pc[20] = present(mask);
    pc[21] = present(bounds) ? (uint32_t) bounds.nb[0] : 0;
    pc[22] = present(bounds);
    pc[23] = (uint32_t) dst.nb[1];
    pc[24] = (uint32_t) op->params[0];
    pc[25] = (uint32_t) n_tokens;
    if (attn_tiled(op)) {
        return dispatch(d, VKS_attn_tile, b, 6, pc, (uint64_t) n_head, (uint32_t) ((n_tokens + kAttnTileTokens - 1) / kAttnTileTokens));
    }
    return dispatch(d, attn_shader(op), b, 6, pc, (uint64_t) n_head, (uint32_t) n_tokens);
}

// The shaders an op runs (for prepare), -1 terminated.
void shaders_of(vk_device * d, const tern_hal_op_desc * op, int32_t * ids) {
    int32_t n = 0;
    switch (op->op) {
        case TERN_HAL_OP_GET_ROWS: ids[n++] = VKS_get_rows_F32 + type_slot(op->src[0].type); break;
        case TERN_HAL_OP_MUL_MAT:
            // (a prepare without memory: both paths, either may run for a chunk of rows)
            ids[n++] = VKS_mul_mat_vec_F32 + type_slot(op->src[0].type);
            ids[n++] = VKS_mul_mat_F32 + type_slot(op->src[0].type);
            if (idot_shader(d, op->src[0].type) >= 0) ids[n++] = idot_shader(d, op->src[0].type);
            break;
        case TERN_HAL_OP_RMS_NORM: ids[n++] = VKS_rms_norm; break;
        case TERN_HAL_OP_ADD: case TERN_HAL_OP_MUL: case TERN_HAL_OP_SCALE: case TERN_HAL_OP_SWIGLU: ids[n++] = VKS_eltwise; break;
        case TERN_HAL_OP_ARGMAX: ids[n++] = VKS_argmax; break;
        case TERN_HAL_OP_ROPE_CACHE: ids[n++] = VKS_rope_cache; break;
        case TERN_HAL_OP_ROPE: ids[n++] = VKS_rope; break;
        case TERN_HAL_OP_SET_ROWS:
            ids[n++] = op->src[1].type == op->src[0].type ? VKS_copy_rows : set_rows_shader(op->src[0].type);
            break;
        case TERN_HAL_OP_COPY_ROWS: ids[n++] = VKS_copy_rows; break;
        case TERN_HAL_OP_ATTN:   // (both paths: a prepared shape may run with fewer tokens)
            ids[n++] = attn_shader(op);
            if (attn_tiled(op)) ids[n++] = VKS_attn_tile;
            break;
        default: break;
    }
    ids[n] = -1;
}

}  // namespace

int vk_supports_op(vk_device * d, const tern_hal_op_desc * op) {
    if (op->op < 0 || op->op >= 32 || d->refuse[op->op]) return 0;
    const tern_hal_tensor & dst = op->dst, & s0 = op->src[0], & s1 = op->src[1], & s2 = op->src[2];
    for (int i = 0; i < TERN_HAL_MAX_SRC; i++) {
        if (present(op->src[i]) && !fits_u32(op->src[i])) return 0;
    }
    if (!fits_u32(dst) || (op->op != TERN_HAL_OP_MUL_MAT && !fits(d, dst))) return 0;
    switch (op->op) {
        case TERN_HAL_OP_GET_ROWS:
            // a table of any size: bound a window of rows at a time; rows no larger than a window
            return is_weight_type(s0.type) && s0.layout == 0 && i32(s1) && f32(dst) && fits(d, s1) &&
                   s0.nb[1] + d->bind_align <= d->max_binding && s0.ne[2] == 1 && s0.ne[3] == 1;
        case TERN_HAL_OP_MUL_MAT: {
            if (!is_weight_type(s0.type) || s0.layout != 0 || !f32(s1) || !f32(dst) || s0.ne[2] != 1 || s0.ne[3] != 1) return 0;
            const tern_type_traits * tr = tern_type_traits_get((tern_type) s0.type);
            if (!tr || s0.ne[0] % tr->blck_size != 0 || s0.nb[1] != row_bytes(s0.type, s0.ne[0])) return 0;
            if (s0.ne[0] % act_block(s0.type) != 0 || s1.ne[0] != s0.ne[0]) return 0;
            // X or dst past a binding: chunks of activation rows, which needs a 2-D X and one row of each in a binding
            if ((!fits(d, s1) || !fits(d, dst)) &&
                (s1.ne[2] * s1.ne[3] != 1 || s1.nb[1] + d->bind_align > d->max_binding || dst.nb[1] + d->bind_align > d->max_binding)) {
                return 0;
            }
            if (dst.ne[0] != s0.ne[1] || dst.nb[1] != (uint64_t) dst.ne[0] * 4 || nrows(dst) != nrows(s1)) return 0;
            if (dst.nb[2] != dst.nb[1] * (uint64_t) dst.ne[1] || dst.nb[3] != dst.nb[2] * (uint64_t) dst.ne[2]) return 0;
            if (present(s2) && (!f32(s2) || s2.ne[0] != s0.ne[1])) return 0;
            return s0.nb[1] + d->bind_align <= d->max_binding;
        }
        case TERN_HAL_OP_RMS_NORM:
            return f32(s0) && f32(dst) && fits(d, s0) && (!present(s1) || (f32(s1) && s1.ne[0] >= s0.ne[0]));
        case TERN_HAL_OP_ADD: case TERN_HAL_OP_MUL: case TERN_HAL_OP_SWIGLU:
            if (!f32(s0) || !f32(s1) || !f32(dst) || !fits(d, s0) || !fits(d, s1)) return 0;
            for (int i = 0; i < 4; i++) if (s1.ne[i] <= 0 || s0.ne[i] % s1.ne[i] != 0) return 0;
            return op->op != TERN_HAL_OP_SWIGLU || memcmp(s0.ne, s1.ne, sizeof(s0.ne)) == 0;
        case TERN_HAL_OP_SCALE: return f32(s0) && f32(dst) && fits(d, s0);
        case TERN_HAL_OP_ARGMAX: return f32(s0) && i32(dst) && fits(d, s0);
        case TERN_HAL_OP_ROPE_CACHE: {
            const tern_hal_rope_params p = rope_params(op);
            // no shader divides by RoPE frequency factors (Llama 3, LongRoPE) yet: those stay on the CPU
            return i32(s0) && !present(s1) && f32(dst) && p.n_rot > 0 && p.n_rot % 2 == 0 && dst.ne[0] >= p.n_rot;
        }
        case TERN_HAL_OP_ROPE: {
            const tern_hal_rope_params p = rope_params(op);
            return f32(s0) && f32(s1) && f32(dst) && fits(d, s0) && fits(d, s1) && (p.mode == 0 || p.mode == 2) &&
                   p.n_rot <= s0.ne[0] && p.n_rot % 2 == 0;
        }
        case TERN_HAL_OP_SET_ROWS:
            if (!i32(s2) || !fits(d, s1) || !fits(d, s2)) return 0;
            if (s1.type == s0.type) return rows_even(s1) && rows_even(dst);
            return f32(s1) && set_rows_shader(s0.type) >= 0 &&
                   s1.ne[0] % tern_type_traits_get((tern_type) s0.type)->blck_size == 0;
        case TERN_HAL_OP_COPY_ROWS:
            return i32(s1) && fits(d, s0) && rows_even(s0) && rows_even(dst) && dst.type == s0.type;
        case TERN_HAL_OP_ATTN: {
            const tern_hal_tensor & k = s1, & v = s2, & mask = op->src[3], & bounds = op->src[4];
            if (!f32(s0) || !f32(dst) || !is_cache_type(k.type) || !is_cache_type(v.type)) return 0;
            if (op->params[1] != 0) return 0;  // soft-capped scores (gemma2): no shader yet, the CPU runs them
            if (!fits(d, s0) || !fits(d, k) || !fits(d, v)) return 0;
            if (present(mask) && (!f32(mask) || !fits(d, mask))) return 0;
            if (present(bounds) && !i32(bounds)) return 0;
            const int64_t hd = s0.ne[0], n_head = s0.ne[1];
            const int64_t n_head_kv = quantized_cache(k.type) ? k.ne[0] / hd : k.ne[1];
            if (hd > 512 || n_head_kv <= 0 || n_head % n_head_kv != 0 || dst.ne[0] % n_head != 0 || dst.ne[0] / n_head > 512) return 0;
            return n_head < (int64_t) kMaxGroups && s0.ne[2] < (int64_t) kMaxGroups;
        }
        default: return 0;
    }
}

tern_status vk_prepare(vk_device * d, const tern_hal_op_desc * op) {
    int32_t ids[6];
    shaders_of(d, op, ids);
    for (int32_t i = 0; ids[i] >= 0; i++) {
        VkPipeline p;
        TERN_TRY(pipeline(d, ids[i], &p));
    }
    return TERN_OK;
}

tern_status vk_launch(vk_device * d, const tern_hal_op_desc * op) {
    switch (op->op) {
        case TERN_HAL_OP_GET_ROWS: return op_get_rows(d, op);
        case TERN_HAL_OP_MUL_MAT: return op_mul_mat(d, op);
        case TERN_HAL_OP_RMS_NORM: return op_rms_norm(d, op);
        case TERN_HAL_OP_ADD: return op_eltwise(d, op, 0);
        case TERN_HAL_OP_MUL: return op_eltwise(d, op, 1);
        case TERN_HAL_OP_SCALE: return op_eltwise(d, op, 2);
        case TERN_HAL_OP_SWIGLU: return op_eltwise(d, op, 3);
        case TERN_HAL_OP_ARGMAX: return op_argmax(d, op);
        case TERN_HAL_OP_ROPE_CACHE: return op_rope_cache(d, op);
        case TERN_HAL_OP_ROPE: return op_rope(d, op);
        case TERN_HAL_OP_SET_ROWS: return op_set_rows(d, op);
        case TERN_HAL_OP_COPY_ROWS:
            return op_copy_rows(d, op->dst, op->src[0], op->src[1], op->dst.ne[1], op->src[0].ne[1], true);
        case TERN_HAL_OP_ATTN: return op_attn(d, op);
        default:
            return tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan%d: op %d not supported ('%s')", (int) d->index, (int) op->op,
                                  op->name ? op->name : "?");
    }
}

void vk_pipelines_free(vk_device * d) {
    for (int32_t i = 0; i < VKS_COUNT; i++) {
        if (d->pipe[i]) d->f.vkDestroyPipeline(d->device, d->pipe[i], NULL);
        d->pipe[i] = VK_NULL_HANDLE;
    }
}

}  // namespace hal
}  // namespace tern
