# Chat templates (src/chat/, tern_chat_apply_template).
tern_add_test(NAME test_chat_template SOURCES test_chat_template.cpp)
