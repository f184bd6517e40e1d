# Declares zero-opt's libraries and tools together with their install rules,
# as MLIR's AddMLIR.cmake and CIRCT's AddCIRCT.cmake do: a library declared
# with add_zero_*library is installed into lib/ and exported by the CMake
# package ZeroOpt under its own name, a tool declared with add_zero_tool is
# installed into bin/ (docs/Embedding.md, "Adding a library or a tool").

include(GNUInstallDirs)

# Installs the library `name` and exports it into ZeroOptTargets; its
# imported target carries the installed include directory. A plugin (a MODULE
# library, loaded and never linked) is installed and not exported.
function(zero_install_library name)
  get_target_property(type ${name} TYPE)
  if(type STREQUAL "MODULE_LIBRARY")
    set_target_properties(${name} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
    install(TARGETS ${name}
      COMPONENT ${name}
      LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
    return()
  endif()
  install(TARGETS ${name}
    EXPORT ZeroOptTargets
    COMPONENT ${name}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  set_property(GLOBAL APPEND PROPERTY ZERO_EXPORTED_LIBS ${name})
endfunction()

# add_mlir_library, add_mlir_dialect_library and
# add_mlir_translation_library with zero-opt's install rule instead of
# MLIR's (which would export into MLIRTargets).
function(add_zero_library name)
  add_mlir_library(${name} ${ARGN} DISABLE_INSTALL)
  zero_install_library(${name})
endfunction()

function(add_zero_dialect_library name)
  add_mlir_dialect_library(${name} ${ARGN} DISABLE_INSTALL)
  zero_install_library(${name})
endfunction()

function(add_zero_translation_library name)
  add_mlir_translation_library(${name} ${ARGN} DISABLE_INSTALL)
  zero_install_library(${name})
endfunction()

# An executable of bin/ (add_llvm_executable's arguments), installed and
# exported as an imported executable of the same name. Installed, it finds
# libMLIR.so where it was linked (not in the prefix).
function(add_zero_tool name)
  add_llvm_executable(${name} ${ARGN})
  llvm_update_compile_flags(${name})
  set_target_properties(${name} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS ${name}
    EXPORT ZeroOptTargets
    COMPONENT ${name}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()
