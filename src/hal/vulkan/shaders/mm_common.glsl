// The MUL_MAT shaders' interface (mul_mat_vec.comp, mul_mat.comp,
// mul_mat_idot.comp): dst [N, M] = W [K, N] x X [K, M] (+ bias [N]).
//
// Bindings: d = dst (fp32), s0 = W (fp32 words or 16-bit halves), x = X
// (fp32), b = the bias (fp32). W may be bound a window of n_count rows at a
// time (vk_ops.cpp: a weight larger than one binding): n_base is the window's
// first row, o_w the window's byte offset in s0, nb_w1 a row's bytes. X may be
// a view of [K, x_ne1, x_ne2, x_ne3] with byte strides x_nb1..3; activation
// row m is X's rows in that order.
BIND_F32(0, d, writeonly)
BIND_F32(1, s0, readonly)
BIND_U16(1, s0, readonly)
BIND_F32(2, x, readonly)
BIND_F32(3, b, readonly)
layout(push_constant) uniform PC {
    uint o_d, o_w, o_x, o_b;
    uint K, N, n_base, n_count, M;
    uint x_ne1, x_ne2, x_nb1, x_nb2, x_nb3;
    uint nb_w1, has_bias;
} p;

// Byte offset of activation row m in x.
uint x_row(uint m) {
    const uint i1 = m % p.x_ne1, i23 = m / p.x_ne1;
    return p.o_x + i1 * p.x_nb1 + (i23 % p.x_ne2) * p.x_nb2 + (i23 / p.x_ne2) * p.x_nb3;
}

// Output (n, m): n counts W's rows from its first, not the window's.
void mm_store(uint n, uint m, float v) {
    if (p.has_bias != 0u) v += b_f[(p.o_b >> 2) + n];
    d_f[(p.o_d >> 2) + m * p.N + n] = v;
}
