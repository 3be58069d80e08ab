// JSON schema -> GBNF, the grammar llama.cpp's json_schema_to_grammar writes
// for the same schema (byte for byte on its test cases), so that a model
// constrained by it can only write JSON the schema accepts.
//
// Supported: type (a name or a list), properties / required /
// additionalProperties (false, true or a schema), enum, const, items (a
// schema, or a list for tuples), prefixItems, minItems / maxItems, anyOf /
// oneOf (both as "any of": alternatives that overlap are not excluded),
// allOf of object parts, pattern (anchored ^...$: literals, . [...] ( ) |
// * + ? {m,n}, and \d \w \s), minLength / maxLength, integer minimum /
// maximum / exclusiveMinimum / exclusiveMaximum, format date / time /
// date-time / uuid, $ref to "#/$defs/..." or "#/definitions/..." (any local
// JSON pointer). Annotations are ignored (title, description, $schema, $id,
// $comment, default, examples, deprecated, readOnly, writeOnly, $defs,
// definitions, other formats).
//
// Every other keyword is an error that names it ("unsupported keyword
// 'uniqueItems'"), as is a supported keyword where it has no effect (minimum
// on a "number"): the grammar would otherwise let through JSON the schema
// rejects. JSON_SCHEMA_LENIENT ignores them instead, as llama.cpp does.
//
// Shapes of the output (llama.cpp's):
//   {"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}
//     a-kv ::= "\"a\"" space ":" space integer
//     root ::= "{" space a-kv "}" space
//     integer ::= ("-"? integral-part) space   (and its helpers, sorted by name)
//
// Memory: everything comes from the arena (json_schema_mem_size() is the
// bound the tern.h entry point uses); an arena too small is an error. The
// schema's structure is walked by bounded recursion (nesting at most
// JSON_SCHEMA_MAX_DEPTH schemas or $ref hops deep): this file is compiled in
// hosted builds only (TERN_JSON_SCHEMA), outside the freestanding stack bound.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "tern.h"

namespace tern {

#define JSON_SCHEMA_LENIENT 1u
#define JSON_SCHEMA_MAX_DEPTH 64

// A bound on the arena bytes converting a schema of len bytes takes.
size_t json_schema_mem_size(const char * schema, size_t len);

// Convert; *out points into the arena (NUL-terminated, out_len bytes).
// TERN_ERR_INVALID_ARG with err set for bad JSON or an unsupported schema,
// TERN_ERR_NO_MEMORY when the arena is too small.
tern_status json_schema_to_gbnf(const char * schema, size_t len, uint32_t flags, tern_arena * arena, const char ** out,
                                size_t * out_len, char * err, size_t err_size);

}  // namespace tern
