tern_add_test(NAME test_arena SOURCES test_arena.cpp)
