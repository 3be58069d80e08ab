# Not a toolchain file: helpers for tests/*.cmake in cross builds.
#
# A cross build (toolchain/*.cmake) runs the test programs under
# CMAKE_CROSSCOMPILING_EMULATOR (qemu-user): ctest puts it before the program
# of each add_test(COMMAND <target>). Programs that a test starts itself, from
# a shell or with popen(), need it too:
#   tern_emulated(<target> <var>)   <var> = a path that runs <target>: its own
#       file in a native build; in a cross build the script
#       bin-emu/<its file name>, which execs the emulator with it;
#   tern_emulated_bin_dir(<test> <target>...)   the test's TERN_BIN_DIR points at
#       bin-emu/ (scripts for the targets) in a cross build; nothing natively.
set(TERN_EMU_BIN_DIR ${PROJECT_BINARY_DIR}/bin-emu)

function(tern_emulated target var)
  if(NOT CMAKE_CROSSCOMPILING OR NOT CMAKE_CROSSCOMPILING_EMULATOR)
    set(${var} $<TARGET_FILE:${target}> PARENT_SCOPE)
    return()
  endif()
  set(${var} ${TERN_EMU_BIN_DIR}/$<TARGET_FILE_NAME:${target}> PARENT_SCOPE)
  get_property(done GLOBAL PROPERTY TERN_EMULATED_TARGETS)
  if(target IN_LIST done)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY TERN_EMULATED_TARGETS ${target})
  list(TRANSFORM CMAKE_CROSSCOMPILING_EMULATOR REPLACE "(.+)" "'\\1'" OUTPUT_VARIABLE emu)
  list(JOIN emu " " emu)
  file(GENERATE OUTPUT ${TERN_EMU_BIN_DIR}/$<TARGET_FILE_NAME:${target}>
       CONTENT "#!/bin/sh\nexec ${emu} '$<TARGET_FILE:${target}>' \"$@\"\n"
       FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endfunction()

function(tern_emulated_bin_dir test)
  if(NOT CMAKE_CROSSCOMPILING OR NOT CMAKE_CROSSCOMPILING_EMULATOR)
    return()
  endif()
  foreach(target ${ARGN})
    tern_emulated(${target} unused)
  endforeach()
  get_test_property(${test} ENVIRONMENT env)
  list(TRANSFORM env REPLACE "^TERN_BIN_DIR=.*" "TERN_BIN_DIR=${TERN_EMU_BIN_DIR}")
  set_tests_properties(${test} PROPERTIES ENVIRONMENT "${env}")
endfunction()
