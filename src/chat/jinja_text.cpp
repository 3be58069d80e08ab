// Python's text formatting for the Jinja builtins (see jinja_text.h).
#include "chat/jinja_text.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "vocab/unicode.h"

namespace tern {

namespace {

bool is_ascii_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Code points in s[0, n) (continuation bytes are not counted).
uint32_t cps(const char * s, size_t n) {
    uint32_t k = 0;
    for (size_t i = 0; i < n; i++) k += ((unsigned char) s[i] & 0xc0) != 0x80;
    return k;
}

// Bytes of the first `count` code points of s (all of s when it has fewer).
uint32_t cp_prefix_bytes(const char * s, uint32_t n, uint64_t count) {
    uint64_t seen = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (((unsigned char) s[i] & 0xc0) == 0x80) continue;
        if (seen == count) return i;
        seen++;
    }
    return n;
}

// Code points in s[0, n), counted up to cap (enough to compare with a width).
int64_t cps_upto(const char * s, size_t n, int64_t cap) {
    int64_t k = 0;
    for (size_t i = 0; i < n && k < cap; i++) k += ((unsigned char) s[i] & 0xc0) != 0x80;
    return k;
}

void put_repeat(jbuf * b, const char * unit, size_t unit_len, int64_t times) {
    for (int64_t i = 0; i < times && !b->r->failed; i++) jbuf_put(b, unit, unit_len);
}

// markupsafe 3's loop: find the first `open`, then the first `close` at or
// after it (it may begin inside the open marker: "<!-->" is a whole comment),
// cut that piece out (when no close follows, stop: the rest stays), and
// search again from the start, where a cut can make a new marker across the
// seam. Done in one pass with a write head behind the read head: a marker is
// seen when its last byte is written, so seams are found in the same order,
// and the search for each close scans only what the cut removes. Returns the
// new length of t.
size_t strip_pieces(char * t, size_t n, const char * open, const char * close) {
    const size_t on = strlen(open), cn = strlen(close);
    size_t w = 0, k = 0;
    while (k < n) {
        t[w++] = t[k++];
        if (w < on || memcmp(t + w - on, open, on) != 0) continue;
        const size_t start = w - on;
        size_t resume = SIZE_MAX;   // where reading goes on after the close
        for (size_t off = 0; off < on && resume == SIZE_MAX; off++) {
            const size_t inside = on - off;   // bytes of the close that overlap the open marker
            if (inside >= cn) continue;       // (a close wholly inside the marker: not so for "<!--" and "<")
            if (memcmp(open + off, close, inside) == 0 && k + (cn - inside) <= n &&
                memcmp(t + k, close + inside, cn - inside) == 0) {
                resume = k + cn - inside;
            }
        }
        for (size_t p = k; resume == SIZE_MAX && p + cn <= n; p++) {
            if (memcmp(t + p, close, cn) == 0) resume = p + cn;
        }
        if (resume == SIZE_MAX) {   // no close: the loop stops, the rest stays as it is
            memmove(t + w, t + k, n - k);
            return w + (n - k);
        }
        w = start;
        k = resume;
    }
    return w;
}

// ---- str.format ----

// A parsed format spec: [[fill]align][sign][#][0][width][,|_][.precision][type].
struct fspec {
    char     fill[4];
    uint32_t fill_n;
    char     align;   // 0 (the type's default), < > ^ =
    char     sign;    // 0, + - ' '
    bool     alt;
    int64_t  width;
    char     group;   // 0 , _
    int64_t  prec;    // -1: none
    char     type;    // 0: none
};

bool parse_spec(jrender * r, const char * s, uint32_t n, fspec * f) {
    memset(f, 0, sizeof(*f));
    f->fill[0] = ' ';
    f->fill_n = 1;
    f->prec = -1;
    uint32_t i = 0;
    bool explicit_fill = false;
    const uint32_t first = n ? (uint32_t) unicode_len_utf8((uint8_t) s[0]) : 0;
    if (first < n && s[first] && strchr("<>=^", s[first])) {   // a fill character, then the alignment
        memcpy(f->fill, s, first);
        f->fill_n = first;
        explicit_fill = true;
        f->align = s[first];
        i = first + 1;
    } else if (n && s[0] && strchr("<>=^", s[0])) {
        f->align = s[0];
        i = 1;
    }
    if (i < n && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) f->sign = s[i++];
    if (i < n && s[i] == '#') { f->alt = true; i++; }
    if (i < n && s[i] == '0') {   // zero padding: '0' fill unless a fill is given, after the sign unless an alignment is
        if (!explicit_fill) { f->fill[0] = '0'; f->fill_n = 1; }
        if (!f->align) f->align = '0';
        i++;
    }
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        f->width = f->width * 10 + (s[i++] - '0');
        if (f->width > 100000) return jfail(r, "format(): a width too large");
    }
    if (i < n && (s[i] == ',' || s[i] == '_')) f->group = s[i++];
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || s[i] < '0' || s[i] > '9') return jfail(r, "format(): format specifier missing precision");
        f->prec = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            f->prec = f->prec * 10 + (s[i++] - '0');
            if (f->prec > 1000) return jfail(r, "format(): a precision too large");
        }
    }
    if (i < n) {
        f->type = s[i++];
        if (!f->type) return jfail(r, "format(): invalid format specifier");
    }
    if (i < n) return jfail(r, "format(): invalid format specifier '%.*s'", (int) n, s);
    return true;
}

// Insert the group separator every `every` digits of digits[0, n), counted from the right.
void put_grouped(jbuf * b, const char * digits, uint32_t n, char sep, uint32_t every) {
    for (uint32_t i = 0; i < n; i++) {
        if (sep && i > 0 && (n - i) % every == 0) jbuf_put(b, &sep, 1);
        jbuf_put(b, digits + i, 1);
    }
}

uint32_t grouped_len(uint32_t n, char sep, uint32_t every) { return n + (sep && n > 0 ? (n - 1) / every : 0); }

// Pad body (sign and prefix first for '=' alignment) to the spec's width.
void put_padded(jbuf * out, const fspec & f, char dflt_align, const char * lead, uint32_t lead_n, const char * body,
                uint32_t body_n) {
    const int64_t len = cps(lead, lead_n) + cps(body, body_n);
    const int64_t pad = f.width > len ? f.width - len : 0;
    char align = f.align ? f.align : dflt_align;
    if (align == '0') align = '=';
    const int64_t before = align == '>' ? pad : align == '^' ? pad / 2 : 0;
    const int64_t middle = align == '=' ? pad : 0;
    const int64_t after = pad - before - middle;
    put_repeat(out, f.fill, f.fill_n, before);
    jbuf_put(out, lead, lead_n);
    put_repeat(out, f.fill, f.fill_n, middle);
    jbuf_put(out, body, body_n);
    put_repeat(out, f.fill, f.fill_n, after);
}

bool format_string(jrender * r, jbuf * out, const jv & s, const fspec & f) {
    if (f.type && f.type != 's') return jfail(r, "format(): unknown format code '%c' for a string", f.type);
    if (f.sign) return jfail(r, "format(): sign not allowed in string format specifier");
    if (f.alt) return jfail(r, "format(): alternate form (#) not allowed in string format specifier");
    if (f.group) return jfail(r, "format(): cannot specify '%c' with 's'", f.group);
    if (f.align == '=') return jfail(r, "format(): '=' alignment not allowed in string format specifier");
    const uint32_t n = f.prec >= 0 ? cp_prefix_bytes(s.s, s.n, (uint64_t) f.prec) : s.n;
    fspec g = f;
    if (g.align == '0') g.align = '<';   // Python 3.10+: zero padding of a string pads on the right
    put_padded(out, g, '<', "", 0, s.s, n);
    return true;
}

// Python's repr of a finite float: the shortest digits that read back,
// fixed-point for decimal exponents -4 to 15, else d.ddde+XX. Returns the length.
int py_float_repr(double d, char * buf, size_t cap) {
    if (d == 0) return snprintf(buf, cap, signbit(d) ? "-0.0" : "0.0");
    char digits[24];
    int exp10;
    bool neg;
    const int k = double_shortest_digits(d, digits, &exp10, &neg);
    size_t n = 0;
    auto put = [&](char ch) { if (n + 1 < cap) buf[n++] = ch; };
    if (neg) put('-');
    if (exp10 >= -4 && exp10 < 16) {
        if (exp10 < 0) {
            put('0');
            put('.');
            for (int i = 0; i < -exp10 - 1; i++) put('0');
            for (int i = 0; i < k; i++) put(digits[i]);
        } else {
            for (int i = 0; i <= exp10; i++) put(i < k ? digits[i] : '0');
            put('.');
            if (k > exp10 + 1) {
                for (int i = exp10 + 1; i < k; i++) put(digits[i]);
            } else {
                put('0');
            }
        }
    } else {
        put(digits[0]);
        if (k > 1) {
            put('.');
            for (int i = 1; i < k; i++) put(digits[i]);
        }
        char ex[16];
        snprintf(ex, sizeof(ex), "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
        for (const char * x = ex; *x; x++) put(*x);
    }
    buf[n] = 0;
    return (int) n;
}

bool format_float(jrender * r, jbuf * out, double d, const fspec & f) {
    char type = f.type;
    if (type && !strchr("eEfFgGn%", type)) return jfail(r, "format(): unknown format code '%c' for a float", type);
    const char sign = signbit(d) && !isnan(d) ? '-' : f.sign == '+' ? '+' : f.sign == ' ' ? ' ' : 0;
    const double a = fabs(d);
    char body[1400];
    int len;
    if (!type && f.prec < 0) {
        // str(): the shortest repr, "inf" and "nan" as Python writes them.
        if (isinf(a)) len = snprintf(body, sizeof(body), "inf");
        else if (isnan(a)) len = snprintf(body, sizeof(body), "nan");
        else len = py_float_repr(a, body, sizeof(body));
    } else {
        const int prec = f.prec >= 0 ? (int) f.prec : 6;
        const double x = type == '%' ? a * 100.0 : a;
        const char conv = !type || type == 'n' ? 'g' : type == '%' ? 'f' : type;
        char spec[16];
        snprintf(spec, sizeof(spec), "%%%s.*%c", f.alt ? "#" : "", conv);
        len = snprintf(body, sizeof(body) - 4, spec, prec, x);
        if (len < 0 || len >= (int) sizeof(body) - 4) return jfail(r, "format(): a number longer than %zu bytes", sizeof(body) - 5);
        // No type with a precision: like 'g', but a fixed-point result keeps one digit past the point.
        if (!type && isfinite(x) && !memchr(body, '.', (size_t) len) && !memchr(body, 'e', (size_t) len)) { memcpy(body + len, ".0", 3); len += 2; }
        if (type == '%') { body[len++] = '%'; body[len] = 0; }
    }
    if (len < 0) return jfail(r, "format(): a number that cannot be written");
    // The integer digits (grouped), then the rest as written.
    uint32_t int_n = 0;
    while (int_n < (uint32_t) len && body[int_n] >= '0' && body[int_n] <= '9') int_n++;
    const char lead[1] = {sign};
    jbuf digits;
    jbuf_init(&digits, r, r->lim.max_output);
    if (f.group && isfinite(a)) {
        // Zero padding with groups: leading zeros join the groups (Python: format(1234, '08,') is '0,001,234').
        uint32_t zeros = 0;
        if (f.align == '0') {
            while ((int64_t) ((sign ? 1 : 0) + grouped_len(int_n + zeros, f.group, 3) + (len - int_n)) < f.width) zeros++;
        }
        char zbody[1400 + 64];
        if (int_n + zeros >= sizeof(zbody)) return jfail(r, "format(): a width too large");
        memset(zbody, '0', zeros);
        memcpy(zbody + zeros, body, int_n);
        put_grouped(&digits, zbody, int_n + zeros, f.group, 3);
        jbuf_put(&digits, body + int_n, (size_t) len - int_n);
    } else {
        jbuf_put(&digits, body, (size_t) len);
    }
    jv text = jbuf_value(&digits);
    put_padded(out, f, '>', lead, sign ? 1 : 0, text.s, text.n);
    return !r->failed;
}

bool format_int(jrender * r, jbuf * out, int64_t v, const fspec & f) {
    const char type = f.type;
    if (type && strchr("eEfFgG%", type)) return format_float(r, out, (double) v, f);
    if (type && !strchr("dnboxXc", type)) return jfail(r, "format(): unknown format code '%c' for an integer", type);
    if (f.prec >= 0) return jfail(r, "format(): precision not allowed in integer format specifier");
    if (type == 'c') {
        if (f.sign) return jfail(r, "format(): sign not allowed with integer format specifier 'c'");
        if (v < 0 || v > 0x10ffff) return jfail(r, "format(): %%c arg not in range(0x110000)");
        char u[4];
        const int n = unicode_encode((uint32_t) v, u);
        put_padded(out, f, '<', "", 0, u, (uint32_t) n);
        return true;
    }
    const uint32_t base = type == 'b' ? 2 : type == 'o' ? 8 : type == 'x' || type == 'X' ? 16 : 10;
    if (f.group == ',' && base != 10) return jfail(r, "format(): cannot specify ',' with '%c'", type);
    if (f.group && type == 'n') return jfail(r, "format(): cannot specify '%c' with 'n'", f.group);
    const uint32_t every = base == 10 ? 3 : 4;
    uint64_t m = v < 0 ? 0 - (uint64_t) v : (uint64_t) v;
    char digits[72];
    uint32_t n = 0;
    const char * alphabet = type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        digits[sizeof(digits) - 1 - n++] = alphabet[m % base];
        m /= base;
    } while (m);
    const char * ds = digits + sizeof(digits) - n;
    char lead[4];
    uint32_t lead_n = 0;
    if (v < 0) lead[lead_n++] = '-';
    else if (f.sign == '+' || f.sign == ' ') lead[lead_n++] = f.sign;
    if (f.alt && base != 10) {
        lead[lead_n++] = '0';
        lead[lead_n++] = base == 2 ? 'b' : base == 8 ? 'o' : type;
    }
    uint32_t zeros = 0;
    if (f.group && f.align == '0') {
        while ((int64_t) (lead_n + grouped_len(n + zeros, f.group, every)) < f.width) zeros++;
    }
    jbuf body;
    jbuf_init(&body, r, r->lim.max_output);
    if (zeros) {
        char * z = (char *) jmem_alloc(r->m, n + zeros);
        if (!z) return jfail(r, "out of memory");
        memset(z, '0', zeros);
        memcpy(z + zeros, ds, n);
        put_grouped(&body, z, n + zeros, f.group, every);
    } else {
        put_grouped(&body, ds, n, f.group, every);
    }
    jv text = jbuf_value(&body);
    put_padded(out, f, '>', lead, lead_n, text.s, text.n);
    return !r->failed;
}

// format(value, spec) as Python's built-in types do it.
bool format_value(jrender * r, jbuf * out, const jv & v, const char * spec, uint32_t spec_n) {
    if (spec_n == 0 && v.t != J_FLOAT) {   // str(); a float as Python writes it ("3.0"), not as {{ }} prints it
        jv_write_str(r, out, v);
        return !r->failed;
    }
    fspec f;
    if (!parse_spec(r, spec, spec_n, &f)) return false;
    switch (v.t) {
        case J_STR: return format_string(r, out, v, f);
        case J_BOOL: return format_int(r, out, v.b, f);
        case J_INT: return format_int(r, out, v.i, f);
        case J_FLOAT: return format_float(r, out, v.d, f);
        default: return jfail(r, "format(): a format spec for a value that is no string or number");
    }
}

// The value a replacement field names: {} {0} {name}, then .attr and [key] lookups.
struct field_state {
    uint32_t next_auto;
    int      numbering;   // 0 unknown, 1 automatic, 2 manual (Python refuses to mix them)
};

bool field_value(jrender * r, const char * f, uint32_t n, const jcall & c, field_state * st, jv * out) {
    uint32_t i = 0;
    while (i < n && f[i] != '.' && f[i] != '[') i++;
    const jv * x = NULL;
    if (i == 0) {
        if (st->numbering == 2) return jfail(r, "format(): cannot switch from manual field numbering to automatic");
        st->numbering = 1;
        if (st->next_auto < c.n_pos) x = &c.pos[st->next_auto];
        st->next_auto++;
        if (!x) return jfail(r, "format(): replacement index %u out of range", st->next_auto - 1);
    } else if (f[0] >= '0' && f[0] <= '9') {
        if (st->numbering == 1) return jfail(r, "format(): cannot switch from automatic field numbering to manual");
        st->numbering = 2;
        uint64_t k = 0;
        for (uint32_t j = 0; j < i; j++) {
            if (f[j] < '0' || f[j] > '9' || k > 100000) return jfail(r, "format(): bad field '%.*s'", (int) n, f);
            k = k * 10 + (uint64_t) (f[j] - '0');
        }
        if (k >= c.n_pos) return jfail(r, "format(): replacement index %llu out of range", (unsigned long long) k);
        x = &c.pos[k];
    } else {
        for (uint32_t k = 0; k < c.n_kw; k++) {
            if (c.kw[k].n == i && memcmp(c.kw[k].s, f, i) == 0) x = &c.kwv[k];
        }
        if (!x) return jfail(r, "format(): no argument named '%.*s'", (int) i, f);
    }
    jv v = *x;
    while (i < n && !r->failed) {
        const bool dot = f[i] == '.';
        uint32_t b = ++i, e = b;
        if (dot) {
            while (e < n && f[e] != '.' && f[e] != '[') e++;
        } else {
            while (e < n && f[e] != ']') e++;
            if (e >= n) return jfail(r, "format(): '[' without ']' in a field");
        }
        if (e == b) return jfail(r, "format(): empty attribute or index in a field");
        bool numeric = !dot;
        uint64_t k = 0;
        for (uint32_t j = b; j < e && numeric; j++) {
            numeric = f[j] >= '0' && f[j] <= '9' && k < 100000000;
            k = k * 10 + (uint64_t) (f[j] - '0');
        }
        jv * found = NULL;
        if (numeric && v.t == J_LIST) {
            if (k >= v.l->n) return jfail(r, "format(): index %llu out of range", (unsigned long long) k);
            found = &v.l->v[k];
        } else if (v.t == J_DICT) {
            found = numeric ? jdict_find_v(v.o, jv_int((int64_t) k)) : jdict_find(v.o, f + b, e - b);
        }
        if (!found) return jfail(r, "format(): the value has no '%.*s'", (int) (e - b), f + b);
        v = *found;
        i = dot ? e : e + 1;
    }
    *out = v;
    return !r->failed;
}

}  // namespace

uint32_t jinja_percent_count(const jv & f) {
    uint32_t k = 0;
    for (uint32_t i = 0; i + 1 < f.n; i++) {
        if (f.s[i] != '%') continue;
        if (f.s[i + 1] == '%') i++;
        else k++;
    }
    return k;
}

jv jinja_percent_format(jrender * r, const jv & f, const jcall & c) {
    jbuf out;
    jbuf_init(&out, r, r->lim.max_output);
    uint32_t next = 0;
    // A lone dict argument is the mapping %(key)s conversions read.
    const jv * mapping = c.n_pos == 1 && c.pos[0].t == J_DICT ? &c.pos[0] : NULL;
    bool mapped = false;
    for (uint32_t i = 0; i < f.n && !r->failed;) {
        if (f.s[i] != '%') {
            uint32_t b = i;
            while (i < f.n && f.s[i] != '%') i++;
            jbuf_put(&out, f.s + b, i - b);
            continue;
        }
        i++;
        const jv * keyed = NULL;   // %(key)...: the mapping's value
        if (i < f.n && f.s[i] == '(') {
            uint32_t e = i + 1;
            while (e < f.n && f.s[e] != ')') e++;
            if (e >= f.n) { jfail(r, "format: incomplete format key"); break; }
            if (!mapping) { jfail(r, "format: a %%(key) conversion requires a mapping"); break; }
            keyed = jdict_find(mapping->o, f.s + i + 1, e - i - 1);
            if (!keyed) { jfail(r, "format: no key '%.*s' in the mapping", (int) (e - i - 1), f.s + i + 1); break; }
            mapped = true;
            i = e + 1;
        }
        char flags[8];
        size_t nf = 0;
        while (i < f.n && f.s[i] && strchr("-+ 0#", f.s[i])) {
            if (nf < sizeof(flags) - 1) flags[nf++] = f.s[i];
            i++;
        }
        flags[nf] = 0;
        int width = 0, prec = -1;
        while (i < f.n && f.s[i] >= '0' && f.s[i] <= '9' && width < 1000) width = width * 10 + (f.s[i++] - '0');
        if (i < f.n && f.s[i] == '.') {
            i++;
            prec = 0;
            while (i < f.n && f.s[i] >= '0' && f.s[i] <= '9' && prec < 1000) prec = prec * 10 + (f.s[i++] - '0');
        }
        if (i >= f.n) { jfail(r, "format: incomplete format"); break; }
        const char conv = f.s[i++];
        if (conv == '%') { jbuf_put(&out, "%", 1); continue; }
        if (width >= 1000 || prec >= 1000) { jfail(r, "format: width or precision too large"); break; }
        if (!keyed && next >= c.n_pos) { jfail(r, "format: not enough arguments for the format string"); break; }
        const jv & a = keyed ? *keyed : c.pos[next++];
        if (conv == 's' || conv == 'r') {
            // str() or repr(), cut to prec characters, padded to width characters.
            jbuf t;
            jbuf_init(&t, r, r->lim.max_output);
            if (conv == 'r') jv_write_repr(r, &t, a, false, -1, 0);
            else jv_write_str(r, &t, a);
            jv text = jbuf_value(&t);
            const uint32_t bytes = prec >= 0 ? cp_prefix_bytes(text.s, text.n, (uint64_t) prec) : text.n;
            const uint32_t chars = cps(text.s, bytes);
            const bool left = strchr(flags, '-') != NULL;
            for (int k = (int) chars; !left && k < width; k++) jbuf_put(&out, " ", 1);
            jbuf_put(&out, text.s, bytes);
            for (int k = (int) chars; left && k < width; k++) jbuf_put(&out, " ", 1);
            continue;
        }
        if (!conv || !strchr("diufFeEgGxXoc", conv)) { jfail(r, "format: unsupported format character '%c'", conv ? conv : '?'); break; }
        if (a.t != J_INT && a.t != J_FLOAT && a.t != J_BOOL) { jfail(r, "format: %%%c needs a number", conv); break; }
        const bool integral = strchr("diuxXoc", conv) != NULL;
        if (a.t == J_FLOAT && strchr("xXoc", conv)) { jfail(r, "format: %%%c needs an integer", conv); break; }
        const double d = a.t == J_FLOAT ? a.d : a.t == J_INT ? (double) a.i : (double) a.b;
        const int64_t iv = a.t == J_FLOAT ? (int64_t) a.d : a.t == J_INT ? a.i : (int64_t) a.b;
        if (conv == 'c' && (iv < 0 || iv > 127)) { jfail(r, "format: %%c needs a character code below 128"); break; }
        // The C conversion with the same flags, width and precision.
        char spec[32];
        if (prec >= 0) snprintf(spec, sizeof(spec), "%%%s%d.%d%s", flags, width, prec, integral && conv != 'c' ? "ll" : "");
        else snprintf(spec, sizeof(spec), "%%%s%d%s", flags, width, integral && conv != 'c' ? "ll" : "");
        const size_t k = strlen(spec);
        spec[k] = conv == 'i' || conv == 'u' ? 'd' : conv;
        spec[k + 1] = 0;
        char buf[1400];
        int len;
        if (conv == 'c') len = snprintf(buf, sizeof(buf), spec, (int) iv);
        else if (integral) len = snprintf(buf, sizeof(buf), spec, (long long) iv);
        else len = snprintf(buf, sizeof(buf), spec, d);
        if (len < 0 || len >= (int) sizeof(buf)) { jfail(r, "format: a conversion longer than %zu bytes", sizeof(buf) - 1); break; }
        jbuf_put(&out, buf, (size_t) len);
    }
    if (!r->failed && next < c.n_pos && !mapped && !(mapping && next == 0))
        jfail(r, "format: not all arguments converted during string formatting");
    return jbuf_value(&out);
}

jv jinja_str_format(jrender * r, const jv & v, const jcall & c) {
    jbuf out;
    jbuf_init(&out, r, r->lim.max_output);
    field_state st = {0, 0};
    for (uint32_t i = 0; i < v.n && !r->failed; i++) {
        const char ch = v.s[i];
        if (ch == '{' && i + 1 < v.n && v.s[i + 1] == '{') { jbuf_put(&out, "{", 1); i++; continue; }
        if (ch == '}') {
            if (i + 1 < v.n && v.s[i + 1] == '}') { jbuf_put(&out, "}", 1); i++; continue; }
            jfail(r, "format(): single '}' encountered in format string");
            break;
        }
        if (ch != '{') { jbuf_put(&out, &ch, 1); continue; }
        // {field[!conv][:spec]}: the spec may hold one level of {field}.
        uint32_t e = i + 1;
        int depth = 1;
        while (e < v.n) {
            if (v.s[e] == '{') depth++;
            else if (v.s[e] == '}' && --depth == 0) break;
            e++;
        }
        if (e >= v.n) { jfail(r, "format(): '{' without '}'"); break; }
        const char * f = v.s + i + 1;
        const uint32_t fl = e - i - 1;
        uint32_t name_n = 0;
        while (name_n < fl && f[name_n] != '!' && f[name_n] != ':') name_n++;
        char conv = 0;
        uint32_t spec_at = name_n;
        if (name_n < fl && f[name_n] == '!') {
            if (name_n + 1 >= fl || !f[name_n + 1] || !strchr("rsa", f[name_n + 1]) || (name_n + 2 < fl && f[name_n + 2] != ':')) {
                jfail(r, "format(): a conversion must be !r, !s or !a");
                break;
            }
            conv = f[name_n + 1];
            spec_at = name_n + 2;
        }
        const char * spec = spec_at < fl ? f + spec_at + 1 : f + fl;
        uint32_t spec_n = spec_at < fl ? fl - spec_at - 1 : 0;
        jv x;
        if (!field_value(r, f, name_n, c, &st, &x)) break;
        if (conv) {
            jbuf t;
            jbuf_init(&t, r, r->lim.max_output);
            if (conv == 's') jv_write_str(r, &t, x);
            else jv_write_repr(r, &t, x, false, -1, 0);
            x = jbuf_value(&t);
        }
        if (memchr(spec, '{', spec_n)) {   // nested fields: the spec with each {field} replaced by its str()
            jbuf sb;
            jbuf_init(&sb, r, r->lim.max_output);
            for (uint32_t k = 0; k < spec_n && !r->failed; k++) {
                if (spec[k] != '{') { jbuf_put(&sb, spec + k, 1); continue; }
                uint32_t ke = k + 1;
                while (ke < spec_n && spec[ke] != '}' && spec[ke] != '{') ke++;
                if (ke >= spec_n || spec[ke] != '}') { jfail(r, "format(): fields nested too deep in a format spec"); break; }
                jv nested;
                if (!field_value(r, spec + k + 1, ke - k - 1, c, &st, &nested)) break;
                jv_write_str(r, &sb, nested);
                k = ke;
            }
            jv s = jbuf_value(&sb);
            spec = s.s;
            spec_n = s.n;
        }
        if (r->failed || !format_value(r, &out, x, spec, spec_n)) break;
        i = e;
    }
    jcharge(r, out.n >> 6);   // the text written (widths make it larger than the format)
    return jbuf_value(&out);
}

jv jinja_wordwrap(jrender * r, const jv & s, int64_t width, bool break_long_words, const jv & wrapstring,
                  bool break_on_hyphens) {
    if (width <= 0) {
        jfail(r, "wordwrap(): invalid width %lld (must be > 0)", (long long) width);
        return jv_undef();
    }
    jbuf out;
    jbuf_init(&out, r, r->lim.max_output);
    // textwrap's character classes on the code point starting at byte q:
    // letter [^\d\W] (letters and '_'), word \w (and digits). Code points above
    // ASCII count as letters except Latin-1's and the general punctuation and
    // symbol blocks (an approximation of Unicode's categories).
    auto letter = [&](uint32_t q) {
        const unsigned char ch = (unsigned char) s.s[q];
        if (ch < 0x80) return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
        size_t at = q;
        const uint32_t cp = unicode_decode((const uint8_t *) s.s, s.n, &at);
        if (cp <= 0xbf) return cp == 0xaa || cp == 0xb5 || cp == 0xba;
        return cp != 0xd7 && cp != 0xf7 && !(cp >= 0x2000 && cp <= 0x2bff) && !(cp >= 0x3000 && cp <= 0x303f) &&
               cp != 0xfffd;
    };
    auto word_char = [&](uint32_t q) { return letter(q) || (s.s[q] >= '0' && s.s[q] <= '9'); };
    auto next_cp = [&](uint32_t q) { return q + cp_prefix_bytes(s.s + q, s.n - q, 1); };
    bool first_line = true;
    for (uint32_t i = 0; i < s.n || (i == 0 && s.n == 0);) {
        // One line of str.splitlines(): up to \n, \r, \r\n, \v, \f or \x1c-\x1e.
        uint32_t e = i;
        while (e < s.n && (!s.s[e] || !strchr("\n\r\v\f\x1c\x1d\x1e", s.s[e]))) e++;
        if (!first_line) jbuf_put(&out, wrapstring.s, wrapstring.n);
        first_line = false;
        // A chunk of the line: a run of blanks, or a word up to a blank or
        // (break_on_hyphens) just after a hyphen with two letters before it
        // and a letter, then a letter or "-letter", after it.
        auto chunk_end = [&](uint32_t b) -> uint32_t {
            uint32_t k = b;
            if (is_ascii_ws(s.s[b])) {
                while (k < e && is_ascii_ws(s.s[k])) k++;
                return k;
            }
            // A run of two or more hyphens between a word character (or one of !"'&.,?) and a
            // word character is a chunk of its own (an em-dash), and ends the word before it.
            auto cp_before = [&](uint32_t q) {   // the start of the code point that ends at q (q > i)
                uint32_t z = q - 1;
                while (z > i && ((unsigned char) s.s[z] & 0xc0) == 0x80) z--;
                return z;
            };
            auto dash_run = [&](uint32_t q) -> uint32_t {   // the run's end, or 0
                if (q <= i || s.s[q] != '-' || q + 1 >= e || s.s[q + 1] != '-') return 0;
                const uint32_t pq = cp_before(q);
                if (!(word_char(pq) || (s.s[pq] && strchr("!\"'&.,?", s.s[pq])))) return 0;
                uint32_t z = q;
                while (z < e && s.s[z] == '-') z++;
                return z < e && word_char(z) ? z : 0;
            };
            if (break_on_hyphens) {
                if (const uint32_t z = dash_run(k)) return z;
            }
            for (; k < e && !is_ascii_ws(s.s[k]); k++) {
                if (break_on_hyphens && k > b && dash_run(k)) return k;
                if (!break_on_hyphens || k == b || s.s[k] != '-' || k + 1 >= e || !letter(k + 1)) continue;
                // after: a letter, then a letter or "-" and a letter
                const uint32_t q2 = next_cp(k + 1);
                const bool after = q2 < e && (letter(q2) || (s.s[q2] == '-' && q2 + 1 < e && letter(q2 + 1)));
                // before: two letters, or letter "-" letter
                const uint32_t p1 = cp_before(k);
                const uint32_t p2 = p1 > i ? cp_before(p1) : UINT32_MAX;
                const uint32_t p3 = p2 != UINT32_MAX && p2 > i ? cp_before(p2) : UINT32_MAX;
                const bool before = letter(p1) && p2 != UINT32_MAX &&
                                    (letter(p2) || (s.s[p2] == '-' && p3 != UINT32_MAX && letter(p3)));
                if (after && before) return k + 1;
            }
            return k;
        };
        // textwrap's fill: chunks taken while they fit; a chunk longer than a
        // whole line cut to the room left; a blank chunk dropped at the start of
        // every line after the first and at the end of every line. A line is a
        // contiguous range of s: [lb, le).
        uint32_t at = i;        // where the next chunk (or the rest of a cut one) starts
        uint32_t ce = i;        // its end (chunk_end(at) when `at` starts a chunk)
        bool in_chunk = false;  // `at` is inside a chunk cut before
        bool any = false;       // a line of this paragraph was written
        while (at < e && !r->failed) {
            if (!in_chunk) ce = chunk_end(at);
            if (any && is_ascii_ws(s.s[at])) {   // (the rest of a cut blank chunk too)
                at = ce;
                in_chunk = false;
                continue;
            }
            const uint32_t lb = at;
            uint32_t le = at, blank_from = UINT32_MAX;
            int64_t cur = 0;
            while (at < e) {
                const int64_t l = cps_upto(s.s + at, ce - at, width + 1);
                if (cur + l > width) break;
                blank_from = is_ascii_ws(s.s[at]) ? at : UINT32_MAX;
                cur += l;
                at = le = ce;
                in_chunk = false;
                if (at < e) ce = chunk_end(at);
            }
            if (at < e && cps_upto(s.s + at, ce - at, width + 1) > width) {
                // _handle_long_word: cut the chunk at the room left. With no room left
                // the piece cut is empty, and textwrap then drops that empty piece
                // instead of a blank before it at the line's end.
                const int64_t room = width - cur;
                const char * cs = s.s + at;
                const uint32_t cn = ce - at;
                if (break_long_words) {
                    uint32_t take = cp_prefix_bytes(cs, cn, (uint64_t) room);
                    if (break_on_hyphens) {   // after the last hyphen before the cut, if not only hyphens precede it
                        int64_t hy = -1;
                        for (uint32_t k = 0; k < take; k++) {
                            if (cs[k] == '-') hy = k;
                        }
                        bool other = false;
                        for (int64_t k = 0; k < hy && !other; k++) other = cs[k] != '-';
                        if (hy > 0 && other) take = (uint32_t) hy + 1;
                    }
                    // the piece is the line's last: dropped if blank (an empty one saves a blank before it)
                    blank_from = take > 0 && is_ascii_ws(cs[0]) ? at : UINT32_MAX;
                    if (take > 0) {
                        at = le = at + take;
                        in_chunk = at < ce;
                    }
                } else if (le == lb) {
                    blank_from = is_ascii_ws(cs[0]) ? at : UINT32_MAX;
                    at = le = ce;
                    in_chunk = false;
                }
            }
            if (blank_from != UINT32_MAX) le = blank_from;
            if (le > lb) {
                if (any) jbuf_put(&out, wrapstring.s, wrapstring.n);
                jbuf_put(&out, s.s + lb, le - lb);
                any = true;
            }
        }
        if (e >= s.n) break;
        i = e + (s.s[e] == '\r' && e + 1 < s.n && s.s[e + 1] == '\n' ? 2 : 1);
    }
    jcharge(r, out.n >> 6);   // the text written (wrapstrings make it larger than s)
    return jbuf_value(&out);
}

jv jinja_truncate(jrender * r, const jv & s, int64_t length, bool killwords, const jv & end, int64_t leeway) {
    const int64_t end_n = cps(end.s, end.n);
    if (length < end_n) {
        jfail(r, "truncate(): expected length >= %lld, got %lld", (long long) end_n, (long long) length);
        return jv_undef();
    }
    if (leeway < 0) {
        jfail(r, "truncate(): expected leeway >= 0, got %lld", (long long) leeway);
        return jv_undef();
    }
    if ((int64_t) cps(s.s, s.n) <= length + leeway) return s;
    uint32_t keep = cp_prefix_bytes(s.s, s.n, (uint64_t) (length - end_n));
    if (!killwords) {   // s[:length - len(end)].rsplit(" ", 1)[0]
        uint32_t k = keep;
        while (k > 0 && s.s[k - 1] != ' ') k--;
        if (k > 0) keep = k - 1;
    }
    jbuf out;
    jbuf_init(&out, r, r->lim.max_output);
    jbuf_put(&out, s.s, keep);
    jbuf_put(&out, end.s, end.n);
    return jbuf_value(&out);
}

jv jinja_striptags(jrender * r, const jv & s) {
    // markupsafe 3: remove <!-- ... --> (an unclosed one to the end), then
    // <...> (likewise), each pass as its loop of find-and-cut does it.
    char * t = (char *) jmem_alloc(r->m, s.n + 1);
    if (!t) { jfail(r, "out of memory"); return jv_undef(); }
    memcpy(t, s.s, s.n);
    size_t n = strip_pieces(t, s.n, "<!--", "-->");
    n = strip_pieces(t, n, "<", ">");
    // " ".join(text.split()), then the character references decoded.
    jbuf out;
    jbuf_init(&out, r, r->lim.max_output);
    bool pending_space = false;
    for (size_t k = 0; k < n && !r->failed;) {
        const unsigned char ch = (unsigned char) t[k];
        if (is_ascii_ws((char) ch) || (ch >= 0x1c && ch <= 0x1f)) {
            pending_space = out.n > 0;
            k++;
            continue;
        }
        if (pending_space) jbuf_put(&out, " ", 1);
        pending_space = false;
        if (ch == '&') {
            // &#N; &#xH; and the common named references; anything else stays as it is.
            static const struct { const char * name; const char * text; } NAMED[] = {
                {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}, {"nbsp", "\xc2\xa0"},
            };
            size_t e = k + 1;
            while (e < n && e - k < 12 && t[e] != ';' && t[e] != '&' && !is_ascii_ws(t[e])) e++;
            bool done = false;
            if (e < n && t[e] == ';' && e > k + 1) {
                const char * nm = t + k + 1;
                const size_t nl = e - k - 1;
                if (nm[0] == '#' && nl >= 2) {
                    const bool hex = nm[1] == 'x' || nm[1] == 'X';
                    uint32_t cp = 0;
                    bool ok = nl > (hex ? 2u : 1u);
                    for (size_t q = hex ? 2 : 1; q < nl && ok; q++) {
                        const char d = nm[q];
                        int dv = d >= '0' && d <= '9' ? d - '0' : hex && d >= 'a' && d <= 'f' ? d - 'a' + 10
                               : hex && d >= 'A' && d <= 'F' ? d - 'A' + 10 : -1;
                        ok = dv >= 0 && cp < 0x110000;
                        cp = cp * (hex ? 16 : 10) + (uint32_t) (dv < 0 ? 0 : dv);
                    }
                    if (ok) {
                        if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) cp = 0xfffd;
                        char u[4];
                        jbuf_put(&out, u, (size_t) unicode_encode(cp, u));
                        done = true;
                    }
                } else {
                    for (const auto & ref : NAMED) {
                        if (strlen(ref.name) == nl && memcmp(ref.name, nm, nl) == 0) {
                            jbuf_puts(&out, ref.text);
                            done = true;
                        }
                    }
                }
            }
            if (done) { k = e + 1; continue; }
        }
        jbuf_put(&out, t + k, 1);
        k++;
    }
    return jbuf_value(&out);
}

jv jinja_filesizeformat(jrender * r, double bytes, bool binary) {
    static const char * const DEC[] = {"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
    static const char * const BIN[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
    const double base = binary ? 1024.0 : 1000.0;
    char buf[512];
    if (bytes == 1) {
        snprintf(buf, sizeof(buf), "1 Byte");
    } else if (bytes < base) {
        if (!isfinite(bytes)) { jfail(r, "filesizeformat of a value that is not finite"); return jv_undef(); }
        snprintf(buf, sizeof(buf), "%lld Bytes", (long long) bytes);
    } else {
        double unit = base;
        int i = 0;
        for (; i < 8; i++) {
            unit = pow(base, i + 2);
            if (bytes < unit) break;
        }
        if (i == 8) i = 7;
        snprintf(buf, sizeof(buf), "%.1f %s", base * bytes / unit, (binary ? BIN : DEC)[i]);
    }
    return jv_cstr(r, buf);
}

}  // namespace tern
