# Vocabulary and tokenizers.
tern_add_test(NAME test_tokenizer_vectors SOURCES test_tokenizer_vectors.cpp SHARED)
tern_add_test(NAME test_vocab_pretokenize SOURCES test_vocab_pretokenize.cpp)
tern_add_test(NAME test_vocab_tokenize SOURCES test_vocab_tokenize.cpp SHARED)
