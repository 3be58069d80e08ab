# The CLI as a user runs it (needs the `tern` executable).
if(TARGET tern_cli)
  tern_add_test(NAME test_cli SOURCES test_cli.cpp SHARED)
  if(TARGET test_cli)
    add_dependencies(test_cli tern_cli)
  endif()
endif()
