// JSON (RFC 8259): a strict reader into a tree in an arena, and a writer with
// nlohmann::json's dump() conventions (the JSON-schema converter and the chat
// template engine print values the way llama.cpp does).
//
// Reading is two passes over the text with the same code: json_measure()
// validates it and counts the nodes and the decoded string bytes, so the
// caller sizes memory exactly; json_parse() then builds the tree in that
// memory. Neither recurses: nesting is an explicit stack of at most
// JSON_MAX_DEPTH open containers (deeper input is an error, not a crash).
//
// Tree shape: every value is one json_node; a container links its children in
// order (first/next), an object's children carry their key. Strings are
// decoded (escapes, \uXXXX surrogate pairs to UTF-8) into the arena and
// NUL-terminated; input that is not valid UTF-8 is refused. Numbers keep
// whether they were written as integers (no '.', 'e', and within int64), as
// nlohmann does, plus the double.
//
//   {"a": [1, 2.5]}  ->  OBJECT --first--> ARRAY(key "a") --first--> INT 1 --next--> FLOAT 2.5
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "tern.h"

namespace tern {

#define JSON_MAX_DEPTH 128

enum json_type : uint8_t { JSON_NULL, JSON_BOOL, JSON_INT, JSON_FLOAT, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json_node {
    json_type    type;
    bool         b;          // JSON_BOOL
    uint32_t     n;          // string bytes; children of a container
    int64_t      i;          // JSON_INT
    double       d;          // JSON_INT and JSON_FLOAT
    const char * s;          // JSON_STRING: decoded, NUL-terminated
    const char * key;        // member of an object: its decoded key (NUL-terminated)
    uint32_t     key_len;
    json_node *  first;      // container: first child
    json_node *  last;       // container: last child
    json_node *  next;       // next sibling
};

// Bytes json_parse needs for this text (arena_padded sizes of its
// allocations); 0 with err set ("line L, column C: ...") when the text is no
// valid JSON. err may be NULL.
size_t json_measure(const char * text, size_t len, char * err, size_t err_size);

// Parse into the arena (at least json_measure() bytes free). NULL with err set
// on malformed text or a full arena.
json_node * json_parse(const char * text, size_t len, tern_arena * arena, char * err, size_t err_size);

// Lookups. NULL when absent (or obj is no object).
json_node * json_get(const json_node * obj, const char * key);
json_node * json_at(const json_node * arr, uint32_t index);
bool json_is_number(const json_node * v);
bool json_str_eq(const json_node * v, const char * s);

// Equality of two values (numbers by value, objects by key set, arrays in order).
bool json_equal(const json_node * a, const json_node * b);

// A bounded text sink: appends what fits and counts what a full output needs.
struct text_out {
    char *   buf;
    size_t   cap;
    uint64_t len;
    void put(const char * s, size_t n);
    void puts(const char * z);
    void putc(char c) { put(&c, 1); }
};

// The value as nlohmann's dump(indent) writes it: indent < 0 compact
// ({"a":[1,2]}), else newlines and indent spaces per level ("key": value).
void json_write(text_out * out, const json_node * v, int indent);
// A string as a JSON literal (quotes, \" \\ \b \f \n \r \t, other control
// bytes as \u00xx, everything else as is), as nlohmann writes strings.
void json_write_string(text_out * out, const char * s, size_t n);
// The shortest decimal digits that read back to d (finite and not zero):
// digits[0..k) without a point or trailing zeros, *exp10 the decimal exponent
// of the first digit, *neg the sign. digits needs 24 bytes; returns k.
int double_shortest_digits(double d, char * digits, int * exp10, bool * neg);
// A double as nlohmann writes it: the shortest text that reads back to the
// same double, ".0" appended to integral values, exponents as e+XX / e-XX.
// buf needs 32 bytes; returns the length.
int json_format_double(double d, char * buf);

}  // namespace tern
