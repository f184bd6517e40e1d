# -*- Python -*-
# lit configuration for the zero-opt regression tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ZERO_OPT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".py"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.zero_obj_root, "test")

# The tools of another directory (scripts/sanitize.sh: the sanitized
# runtime's zero-run and zero-ckpt next to the plain build's compiler).
config.zero_tools_dir = lit_config.params.get("zero_tools_dir",
                                              config.zero_tools_dir)

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%zero_src_root", config.zero_src_root))
# Tests that need PyTorch run Debian's python3 (python3-torch), whatever
# python3 comes first on PATH.
config.substitutions.append(("%host_python", config.host_python))
config.substitutions.append(("%mlir_lib_dir", config.llvm_lib_dir))
config.substitutions.append(("%zero_bin", config.zero_tools_dir))
# The zero_opt Python package of the build tree (python/CMakeLists.txt).
config.substitutions.append(
    ("%zero_python", os.path.join(config.zero_obj_root, "python")))
# The mlir-opt plugin (test/Plugin), and the upstream mlir-opt that loads it:
# Debian's, whatever mlir-opt comes first on PATH. In a sanitized build it
# runs with the sanitizers' runtimes preloaded, which the instrumented plugin
# needs and Debian's mlir-opt does not load.
config.substitutions.append(
    ("%zero_plugin",
     os.path.join(config.zero_lib_dir, "ZeroPlugin" + config.llvm_shlib_ext)))
upstream_mlir_opt = os.path.join(config.llvm_tools_dir, "mlir-opt")
if config.sanitizer_preload:
    upstream_mlir_opt = "env LD_PRELOAD=%s %s" % (
        config.sanitizer_preload, upstream_mlir_opt)
config.substitutions.append(("%upstream_mlir_opt", upstream_mlir_opt))
# Multi-rank runs share this machine's cores; Open MPI refuses root unless
# told. Each test's jobs keep their session files apart from other tests':
# concurrent mpiruns sharing one $TMPDIR create and remove its
# ompi.<host>.<uid> under each other.
mpirun = "env OMPI_MCA_orte_tmpdir_base=%t.mpi mpirun --oversubscribe"
if os.geteuid() == 0:
    mpirun += " --allow-run-as-root"
config.substitutions.append(("%mpirun", mpirun))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.zero_tools_dir, config.llvm_tools_dir]
tools = [
    "zero-opt",
    "zero-model",
    "zero-translate",
    "zero-run",
    "zero-ckpt",
    "zero-lsp-server",
    "zero-reduce",
    "zero-capi-test",
    "zero-import-torch",
    ToolSubst("mlir-opt", unresolved="fatal"),
    ToolSubst("mlir-runner", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.zero_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Tests of the CUDA backend's plan that need no GPU (the cost model) run
# where zero-run has the backend: it links cudart.
import subprocess

linked = subprocess.run(["ldd", os.path.join(config.zero_tools_dir, "zero-run")],
                        capture_output=True, text=True).stdout
if "libcudart" in linked:
    config.available_features.add("cuda-backend")

# Headless Chromium renders the memory timeline in one test, which is
# unsupported where no Chromium is installed.
import shutil

chromium = next(
    filter(None, map(shutil.which, ["chromium", "chromium-browser"])), None)
if chromium:
    config.available_features.add("chromium")
    config.substitutions.append(("%chromium", chromium))
