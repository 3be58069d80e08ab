// Grammar engine (see grammar.h): setup checks, the stack pool, code point
// and byte steps, and the walk over a sorted vocabulary.
#include "sample/grammar.h"

#include <stdio.h>
#include <string.h>

#include "core/status.h"

namespace tern {

namespace {

uint32_t sat_add(uint32_t a, uint32_t b) {
    uint64_t s = (uint64_t) a + b;
    return s >= GRAMMAR_INF ? GRAMMAR_INF : (uint32_t) s;
}

uint8_t utf8_bytes(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

// The class starting at e: does cp match, and where does the class end?
bool match_char(const gbnf_elem * el, uint32_t e, uint32_t cp, uint32_t * after) {
    bool found = false;
    const bool positive = el[e].type == GBNF_CHAR || el[e].type == GBNF_CHAR_ANY;
    do {
        if (el[e + 1].type == GBNF_CHAR_RNG_UPPER) {
            found = found || (el[e].value <= cp && cp <= el[e + 1].value);
            e += 2;
        } else if (el[e].type == GBNF_CHAR_ANY) {
            found = true;
            e += 1;
        } else {
            found = found || el[e].value == cp;
            e += 1;
        }
    } while (el[e].type == GBNF_CHAR_ALT);
    if (after) *after = e;
    return found == positive;
}

// Can some completion of the partial sequence (pv bits, pr bytes to come) match the class at e?
bool match_partial(const gbnf_elem * el, uint32_t e, uint32_t pv, int32_t pr) {
    const bool positive = el[e].type == GBNF_CHAR || el[e].type == GBNF_CHAR_ANY;
    if (pr < 0 || (pr == 1 && pv < 2)) return false;   // invalid, or an overlong 2-byte form
    uint32_t low = pv << (pr * 6);
    uint32_t high = low | ((1u << (pr * 6)) - 1);
    if (low == 0) {
        if (pr == 2) low = 1u << 11;
        else if (pr == 3) low = 1u << 16;
    }
    do {
        if (el[e + 1].type == GBNF_CHAR_RNG_UPPER) {
            if (el[e].value <= high && low <= el[e + 1].value) return positive;
            e += 2;
        } else if (el[e].type == GBNF_CHAR_ANY) {
            return true;
        } else {
            if (low <= el[e].value && el[e].value <= high) return positive;
            e += 1;
        }
    } while (el[e].type == GBNF_CHAR_ALT);
    return !positive;
}

// Shortest member of the class at e in UTF-8 bytes; 0 when it matches nothing.
uint8_t class_min_bytes(const gbnf_elem * el, uint32_t e) {
    const uint32_t t = el[e].type;
    if (t == GBNF_CHAR_ANY) return 1;
    if (t == GBNF_CHAR) {
        uint32_t best = GRAMMAR_INF;
        uint32_t k = e;
        do {
            uint32_t lo = el[k].value, hi = lo;
            if (el[k + 1].type == GBNF_CHAR_RNG_UPPER) { hi = el[k + 1].value; k += 2; }
            else if (el[k].type == GBNF_CHAR_ANY) { lo = 0; k += 1; }
            else k += 1;
            if (lo <= hi && lo < best) best = lo;
        } while (el[k].type == GBNF_CHAR_ALT);
        return best == GRAMMAR_INF ? 0 : utf8_bytes(best);
    }
    // Negated: the smallest code point outside every item. The candidates are 0
    // and one past each item; the first that nothing excludes wins.
    uint32_t best = GRAMMAR_INF;
    for (uint32_t cand_k = e, first = 1;; first = 0) {
        uint32_t cand;
        if (first) {
            cand = 0;
        } else {
            uint32_t hi = el[cand_k].value;
            if (el[cand_k + 1].type == GBNF_CHAR_RNG_UPPER) { hi = el[cand_k + 1].value; cand_k += 2; }
            else cand_k += 1;
            cand = hi + 1;
        }
        if (cand <= 0x10ffff && cand < best) {
            uint32_t after;
            if (match_char(el, e, cand, &after)) best = cand;
        }
        if (!first && el[cand_k].type != GBNF_CHAR_ALT) break;
    }
    return best == GRAMMAR_INF ? 0 : utf8_bytes(best);
}

uint32_t mix(uint32_t elem, uint32_t parent_hash) {
    uint32_t h = (elem * 0x9e3779b1u) ^ (parent_hash + 0x7f4a7c15u + (parent_hash << 6) + (parent_hash >> 2));
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    return h;
}

bool fail_text(char * err, size_t err_size, const char * fmt, const char * a, size_t n) {
    if (err && err_size) snprintf(err, err_size, fmt, (int) n, a);
    return false;
}

}  // namespace

grammar_limits grammar_default_limits(void) {
    grammar_limits l;
    l.max_nodes = 65536;
    l.max_tops = 16384;
    l.max_token_bytes = 1024;
    return l;
}

static size_t pools_bytes(const grammar_limits * lim, uint32_t n_elems, uint32_t n_rules) {
    size_t d = (size_t) lim->max_token_bytes + 1;
    return arena_padded((size_t) n_elems * sizeof(uint32_t)) + arena_padded(n_elems) +
           arena_padded((size_t) lim->max_nodes * sizeof(grammar_node)) +
           arena_padded((size_t) lim->max_tops * sizeof(uint32_t)) +
           arena_padded((size_t) lim->max_nodes * sizeof(uint32_t)) + arena_padded(d * sizeof(grammar_state)) +
           2 * arena_padded(d * sizeof(uint32_t)) +
           // setup scratch (released): rule minima, left-recursion marks and frames
           arena_padded((size_t) n_rules * sizeof(uint32_t)) + arena_padded(n_rules) +
           arena_padded((size_t) n_rules * 3 * sizeof(uint32_t));
}

size_t grammar_mem_size(const char * text, size_t len, const grammar_limits * lim, char * err, size_t err_size) {
    grammar_limits l = lim ? *lim : grammar_default_limits();
    if (l.max_nodes < 16 || l.max_tops < 16 || l.max_token_bytes < 1) {
        if (err && err_size) snprintf(err, err_size, "grammar limits too small");
        return 0;
    }
    gbnf_counts c;
    size_t rules = gbnf_measure(text, len, err, err_size, &c);
    if (rules == 0) return 0;
    return rules + pools_bytes(&l, c.n_elems, c.n_rules);
}

// ---------------------------------------------------------------------------
// Setup
// ---------------------------------------------------------------------------

// Fewest bytes each rule derives (GRAMMAR_INF: none), by relaxation to a fixed
// point; then rest[] per element. The work is bounded against hostile input.
static bool compute_minima(grammar * g, uint32_t * rule_min, char * err, size_t err_size) {
    const gbnf_grammar & r = g->rules;
    const gbnf_elem * el = r.elems;
    for (uint32_t i = 0; i < r.n_elems; i++) {
        g->cmin[i] = 0;
        g->rest[i] = 0;
    }
    // Class minima at each class's first element.
    for (uint32_t id = 0; id < r.n_rules; id++) {
        uint32_t e = r.rule_start[id];
        while (el[e].type != GBNF_END) {
            uint32_t t = el[e].type;
            if (t == GBNF_CHAR || t == GBNF_CHAR_NOT || t == GBNF_CHAR_ANY) {
                g->cmin[e] = class_min_bytes(el, e);
                uint32_t after;
                match_char(el, e, 0, &after);
                e = after;
            } else {
                e++;
            }
        }
    }
    for (uint32_t id = 0; id < r.n_rules; id++) rule_min[id] = GRAMMAR_INF;
    uint64_t work = 0;
    const uint64_t max_work = (uint64_t) 1 << 28;
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t id = 0; id < r.n_rules; id++) {
            uint32_t best = GRAMMAR_INF, sum = 0;
            uint32_t e = r.rule_start[id];
            for (;;) {
                uint32_t t = el[e].type;
                work++;
                if (gbnf_is_end(t)) {
                    if (sum < best) best = sum;
                    if (t == GBNF_END) break;
                    sum = 0;
                    e++;
                } else if (t == GBNF_RULE_REF) {
                    sum = sat_add(sum, rule_min[el[e].value]);
                    e++;
                } else {
                    sum = g->cmin[e] ? sat_add(sum, g->cmin[e]) : GRAMMAR_INF;
                    uint32_t after;
                    match_char(el, e, 0, &after);
                    e = after;
                }
            }
            if (best < rule_min[id]) {
                rule_min[id] = best;
                changed = true;
            }
        }
        if (work > max_work) {
            if (err && err_size) snprintf(err, err_size, "grammar too complex to analyse");
            return false;
        }
    }
    // rest[e]: the items from e to the end of its alternative, right to left.
    for (uint32_t id = 0; id < r.n_rules; id++) {
        uint32_t start = r.rule_start[id];
        uint32_t end = start;
        while (el[end].type != GBNF_END) end++;
        // Walk alternatives: find each [a, b) with b at ALT/END, fill backwards.
        uint32_t a = start;
        while (a <= end) {
            uint32_t b = a;
            while (!gbnf_is_end(el[b].type)) b++;
            // Items of [a, b) in order: record starts, then accumulate from the back.
            uint32_t acc = 0;
            // Items are found forwards; a second backwards pass needs their starts:
            // classes are recognised by their first element's type.
            uint32_t k = b;
            while (k > a) {
                // Step back to the start of the previous item.
                uint32_t s = k - 1;
                while (s > a && (el[s].type == GBNF_CHAR_ALT || el[s].type == GBNF_CHAR_RNG_UPPER)) s--;
                if (el[s].type == GBNF_RULE_REF) acc = sat_add(acc, rule_min[el[s].value]);
                else acc = g->cmin[s] ? sat_add(acc, g->cmin[s]) : GRAMMAR_INF;
                g->rest[s] = acc;
                k = s;
            }
            a = b + 1;
        }
    }
    return true;
}

// Left recursion: a depth-first walk over "leftmost" references (the first
// item of an alternative, and the next ones while every item before may be
// empty), with an explicit stack; reaching a rule still open is a cycle.
// Frame: rule, next element, whether the items before it may all be empty.
static bool check_left_recursion(grammar * g, const uint32_t * rule_min, uint8_t * mark, uint32_t * frames,
                                 char * err, size_t err_size) {
    const gbnf_grammar & r = g->rules;
    const gbnf_elem * el = r.elems;
    enum { WHITE = 0, GREY = 1, BLACK = 2 };
    memset(mark, 0, r.n_rules);
    for (uint32_t start = 0; start < r.n_rules; start++) {
        if (mark[start] != WHITE) continue;
        frames[0] = start;
        frames[1] = r.rule_start[start];
        frames[2] = 1;
        mark[start] = GREY;
        uint32_t depth = 1;
        while (depth > 0) {
            uint32_t * f = frames + 3 * (depth - 1);
            const uint32_t e = f[1];
            const uint32_t t = el[e].type;
            if (t == GBNF_END) {
                mark[f[0]] = BLACK;
                depth--;
                continue;
            }
            if (t == GBNF_ALT) {
                f[1] = e + 1;
                f[2] = 1;
                continue;
            }
            if (t != GBNF_RULE_REF) {
                uint32_t after;
                match_char(el, e, 0, &after);
                f[1] = after;
                f[2] = 0;
                continue;
            }
            const uint32_t child = el[e].value;
            const bool leftmost = f[2] != 0;
            f[1] = e + 1;
            f[2] = leftmost && rule_min[child] == 0;
            if (!leftmost) continue;
            if (mark[child] == GREY) {
                return fail_text(err, err_size, "left recursion in rule '%.*s'", r.names + r.name_off[child],
                                 r.name_len[child]);
            }
            if (mark[child] == BLACK) continue;
            mark[child] = GREY;
            uint32_t * c = frames + 3 * depth;
            c[0] = child;
            c[1] = r.rule_start[child];
            c[2] = 1;
            depth++;
        }
    }
    return true;
}

tern_status grammar_init(grammar * g, tern_arena * arena, const char * text, size_t len, const char * root,
                         const grammar_limits * lim, char * err, size_t err_size) {
    memset(g, 0, sizeof(*g));
    g->lim = lim ? *lim : grammar_default_limits();
    tern_status st = gbnf_parse(text, len, arena, &g->rules, err, err_size);
    if (st != TERN_OK) return st;
    const char * root_name = root ? root : "root";
    int32_t rid = gbnf_find(&g->rules, root_name);
    if (rid < 0) {
        if (err && err_size) snprintf(err, err_size, "no rule named '%.64s' to start from", root_name);
        return TERN_ERR_INVALID_ARG;
    }
    g->root = (uint32_t) rid;
    const uint32_t n_elems = g->rules.n_elems, n_rules = g->rules.n_rules;
    const size_t d = (size_t) g->lim.max_token_bytes + 1;
    g->rest = (uint32_t *) arena_alloc(arena, (size_t) n_elems * sizeof(uint32_t), TERN_MEM_SAMPLER);
    g->cmin = (uint8_t *) arena_alloc(arena, n_elems, TERN_MEM_SAMPLER);
    g->nodes = (grammar_node *) arena_alloc(arena, (size_t) g->lim.max_nodes * sizeof(grammar_node), TERN_MEM_SAMPLER);
    g->tops = (uint32_t *) arena_alloc(arena, (size_t) g->lim.max_tops * sizeof(uint32_t), TERN_MEM_SAMPLER);
    g->work = (uint32_t *) arena_alloc(arena, (size_t) g->lim.max_nodes * sizeof(uint32_t), TERN_MEM_SAMPLER);
    g->path = (grammar_state *) arena_alloc(arena, d * sizeof(grammar_state), TERN_MEM_SAMPLER);
    g->path_nodes = (uint32_t *) arena_alloc(arena, d * sizeof(uint32_t), TERN_MEM_SAMPLER);
    g->path_tops = (uint32_t *) arena_alloc(arena, d * sizeof(uint32_t), TERN_MEM_SAMPLER);
    size_t mark = arena_temp_mark(arena);
    uint32_t * rule_min = (uint32_t *) arena_alloc_temp(arena, (size_t) n_rules * sizeof(uint32_t));
    uint8_t * marks = (uint8_t *) arena_alloc_temp(arena, n_rules);
    uint32_t * frames = (uint32_t *) arena_alloc_temp(arena, (size_t) n_rules * 3 * sizeof(uint32_t));
    if (!g->rest || !g->cmin || !g->nodes || !g->tops || !g->work || !g->path || !g->path_nodes || !g->path_tops ||
        !rule_min ||
        !marks || !frames) {
        arena_temp_release(arena, mark);
        if (err && err_size) snprintf(err, err_size, "out of memory for the grammar's tables");
        return TERN_ERR_NO_MEMORY;
    }
    bool ok = compute_minima(g, rule_min, err, err_size) && check_left_recursion(g, rule_min, marks, frames, err, err_size);
    if (ok && rule_min[g->root] == GRAMMAR_INF) {
        fail_text(err, err_size, "rule '%.*s' admits no finite text", g->rules.names + g->rules.name_off[g->root],
                  g->rules.name_len[g->root]);
        ok = false;
    }
    arena_temp_release(arena, mark);
    if (!ok) return TERN_ERR_INVALID_ARG;
    st = grammar_reset(g);
    if (st != TERN_OK && err && err_size) snprintf(err, err_size, "%s", tern_last_error());
    return st;
}

// ---------------------------------------------------------------------------
// Stacks
// ---------------------------------------------------------------------------

static bool limit(grammar * g, const char * what, uint32_t n) {
    if (g->error == TERN_OK) {
        g->error = tern_fail(TERN_ERR_NO_MEMORY, "grammar: more than %u %s (a larger grammar memory lifts the limit)",
                             (unsigned) n, what);
    }
    return false;
}

static uint32_t new_node(grammar * g, uint32_t elem, uint32_t parent) {
    if (g->n_nodes == g->lim.max_nodes) {
        limit(g, "parse-stack nodes", g->lim.max_nodes);
        return GRAMMAR_NIL;
    }
    uint32_t i = g->n_nodes++;
    grammar_node & n = g->nodes[i];
    n.elem = elem;
    n.parent = parent;
    uint32_t pc = parent == GRAMMAR_NIL ? 0 : g->nodes[parent].cost;
    uint32_t ph = parent == GRAMMAR_NIL ? 0x12345u : g->nodes[parent].hash;
    n.cost = sat_add(g->rest[elem], pc);
    n.hash = mix(elem, ph);
    return i;
}

static bool same_stack(const grammar * g, uint32_t a, uint32_t b) {
    while (a != b) {
        if (a == GRAMMAR_NIL || b == GRAMMAR_NIL) return false;
        const grammar_node & x = g->nodes[a];
        const grammar_node & y = g->nodes[b];
        if (x.elem != y.elem || x.hash != y.hash) return false;
        a = x.parent;
        b = y.parent;
    }
    return true;
}

// Add stack t to the set tops[from, n_tops) unless an equal one is there.
static bool add_top(grammar * g, uint32_t from, uint32_t t) {
    const uint32_t h = t == GRAMMAR_NIL ? 0 : g->nodes[t].hash;
    for (uint32_t i = from; i < g->n_tops; i++) {
        uint32_t u = g->tops[i];
        if (u == t) return true;
        if (u != GRAMMAR_NIL && t != GRAMMAR_NIL && g->nodes[u].hash == h && same_stack(g, u, t)) return true;
    }
    if (g->n_tops == g->lim.max_tops) return limit(g, "parse stacks", g->lim.max_tops);
    g->tops[g->n_tops++] = t;
    return true;
}

// Expand rule references at the top of stack t until a class (or the empty
// stack) is on top, adding each result to the set starting at `from`.
static bool advance(grammar * g, uint32_t from, uint32_t t) {
    const gbnf_elem * el = g->rules.elems;
    uint32_t n_work = 0;
    g->work[n_work++] = t;
    while (n_work > 0) {
        if (++g->steps > GRAMMAR_MAX_STEPS) {
            if (g->error == TERN_OK) {
                g->error = tern_fail(TERN_ERR_INVALID_ARG, "grammar: more than %u expansions for one character",
                                     GRAMMAR_MAX_STEPS);
            }
            return false;
        }
        uint32_t x = g->work[--n_work];
        if (x == GRAMMAR_NIL || el[g->nodes[x].elem].type != GBNF_RULE_REF) {
            if (!add_top(g, from, x)) return false;
            continue;
        }
        const uint32_t e = g->nodes[x].elem;
        uint32_t base = g->nodes[x].parent;
        if (!gbnf_is_end(el[e + 1].type)) {
            base = new_node(g, e + 1, base);
            if (base == GRAMMAR_NIL) return false;
        }
        // The alternatives of the referenced rule, pushed last-first so the first is expanded first.
        uint32_t sub = g->rules.rule_start[el[e].value];
        uint32_t mark = n_work;
        for (;;) {
            uint32_t y = base;
            if (!gbnf_is_end(el[sub].type)) {
                y = new_node(g, sub, base);
                if (y == GRAMMAR_NIL) return false;
            }
            if (n_work == g->lim.max_nodes) return limit(g, "pending expansions", g->lim.max_nodes);
            g->work[n_work++] = y;
            while (!gbnf_is_end(el[sub].type)) sub++;
            if (el[sub].type != GBNF_ALT) break;
            sub++;
        }
        // Reverse what this expansion pushed.
        for (uint32_t i = mark, j = n_work - 1; i < j; i++, j--) {
            uint32_t tmp = g->work[i];
            g->work[i] = g->work[j];
            g->work[j] = tmp;
        }
    }
    return true;
}

// The state after code point cp from stacks tops[s.tb, s.te); dead: tb == te.
static grammar_state step_cp(grammar * g, const grammar_state & s, uint32_t cp) {
    const gbnf_elem * el = g->rules.elems;
    grammar_state out = {g->n_tops, g->n_tops, 0, 0};
    g->steps = 0;
    for (uint32_t i = s.tb; i < s.te; i++) {
        uint32_t t = g->tops[i];
        if (t == GRAMMAR_NIL) continue;
        uint32_t after;
        if (!match_char(el, g->nodes[t].elem, cp, &after)) continue;
        uint32_t base = g->nodes[t].parent;
        if (!gbnf_is_end(el[after].type)) {
            base = new_node(g, after, base);
            if (base == GRAMMAR_NIL) break;
        }
        if (!advance(g, out.tb, base)) break;
    }
    out.te = g->n_tops;
    if (g->error != TERN_OK) out.te = out.tb;
    return out;
}

// The state after one byte. Partial sequences keep the stacks and are dead
// when no stack's class can take any completion of them.
static grammar_state step_byte(grammar * g, const grammar_state & s, uint8_t b) {
    grammar_state dead = {g->n_tops, g->n_tops, 0, 0};
    uint32_t pv;
    int32_t pr;
    if (s.pr > 0) {
        if ((b & 0xc0) != 0x80) return dead;
        pv = (s.pv << 6) | (b & 0x3f);
        pr = s.pr - 1;
        if (pr == 0) return step_cp(g, s, pv);
    } else if (b < 0x80) {
        return step_cp(g, s, b);
    } else if ((b & 0xe0) == 0xc0) {
        pv = b & 0x1f; pr = 1;
    } else if ((b & 0xf0) == 0xe0) {
        pv = b & 0x0f; pr = 2;
    } else if ((b & 0xf8) == 0xf0) {
        pv = b & 0x07; pr = 3;
    } else {
        return dead;
    }
    const gbnf_elem * el = g->rules.elems;
    for (uint32_t i = s.tb; i < s.te; i++) {
        uint32_t t = g->tops[i];
        if (t != GRAMMAR_NIL && match_partial(el, g->nodes[t].elem, pv, pr)) return grammar_state{s.tb, s.te, pv, pr};
    }
    return dead;
}

// Fewest bytes that complete state s.
static uint32_t state_cost(const grammar * g, const grammar_state & s) {
    uint32_t best = GRAMMAR_INF;
    for (uint32_t i = s.tb; i < s.te; i++) {
        uint32_t t = g->tops[i];
        uint32_t c;
        if (t == GRAMMAR_NIL) {
            if (s.pr > 0) continue;
            c = 0;
        } else if (s.pr > 0) {
            const grammar_node & n = g->nodes[t];
            if (!match_partial(g->rules.elems, n.elem, s.pv, s.pr)) continue;
            uint32_t rest = n.cost - g->cmin[n.elem];
            c = sat_add((uint32_t) s.pr, rest);
        } else {
            c = g->nodes[t].cost;
        }
        if (c < best) best = c;
    }
    return best;
}

// Compact the pool to the nodes the current state's stacks use and move its tops to 0.
static void compact(grammar * g, const grammar_state & s) {
    uint32_t * map = g->work;   // per node: 1 when live, then its new index
    const uint32_t n = g->n_nodes;
    for (uint32_t i = 0; i < n; i++) map[i] = 0;
    for (uint32_t i = s.tb; i < s.te; i++) {
        for (uint32_t t = g->tops[i]; t != GRAMMAR_NIL && !map[t]; t = g->nodes[t].parent) map[t] = 1;
    }
    uint32_t next = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!map[i]) continue;
        grammar_node node = g->nodes[i];
        if (node.parent != GRAMMAR_NIL) node.parent = map[node.parent];   // already renumbered: parents are lower
        g->nodes[next] = node;
        map[i] = next++;
    }
    g->n_nodes = next;
    uint32_t k = 0;
    for (uint32_t i = s.tb; i < s.te; i++) {
        uint32_t t = g->tops[i];
        g->tops[k++] = t == GRAMMAR_NIL ? t : map[t];
    }
    g->n_tops = k;
    g->cur = grammar_state{0, k, s.pv, s.pr};
}

tern_status grammar_reset(grammar * g) {
    g->error = TERN_OK;
    g->n_nodes = 0;
    g->n_tops = 0;
    g->steps = 0;
    const gbnf_elem * el = g->rules.elems;
    // One stack per alternative of the start rule, each advanced to its first class.
    uint32_t sub = g->rules.rule_start[g->root];
    for (;;) {
        uint32_t t = GRAMMAR_NIL;
        if (!gbnf_is_end(el[sub].type)) t = new_node(g, sub, GRAMMAR_NIL);
        if (g->error != TERN_OK || !advance(g, 0, t)) break;
        while (!gbnf_is_end(el[sub].type)) sub++;
        if (el[sub].type != GBNF_ALT) break;
        sub++;
    }
    if (g->error != TERN_OK) return g->error;
    g->cur = grammar_state{0, g->n_tops, 0, 0};
    return TERN_OK;
}

// Step the bytes from the current state; the final state (dead: tb == te).
static grammar_state walk_bytes(grammar * g, const uint8_t * bytes, size_t n) {
    grammar_state s = g->cur;
    for (size_t i = 0; i < n; i++) {
        s = step_byte(g, s, bytes[i]);
        if (s.tb == s.te) break;
    }
    return s;
}

tern_status grammar_accept(grammar * g, const uint8_t * bytes, size_t n) {
    if (g->error != TERN_OK) return g->error;
    const uint32_t nodes0 = g->n_nodes, tops0 = g->n_tops;
    grammar_state s = walk_bytes(g, bytes, n);
    if (g->error != TERN_OK || s.tb == s.te) {
        g->n_nodes = nodes0;
        g->n_tops = tops0;
        if (g->error != TERN_OK) {
            tern_status st = g->error;
            g->error = TERN_OK;
            return st;
        }
        return tern_fail(TERN_ERR_INVALID_ARG, "grammar: the text '%.*s' does not fit", (int) (n < 40 ? n : 40),
                         (const char *) bytes);
    }
    compact(g, s);
    return TERN_OK;
}

int grammar_try(grammar * g, const uint8_t * bytes, size_t n, uint32_t budget) {
    if (g->error != TERN_OK) return -1;
    const uint32_t nodes0 = g->n_nodes, tops0 = g->n_tops;
    grammar_state s = walk_bytes(g, bytes, n);
    int ok = s.tb != s.te && (budget == GRAMMAR_INF || state_cost(g, s) <= budget);
    g->n_nodes = nodes0;
    g->n_tops = tops0;
    return g->error != TERN_OK ? -1 : ok;
}

tern_status grammar_filter(grammar * g, const grammar_vocab * v, uint32_t budget, uint8_t * allowed,
                           uint32_t * min_cost) {
    memset(allowed, 0, v->n_vocab);
    uint32_t best = GRAMMAR_INF;
    if (g->error != TERN_OK) return g->error;
    const uint32_t nodes0 = g->n_nodes, tops0 = g->n_tops;
    if (v->max_len > g->lim.max_token_bytes) {
        return tern_fail(TERN_ERR_NO_MEMORY, "grammar: a piece of %u bytes is longer than the walk's %u",
                         (unsigned) v->max_len, (unsigned) g->lim.max_token_bytes);
    }
    g->path[0] = g->cur;
    g->path_nodes[0] = g->n_nodes;
    g->path_tops[0] = g->n_tops;
    uint32_t depth = 0;               // states path[0..depth] are those of the current piece's prefix
    uint32_t dead_at = GRAMMAR_INF;   // the prefix of this length died
    for (uint32_t i = 0; i < v->n_sorted; i++) {
        const uint32_t tok = v->order[i];
        const uint32_t common = v->lcp[i];
        if (common >= dead_at) continue;
        dead_at = GRAMMAR_INF;
        if (depth > common) {
            depth = common;
            g->n_nodes = g->path_nodes[depth];
            g->n_tops = g->path_tops[depth];
        }
        const uint8_t * piece = v->bytes + v->off[tok];
        const uint32_t len = v->len[tok];
        while (depth < len) {
            grammar_state s = step_byte(g, g->path[depth], piece[depth]);
            if (g->error != TERN_OK) {
                tern_status st = g->error;
                g->error = TERN_OK;
                g->n_nodes = nodes0;
                g->n_tops = tops0;
                return st;
            }
            depth++;
            g->path[depth] = s;
            g->path_nodes[depth] = g->n_nodes;
            g->path_tops[depth] = g->n_tops;
            if (s.tb == s.te) {
                dead_at = depth;
                break;
            }
        }
        if (dead_at != GRAMMAR_INF) continue;
        if (budget == GRAMMAR_INF && !min_cost) {
            allowed[tok] = 1;
            continue;
        }
        const uint32_t cost = state_cost(g, g->path[len]);
        if (cost < best) best = cost;
        if (cost <= budget) allowed[tok] = 1;
    }
    g->n_nodes = nodes0;
    g->n_tops = tops0;
    if (min_cost) *min_cost = best;
    return TERN_OK;
}

bool grammar_can_end(const grammar * g) {
    if (g->cur.pr > 0) return false;
    for (uint32_t i = g->cur.tb; i < g->cur.te; i++) {
        if (g->tops[i] == GRAMMAR_NIL) return true;
    }
    return false;
}

bool grammar_must_end(const grammar * g) {
    return g->cur.pr == 0 && g->cur.te == g->cur.tb + 1 && g->tops[g->cur.tb] == GRAMMAR_NIL;
}

bool grammar_accept_cp(grammar * g, uint32_t cp) {
    grammar_state s = step_cp(g, g->cur, cp);
    if (g->error != TERN_OK || s.tb == s.te) {
        g->error = TERN_OK;
        g->cur = grammar_state{0, 0, 0, 0};
        g->n_tops = 0;
        return false;
    }
    compact(g, s);
    return true;
}

uint32_t grammar_n_stacks(const grammar * g) { return g->cur.te - g->cur.tb; }

}  // namespace tern
