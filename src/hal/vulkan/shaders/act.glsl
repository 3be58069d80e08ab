// The activation side of MUL_MAT: a weight of TYPE meets activations rounded
// as the CPU backend rounds them for that type's dot product (tensor/types.h
// vec_dot_type), so the device computes the same quantity the CPU does, in a
// different float order:
//   F32, F16 weights  fp32 activations as they are (ACT_F32)
//   BF16              activations rounded to bf16 (ACT_BF16)
//   Q4_0 Q5_0 Q8_0 IQ4_NL, Q4_1 Q5_1   Q8_0 / Q8_1 levels per 32 values:
//                     l = round-half-even(x * 127 / amax), value fp16(amax / 127) * l (ACT_Q8)
//   Q2_K .. Q6_K      Q8_K levels per 256 values: max the value of largest
//                     magnitude (the first), iscale = -127 / max,
//                     l = min(127, round-half-even(iscale * x)), value l / iscale (ACT_Q8K)
// A block holding a NaN or Inf gets scale NaN (levels 0): the NaN reaches the
// output as on the CPU. Needs BIND_F32(2, x, ...) (src1).
#if TYPE == TERN_F32 || TYPE == TERN_F16
#define ACT_F32 1
#define QKA 1
#elif TYPE == TERN_BF16
#define ACT_BF16 1
#define QKA 1
#elif TYPE == TERN_Q2_K || TYPE == TERN_Q3_K || TYPE == TERN_Q4_K || TYPE == TERN_Q5_K || TYPE == TERN_Q6_K
#define ACT_Q8K 1
#define QKA 256
#else
#define ACT_Q8 1
#define QKA 32
#endif

// Scan of n values from float index `at` of x: (amax, the first value of that
// magnitude, 1.0 if every value is finite else 0.0). Scans of consecutive
// pieces join in order (act_join: strict > keeps the first maximum), so a block
// may be scanned by several threads and give exactly the one-thread result.
vec3 act_join(vec3 a, vec3 b) { return vec3(b.x > a.x ? b.xy : a.xy, min(a.z, b.z)); }
vec3 act_scan8(float v[8]) {   // the scan of eight values in registers
    float amax = 0.0, mx = 0.0;
    bool ok = true;
    [[unroll]] for (uint u = 0u; u < 8u; u++) {
        ok = ok && finite(v[u]);
        if (abs(v[u]) > amax) {
            amax = abs(v[u]);
            mx = v[u];
        }
    }
    return vec3(amax, mx, ok ? 1.0 : 0.0);
}
// n is a multiple of 8: eight loads are issued together, then compared in order
// (one at a time, a long scan waited a memory latency per value).
vec3 act_scan(uint at, uint n) {
    vec3 sc = vec3(0.0, 0.0, 1.0);   // the scan of no values
    for (uint k0 = 0u; k0 < n; k0 += 8u) {
        float v[8];
        [[unroll]] for (uint u = 0u; u < 8u; u++) v[u] = x_f[at + k0 + u];
        sc = act_join(sc, act_scan8(v));
    }
    return sc;
}

// (id, d) of a block from its scan: id multiplies x into a level, d scales a level back.
// precise: a driver may otherwise rewrite 1 / (-127 / mx) as mx / -127 (lavapipe
// did in one shader and not in another), an ulp off the CPU's d now and then.
vec2 act_params_of(vec3 sc) {
    if (sc.z == 0.0) return vec2(0.0, uintBitsToFloat(0x7fc00000u));
#if ACT_Q8K
    if (sc.x == 0.0) return vec2(0.0);
    precise const float iscale = -127.0 / sc.y;
    precise const float d = 1.0 / iscale;
    return vec2(iscale, d);
#else
    precise const float id = 127.0 / sc.x;
    precise const float d = sc.x / 127.0;
    return vec2(sc.x != 0.0 ? id : 0.0, f16_round(d));
#endif
}

// (id, d) of the QKA values from byte `at` of x.
vec2 act_params(uint at) { return act_params_of(act_scan(at >> 2, uint(QKA))); }

// Q8_1 (Q4_1, Q5_1 weights): s = fp16(sum of the block's levels * amax / 127), the
// unrounded scale, as tensor/quants.h's quantize_act_q8_1 (q: act_params of the block).
float act_s(uint at, vec2 q) {
    if (q.x == 0.0) return q.y * 0.0;   // all levels 0 (NaN stays NaN)
    int sum = 0;
    float amax = 0.0;
    for (uint k0 = 0u; k0 < uint(QKA); k0 += 8u) {   // loads eight at a time, as act_scan
        float v[8];
        [[unroll]] for (uint u = 0u; u < 8u; u++) v[u] = x_f[(at >> 2) + k0 + u];
        [[unroll]] for (uint u = 0u; u < 8u; u++) {
            amax = max(amax, abs(v[u]));
            sum += int(roundEven(q.x * v[u]));
        }
    }
    precise const float s = float(sum) * (amax / 127.0);   // precise: as act_params_of
    return f16_round(s);
}

// One activation value as the dot product sees it (q: act_params of its block).
float act_value(float v, vec2 q) {
#if ACT_F32
    return v;
#elif ACT_BF16
    return uintBitsToFloat(f32_to_bf16_bits(v) << 16);
#elif ACT_Q8K
    return q.y * min(127.0, roundEven(q.x * v));
#else
    return q.y * roundEven(q.x * v);
#endif
}
