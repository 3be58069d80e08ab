# Sampler chain on hand-made logits (no model needed).
tern_add_test(NAME test_sampler SOURCES test_sampler.cpp)
