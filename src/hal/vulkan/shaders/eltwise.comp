#version 450
// Element-wise F32 ops over a's shape [ne0, ne1, ne2, ne3] (strided rows, as
// the CPU's binary_op): ADD (op 0) and MUL (1) with b repeated along every
// dimension (a bias [ne0] over all rows, a residual of a's shape), SCALE (2:
// a * s), SWIGLU (3: silu(a) * b, b of a's shape, silu with exp_approx).
// One thread per element.
#include "common.glsl"
layout(local_size_x = 64) in;
BIND_F32(0, d, writeonly)
BIND_F32(1, a, readonly)
BIND_F32(2, b, readonly)
layout(push_constant) uniform PC {
    uint o_d, o_a, o_b;
    uint ne0, ne1, ne2, ne3;
    uint a_nb1, a_nb2, a_nb3;
    uint b_ne0, b_ne1, b_ne2, b_ne3;
    uint b_nb1, b_nb2, b_nb3;
    uint d_nb1, d_nb2, d_nb3;
    uint op, scale;   // scale: float bits
} p;

void main() {
    const uint idx = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * 64u + gl_LocalInvocationID.x;
    const uint i0 = idx % p.ne0, r = idx / p.ne0;
    const uint i1 = r % p.ne1, i2 = (r / p.ne1) % p.ne2, i3 = r / (p.ne1 * p.ne2);
    if (i3 >= p.ne3) return;
    const float x = a_f[(p.o_a + i1 * p.a_nb1 + i2 * p.a_nb2 + i3 * p.a_nb3) / 4u + i0];
    float y;
    if (p.op == 2u) {
        y = x * uintBitsToFloat(p.scale);
    } else {
        const float v = b_f[(p.o_b + (i1 % p.b_ne1) * p.b_nb1 + (i2 % p.b_ne2) * p.b_nb2 + (i3 % p.b_ne3) * p.b_nb3) / 4u +
                            i0 % p.b_ne0];
        if (p.op == 0u) y = x + v;
        else if (p.op == 1u) y = x * v;
        else y = x / (1.0 + exp_approx(-x)) * v;
    }
    d_f[(p.o_d + i1 * p.d_nb1 + i2 * p.d_nb2 + i3 * p.d_nb3) / 4u + i0] = y;
}
