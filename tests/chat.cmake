# Chat templates (src/chat/, tern_chat_apply_template).
tern_add_test(NAME test_chat_template SOURCES test_chat_template.cpp)
# The Jinja engine and tern_chat_apply: llama.cpp's --jinja cases, the language, hostile templates.
if(TERN_JINJA)
  tern_add_test(NAME test_chat_jinja SOURCES test_chat_jinja.cpp)
endif()
