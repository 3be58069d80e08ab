// The messages file of `tern chat --messages`: an OpenAI-style JSON array of
// {"role": "...", "content": "..."} objects. A small strict reader (strings
// with every JSON escape, \uXXXX surrogate pairs to UTF-8; other keys and
// values are skipped); errors give the line and column.
#pragma once
#include <string>
#include <vector>

struct chat_msg {
    std::string role;
    std::string content;
};

// false with *error set ("line L, column C: ...") on malformed input.
bool chat_json_parse_messages(const std::string & text, std::vector<chat_msg> * out, std::string * error);
