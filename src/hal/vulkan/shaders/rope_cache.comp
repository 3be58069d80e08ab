#version 450
// ROPE_CACHE (cpu/ops/rope.cpp): per token with position pos, for each pair
// i0 = 0, 2, ..: theta_extrap = pos * theta_scale^(i0/2) as a running product
// (the same float steps as the CPU), theta = freq_scale * theta_extrap, mixed
// with theta_extrap by the YaRN ramp when ext_factor != 0; (cos, sin)(theta) *
// mscale. The host computes theta_scale, the correction dims and mscale
// exactly as the CPU does. sin and cos are this shader's own (sincos below:
// within a few ulp of the C library's sinf/cosf the CPU calls, on every device;
// a device's built-in sin/cos may be far less accurate, lavapipe's is, and a
// model whose weights amplify small differences, as the std-0.08 test models
// do, shows it). One thread per token.
#include "common.glsl"
layout(local_size_x = 64) in;
BIND_F32(0, d, writeonly)
BIND_U32(1, pos, readonly)
layout(push_constant) uniform PC {
    uint o_d, o_p;
    uint n, n_rot, nb_p0, nb_d1;
    uint theta_scale, freq_scale, ext_factor, corr0, corr1, mscale;  // float bits
} p;

// (cos x, sin x) as Cephes' sinf/cosf: x reduced by octants, j = the even
// integer nearest x * 4 / pi, r = x - j * pi / 4 in three parts (exact products
// for |x| < 2^15, whole positions of any context), then a degree-7 (sin) or -8
// (cos) polynomial on [-pi/4, pi/4], the pair swapped and negated per quadrant.
vec2 sincos(float x) {
    const float ax = abs(x);
    uint j = uint(ax * 1.2732395447351628);       // 4 / pi
    j = (j + 1u) & ~1u;
    const float y = float(j);
    precise float r = ((ax - y * 0.78515625) - y * 2.4187564849853515625e-4) - y * 3.77489497744594108e-8;
    const float z = r * r;
    precise float s = ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
    precise float c = ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
    const uint q = (j >> 1) & 3u;                  // quadrant
    float sn = (q == 1u || q == 3u) ? c : s;
    float cn = (q == 1u || q == 3u) ? s : c;
    if (q == 2u || q == 3u) sn = -sn;
    if (q == 1u || q == 2u) cn = -cn;
    if (x < 0.0) sn = -sn;
    return vec2(cn, sn);
}

void main() {
    const uint t = gl_GlobalInvocationID.x;
    if (t >= p.n) return;
    const float theta_scale = uintBitsToFloat(p.theta_scale), freq_scale = uintBitsToFloat(p.freq_scale);
    const float ext = uintBitsToFloat(p.ext_factor), mscale = uintBitsToFloat(p.mscale);
    const float lo = uintBitsToFloat(p.corr0), hi = uintBitsToFloat(p.corr1);
    float theta_extrap = float(int(pos_w[(p.o_p + t * p.nb_p0) / 4u]));
    const uint out0 = (p.o_d + t * p.nb_d1) / 4u;
    for (uint i0 = 0u; i0 < p.n_rot; i0 += 2u) {
        const float theta_interp = freq_scale * theta_extrap;
        float theta = theta_interp;
        if (ext != 0.0) {
            const float y = (float(i0 / 2u) - lo) / max(0.001, hi - lo);
            const float ramp_mix = (1.0 - min(1.0, max(0.0, y))) * ext;
            theta = theta_interp * (1.0 - ramp_mix) + theta_extrap * ramp_mix;
        }
        const vec2 cs = sincos(theta);
        d_f[out0 + i0] = cs.x * mscale;
        d_f[out0 + i0 + 1u] = cs.y * mscale;
        theta_extrap *= theta_scale;
    }
}
