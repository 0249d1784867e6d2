# lit configuration of shardc's FileCheck suites (README.md, "Tests and benchmarks").
import os

import lit.formats

config.name = "shardc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".onnxtext", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "unit", "fixtures", "fuzz", "zoo"]
config.test_source_root = os.path.dirname(__file__)

config.environment["PATH"] = os.pathsep.join(
    [config.shardc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%python", config.shardc_python))
config.substitutions.append(("%fixtures", os.path.join(config.shardc_source_dir, "test", "fixtures")))
# ONNX's backend node tests, written by `make node-tests`
# (test/scripts/make_node_tests.py) from the installed onnx package into the
# build directory; `lit --param node_tests=DIR` points elsewhere.
config.substitutions.append(("%node_tests", lit_config.params.get(
    "node_tests", os.path.join(config.test_exec_root, "..", "node-tests"))))
config.substitutions.append(("%scripts", os.path.join(config.shardc_source_dir, "test", "scripts")))
# The build directory itself, for the check that installs it (E2E/install.test).
config.substitutions.append(("%build_dir", os.path.dirname(config.test_exec_root)))

config.substitutions.append(("%flatc", config.flatc))
config.substitutions.append(("%schemas", os.path.join(config.shardc_source_dir, "runtime", "schemas")))
# `%mpirun N CMD...`: N ranks of CMD under OpenMPI, allowed as root and on
# fewer cores than ranks (the CI machine has 2). Sanitized, LeakSanitizer
# stays off there: OpenMPI's own allocations outlive MPI_Finalize.
mpi_environment = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
if config.shardc_sanitized:
    mpi_environment += " ASAN_OPTIONS=detect_leaks=0"
config.substitutions.append(("%mpirun", "env " + mpi_environment + " " + config.mpiexec
                             + " --oversubscribe -np"))

# The Python binding this build made (python/; not in sanitized builds, whose
# module a plain interpreter cannot load): the tests import it from here,
# whatever build the venv's .pth file names.
binding_dir = os.path.join(config.test_exec_root, "..", "python")
if os.path.isdir(binding_dir) and any(name.startswith("shardc.") for name in os.listdir(binding_dir)):
    config.available_features.add("python-binding")
    config.environment["PYTHONPATH"] = os.path.abspath(binding_dir)

# Sanitized builds are slower; the suites stay the same.
if config.shardc_sanitized:
    config.available_features.add("sanitized")

# CUDA: `cuda-build` when the tools were built with the CUDA backend
# (SHARDC_CUDA), `cuda` when a GPU is also visible (nvidia-smi lists one):
# GPU tests say `REQUIRES: cuda`, the no-GPU error paths `UNSUPPORTED: cuda`.
if getattr(config, "shardc_cuda", False):
    config.available_features.add("cuda-build")
    if "cuda" not in config.available_features:
        import shutil
        import subprocess
        smi = shutil.which("nvidia-smi")
        try:
            listed = smi and subprocess.run([smi, "-L"], capture_output=True, text=True,
                                            timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            listed = ""
        if listed and "GPU " in listed:
            config.available_features.add("cuda")
