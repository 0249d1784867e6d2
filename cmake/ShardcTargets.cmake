# How shardc's own libraries are declared, one function per kind, so every
# library gets the same warnings and the tablegen headers it includes are
# generated before it compiles without anyone listing them by hand.
#
#   shardc_add_library(NAME SOURCES src... [DEPS lib...])
#       plain C++ (no MLIR): the pieces unit-tested without a context.
#   shardc_add_mlir_tool(NAME SOURCES src... [DEPS lib...])
#       a command line over the MLIR libraries (shardc, shardc-opt).
#   shardc_add_mlir_library(NAME SOURCES src... [DEPS lib...] [TABLEGEN target...])
#       a dialect, pass or compiler library: links MLIR and LLVM. TABLEGEN
#       names the library's own *IncGen targets; they are recorded on it, so
#       a library that lists it in DEPS also waits for them (its headers
#       include the generated .inc files).

set(SHARDC_WARNINGS -Wall -Wextra)
# ODS-generated builders and adaptors leave parameters unused by design (LLVM
# builds MLIR itself with this flag too).
set(SHARDC_MLIR_WARNINGS -Wno-unused-parameter)

function(_shardc_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;TABLEGEN" ${ARGN})
  add_library(${name} ${ARG_SOURCES})
  # The Python module (python/) links the compiler for shardc.compile, so
  # the libraries are position-independent. Sanitized and fuzzing builds
  # have no module: their libraries keep their folder's default (runtime/'s
  # are position-independent for libshardc_runtime.so anyway), and their
  # objects and caches stay as they were.
  if(NOT SHARDC_SANITIZE AND NOT SHARDC_FUZZ)
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
  target_compile_options(${name} PRIVATE ${SHARDC_WARNINGS})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  # Generated headers: the library's own and those of every shardc library
  # it depends on (recorded as SHARDC_INCGEN on each).
  set(incgen ${ARG_TABLEGEN})
  foreach(dep IN LISTS ARG_DEPS)
    if(TARGET ${dep})
      get_target_property(dep_incgen ${dep} SHARDC_INCGEN)
      if(dep_incgen)
        list(APPEND incgen ${dep_incgen})
      endif()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES incgen)
  if(incgen)
    add_dependencies(${name} ${incgen})
    set_target_properties(${name} PROPERTIES SHARDC_INCGEN "${incgen}")
  endif()
endfunction()

function(shardc_add_library name)
  _shardc_library(${name} ${ARGN})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
endfunction()

function(shardc_add_mlir_library name)
  _shardc_library(${name} ${ARGN})
  target_compile_options(${name} PRIVATE ${SHARDC_MLIR_WARNINGS})
  target_link_libraries(${name} PUBLIC MLIR LLVM)
endfunction()

function(shardc_add_mlir_tool name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${SHARDC_WARNINGS} ${SHARDC_MLIR_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} MLIR LLVM)
endfunction()

# shardc_add_doc(TD OUTPUT tblgen-args...)
#   The reference page OUTPUT (a .md) generated from TD by mlir-tblgen
#   (-gen-dialect-doc, -gen-pass-doc), written to build/docs/ by every build:
#   the .td descriptions are the one source, so the pages cannot go stale.
function(shardc_add_doc td output)
  set(LLVM_TARGET_DEFINITIONS ${td})
  mlir_tablegen(${output} ${ARGN})
  set(page ${PROJECT_BINARY_DIR}/docs/${output})
  add_custom_command(OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_BINARY_DIR}/${output} ${page}
    DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/${output})
  get_filename_component(name ${output} NAME_WE)
  add_custom_target(ShardcDoc${name} ALL DEPENDS ${page})
endfunction()
