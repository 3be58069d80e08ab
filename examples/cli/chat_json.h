// The messages file of `tern chat --messages`: an OpenAI-style JSON array of
// {"role": "...", "content": "..."} objects. A small strict reader (RFC 8259
// grammar; strings with every JSON escape, \uXXXX surrogate pairs to UTF-8;
// content may also be null or an array of {"type": "text", "text": ...} parts,
// joined with "\n" as llama.cpp does; other keys and values are checked and
// skipped). Bounded: nesting depth at most CHAT_JSON_MAX_DEPTH, no recursion
// beyond it. Errors give the line and column (1-based, columns in characters).
#pragma once
#include <string>
#include <vector>

struct chat_msg {
    std::string role;
    std::string content;
};

#define CHAT_JSON_MAX_DEPTH 64

// false with *error set ("line L, column C: ...") on malformed input.
bool chat_json_parse_messages(const std::string & text, std::vector<chat_msg> * out, std::string * error);
