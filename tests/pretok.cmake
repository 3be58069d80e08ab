# Every llama.cpp pre-tokenizer against llama.cpp's own splits and ids
# (tests/data/pretok; regenerate with tests/tools/gen_pretok_vectors.cpp).
tern_add_test(NAME test_pretokenizers SOURCES test_pretokenizers.cpp SHARED)
