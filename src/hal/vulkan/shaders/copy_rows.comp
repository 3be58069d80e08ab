#version 450
// Raw rows, byte for byte (rows of any type, an even number of bytes):
//   scatter (SET_ROWS of the destination's own type): dst row idx[i] = src row i,
//           an index outside [0, n_slots) writes nothing;
//   gather  (COPY_ROWS): dst row i = src row ids[i], an id outside [0, n_slots)
//           gives a zero row.
// One workgroup per row i, threads over its 16-bit halves.
#include "common.glsl"
layout(local_size_x = 64) in;
BIND_U16(0, d, writeonly)
BIND_U16(1, s, readonly)
BIND_U32(2, idx, readonly)
layout(push_constant) uniform PC {
    uint o_d, o_s, o_i;
    uint row_bytes, n_slots, nb_d1, nb_s1, nb_i0, n, gather;
} p;

void main() {
    const uint i = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x, tid = gl_LocalInvocationID.x;
    if (i >= p.n) return;
    const int id = int(idx_w[(p.o_i + i * p.nb_i0) / 4u]);
    const bool oob = id < 0 || uint(id) >= p.n_slots;
    if (p.gather == 0u && oob) return;
    const uint dst = (p.o_d + (p.gather != 0u ? i : uint(id)) * p.nb_d1) / 2u;
    const uint src = (p.o_s + (p.gather != 0u ? uint(id) : i) * p.nb_s1) / 2u;
    // (a 16-bit select or constant would ask for the Int16 capability: a branch and a converted zero instead)
    if (oob) {
        const uint zero = p.n & 0u;
        for (uint k = tid; k < p.row_bytes / 2u; k += 64u) d_h[dst + k] = uint16_t(zero);
    } else {
        for (uint k = tid; k < p.row_bytes / 2u; k += 64u) d_h[dst + k] = s_h[src + k];
    }
}
