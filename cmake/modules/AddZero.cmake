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

# MLIR's headers, parsed once per build instead of once per source file:
# parsing them is about two thirds of a pass's compile time at -O3 (12 of
# 17 s for Partition.cpp here; 6 s with them precompiled). The first target
# that asks compiles them; the others reuse its precompiled header (their
# flags are the same: a mismatch would only cost the time, GCC then parses
# the headers as usual and -Winvalid-pch says so). Only MLIR's headers,
# which a change of ours never invalidates.
set(ZERO_PRECOMPILED_MLIR_HEADERS
  <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/Func/IR/FuncOps.h>
  <mlir/Dialect/Linalg/IR/Linalg.h>
  <mlir/Dialect/Math/IR/Math.h>
  <mlir/Dialect/SCF/IR/SCF.h>
  <mlir/Dialect/Tensor/IR/Tensor.h>
  <mlir/IR/Builders.h>
  <mlir/IR/BuiltinOps.h>
  <mlir/IR/PatternMatch.h>
  <mlir/Pass/Pass.h>
)
function(zero_precompile_mlir_headers target)
  # A library compiles its sources in its object library, where it has one.
  if(TARGET obj.${target})
    set(target obj.${target})
  endif()
  get_property(host GLOBAL PROPERTY ZERO_PRECOMPILED_HEADERS_TARGET)
  if(host)
    target_precompile_headers(${target} REUSE_FROM ${host})
  else()
    target_precompile_headers(${target} PRIVATE
      ${ZERO_PRECOMPILED_MLIR_HEADERS})
    set_property(GLOBAL PROPERTY ZERO_PRECOMPILED_HEADERS_TARGET ${target})
  endif()
endfunction()

# add_mlir_library, add_mlir_dialect_library and
# add_mlir_translation_library with zero-opt's install rule instead of
# MLIR's (which would export into MLIRTargets), and MLIR's headers
# precompiled.
# LLVM_ONLY: a library of LLVM alone (ZeroConfig), which does not get MLIR's
# headers: their inline functions would call into MLIR, which it does not link.
function(add_zero_library name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "LLVM_ONLY" "" "")
  add_mlir_library(${name} ${arg_UNPARSED_ARGUMENTS} DISABLE_INSTALL)
  if(NOT arg_LLVM_ONLY)
    zero_precompile_mlir_headers(${name})
  endif()
  zero_install_library(${name})
endfunction()

function(add_zero_dialect_library name)
  add_mlir_dialect_library(${name} ${ARGN} DISABLE_INSTALL)
  zero_precompile_mlir_headers(${name})
  zero_install_library(${name})
endfunction()

function(add_zero_translation_library name)
  add_mlir_translation_library(${name} ${ARGN} DISABLE_INSTALL)
  zero_precompile_mlir_headers(${name})
  zero_install_library(${name})
endfunction()

# An executable of bin/ (add_llvm_executable's arguments), installed and
# exported as an imported executable of the same name. Installed, it finds
# libMLIR.so where it was linked (not in the prefix).
function(add_zero_tool name)
  add_llvm_executable(${name} ${ARGN})
  llvm_update_compile_flags(${name})
  zero_precompile_mlir_headers(${name})
  set_target_properties(${name} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS ${name}
    EXPORT ZeroOptTargets
    COMPONENT ${name}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()
