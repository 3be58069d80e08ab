# Bench tools as a user runs them (tern-make-model: synthetic models with real shapes).
if(TARGET tern-make-model)
  tern_add_test(NAME test_make_model SOURCES test_make_model.cpp SHARED)
  add_dependencies(test_make_model tern-make-model)
endif()
