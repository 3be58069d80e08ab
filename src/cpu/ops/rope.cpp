// ROPE_CACHE and ROPE, as ggml's rope (ggml_rope_cache_init / rope_yarn).
//
// Cache, per token with position p, for each pair i0 = 0, 2, .., n_rot - 2:
//   theta_extrap = p * theta_scale^(i0/2),  theta_scale = freq_base^(-2 / n_rot)
//                  (computed as a running product, like ggml)
//                  / factor[i0/2]   (RoPE frequency factors, when given: Llama 3's
//                                     rope_freqs, phi3's LongRoPE; ggml_rope_cache_init)
//   theta_interp = freq_scale * theta_extrap
//   theta        = theta_interp                                   (ext_factor == 0)
//                = theta_interp * (1 - ramp) + theta_extrap * ramp (YaRN, ramp =
//                  ext_factor * (1 - clamp((i0/2 - lo) / max(0.001, hi - lo), 0, 1)),
//                  [lo, hi] the correction dims of ggml_rope_yarn_corr_dims)
//   mscale       = attn_factor (* (1 + 0.1 ln(1 / freq_scale)) with YaRN)
//   cache[i0] = cos(theta) * mscale, cache[i0 + 1] = sin(theta) * mscale
// Rotation of a pair (x0, x1) by (c, s): (x0 c - x1 s, x0 s + x1 c); normal
// mode pairs (x[i0], x[i0 + 1]), neox mode (x[i0/2], x[i0/2 + n_rot/2]); dims
// from n_rot on are copied.
#include "cpu/ops/ops.h"

#include <math.h>
#include <string.h>

namespace tern {

// M_PI is POSIX, not C: newlib's strict modes lack it.
static const double kPi = 3.14159265358979323846;

// Dimension index whose wavelength makes n_rot_turns turns over n_ctx_orig positions.
static float yarn_corr_dim(int n_dims, int n_ctx_orig, float n_rot_turns, float base) {
    return n_dims * logf(n_ctx_orig / (n_rot_turns * 2 * (float) kPi)) / (2 * logf(base));
}

static void yarn_corr_dims(const tern_rope_params * p, float dims[2]) {
    const float start = floorf(yarn_corr_dim(p->n_rot, p->n_ctx_orig, p->beta_fast, p->freq_base));
    const float end = ceilf(yarn_corr_dim(p->n_rot, p->n_ctx_orig, p->beta_slow, p->freq_base));
    dims[0] = start > 0 ? start : 0;
    dims[1] = end < (float) (p->n_rot - 1) ? end : (float) (p->n_rot - 1);
}

static float yarn_ramp(float low, float high, int64_t i0) {
    const float diff = high - low > 0.001f ? high - low : 0.001f;
    const float y = (float) (i0 / 2 - low) / diff;
    return 1 - fminf(1.0f, fmaxf(0.0f, y));
}

void tern_op_rope_cache(const tern_op_ctx * c, tern_tensor * dst) {
    const tern_tensor * pos = dst->src[0];  // I32 [n_tokens]
    const float * factors = dst->src[1] ? (const float *) dst->src[1]->data : NULL;  // [n_rot/2] or NULL
    const tern_rope_params p = tg_rope_params(dst);
    const float theta_scale = powf(p.freq_base, -2.0f / (float) p.n_rot);
    float corr[2];
    yarn_corr_dims(&p, corr);
    float mscale = p.attn_factor;
    if (p.ext_factor != 0.0f) mscale *= 1.0f + 0.1f * logf(1.0f / p.freq_scale);

    int64_t t0, t1;
    tern_op_rows(c, dst->ne[1], &t0, &t1);
    for (int64_t t = t0; t < t1; t++) {
        int32_t position;
        memcpy(&position, (const uint8_t *) pos->data + t * pos->nb[0], sizeof(position));
        float * cache = (float *) tern_row_ptr(dst, t, 0, 0);
        float theta_extrap = (float) position;
        for (int64_t i0 = 0; i0 < p.n_rot; i0 += 2) {
            const float extrap = factors ? theta_extrap / factors[i0 / 2] : theta_extrap;
            const float theta_interp = p.freq_scale * extrap;
            float theta = theta_interp;
            if (p.ext_factor != 0.0f) {
                const float ramp_mix = yarn_ramp(corr[0], corr[1], i0) * p.ext_factor;
                theta = theta_interp * (1 - ramp_mix) + extrap * ramp_mix;
            }
            cache[i0] = cosf(theta) * mscale;
            cache[i0 + 1] = sinf(theta) * mscale;
            theta_extrap *= theta_scale;
        }
    }
}

void tern_op_rope(const tern_op_ctx * c, tern_tensor * dst) {
    const tern_tensor * x = dst->src[0];      // F32 [head_dim, n_head, n_tokens], maybe strided
    const tern_tensor * cache = dst->src[1];  // F32 [n_rot, n_tokens]
    const tern_rope_params p = tg_rope_params(dst);
    const int64_t head_dim = x->ne[0], n_head = x->ne[1];
    const int64_t n_rot = p.n_rot;
    // Offset of a pair's second element and the stride between pairs.
    const int64_t second = p.mode == TERN_ROPE_NEOX ? n_rot / 2 : 1;
    const int64_t pair_step = p.mode == TERN_ROPE_NEOX ? 1 : 2;

    int64_t r0, r1;
    tern_op_rows(c, n_head * x->ne[2], &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t h = r % n_head, t = r / n_head;
        const float * cs = (const float *) tern_row_ptr(cache, t, 0, 0);
        const float * src = (const float *) tern_row_ptr(x, h, t, 0);
        float * out = (float *) tern_row_ptr(dst, h, t, 0);
        for (int64_t i0 = 0; i0 < n_rot; i0 += 2) {
            const int64_t a = (i0 / 2) * pair_step;
            const float co = cs[i0], si = cs[i0 + 1];
            const float x0 = src[a], x1 = src[a + second];
            out[a] = x0 * co - x1 * si;
            out[a + second] = x0 * si + x1 * co;
        }
        for (int64_t i = n_rot; i < head_dim; i++) out[i] = src[i];
    }
}

}  // namespace tern
