// Shared by every Tern compute shader (src/hal/vulkan/shaders/*.comp).
//
// Bindings: 0 is the op's destination, 1..5 its sources src[0..4]. Each is a
// storage buffer bound at an offset the device rounded down to
// minStorageBufferOffsetAlignment; the push constants carry each tensor's
// remaining byte offset (o_*) and its byte strides, so a shader addresses
// bytes, not elements. Data of 8 and 16 bits is read through 16-bit storage
// (GL_EXT_shader_16bit_storage: every block field of every GGUF type sits at
// an even byte offset, so a 16-bit load never straddles a field) and
// converted to fp32 / int32 at once: no fp16 or int8 arithmetic is asked of
// the device.
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : enable

#define TERN_F32    0
#define TERN_F16    1
#define TERN_Q4_0   2
#define TERN_Q4_1   3
#define TERN_Q5_0   6
#define TERN_Q5_1   7
#define TERN_Q8_0   8
#define TERN_Q2_K   10
#define TERN_Q3_K   11
#define TERN_Q4_K   12
#define TERN_Q5_K   13
#define TERN_Q6_K   14
#define TERN_IQ4_NL 20
#define TERN_BF16   30

// Views of one binding: fp32 words, 16-bit halves, 32-bit words.
#define BIND_F32(b, name, q) layout(std430, binding = b) q buffer B##b##f { float name##_f[]; };
#define BIND_U16(b, name, q) layout(std430, binding = b) q buffer B##b##h { uint16_t name##_h[]; };
#define BIND_U32(b, name, q) layout(std430, binding = b) q buffer B##b##w { uint name##_w[]; };

#define INF uintBitsToFloat(0x7f800000u)

// Round-to-nearest-even fp32 -> fp16 bits, exact on every device (the
// rounding of a device's own conversion is not specified): as F16C.
uint f32_to_f16_bits(float f) {
    const uint x = floatBitsToUint(f);
    const uint sign = (x >> 16) & 0x8000u;
    const uint ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u);
    if (ax >= 0x477ff000u) return sign | 0x7c00u;            // >= 65520: inf
    if (ax < 0x38800000u) {                                  // below 2^-14: subnormal or 0
        return sign | uint(roundEven(uintBitsToFloat(ax) * 16777216.0));  // * 2^24, exact
    }
    uint h = (((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu);
    const uint rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) == 1u)) h += 1u;
    return sign | h;
}
float f16_bits_to_f32(uint h) { return unpackHalf2x16(h).x; }
float f16_round(float f) { return f16_bits_to_f32(f32_to_f16_bits(f)); }
// fp32 -> bf16 bits, ties to even, NaN kept quiet (as tern_fp32_to_bf16).
uint f32_to_bf16_bits(float f) {
    const uint x = floatBitsToUint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 64u;
    return (x + (0x7fffu + ((x >> 16) & 1u))) >> 16;
}
bool finite(float x) { return !isnan(x) && !isinf(x); }

// The exponential of softmax and SiLU: kernels/exp_approx.h's polynomial.
float exp_approx(float x) {
    // precise: the shifter's add and subtract must not be folded away (n must be an integer)
    const float shifter = 12582912.0;                 // 0x1.8p23
    precise const float z = fma(x, 1.4426950216293335, shifter);            // 0x1.715476p+0: 1 / ln 2
    precise const float n = z - shifter;
    precise const float b = fma(-n, 1.428606765330187e-06, fma(-n, 0.693145751953125, x));  // ln 2, hi + lo
    if (abs(n) > 192.0 || isnan(n)) return n <= 0.0 ? 0.0 : (n > 0.0 ? INF : n);
    const float u = b * b;
    const float j = fma(fma(fma(0.008247390389442444, b, 0.04189976677298546), u,
                            fma(0.16668395698070526, b, 0.4999912679195404)), u,
                        fma(0.9999994039535522, b, 1.0));
    return ldexp(j, int(n));
}
