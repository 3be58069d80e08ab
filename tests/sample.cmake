# Sampler chain on hand-made logits (no model needed).
tern_add_test(NAME test_sampler SOURCES test_sampler.cpp)
# GBNF parser, grammar engine and JSON-schema conversion against llama.cpp's test facts,
# and the grammar stage in the chain (schema-constrained runs validate).
if(TERN_JSON_SCHEMA)
  tern_add_test(NAME test_grammar SOURCES test_grammar.cpp)
  tern_add_test(NAME test_grammar_sampler SOURCES test_grammar_sampler.cpp SHARED)
  tern_add_test(NAME test_grammar_vocabs PROGRAM test_grammar_sampler ARGS --vocabularies SHARED)
endif()
