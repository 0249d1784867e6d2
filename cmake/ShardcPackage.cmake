# `make deb`: Debian packages of the install components (ShardcInstall.cmake),
# made by CPack from the build-deb/ tree: shardc_VERSION_ARCH.deb (the
# tools, libshardc_runtime.so, the Python module for Debian's python3, the
# documentation) and shardc-dev_VERSION_ARCH.deb (headers, CMake package).
#
# That tree is configured for other machines: -DSHARDC_CPU_NATIVE=OFF (the
# CPU kernels for any x86-64, not the building CPU's -march=native) and
# -DSHARDC_CUDA=OFF (the CUDA toolkit and NCCL come from NVIDIA's installers
# or repository, not Debian's, so no Debian dependency can name them; a GPU
# machine builds from source). The Makefile says so.
#
# Dependencies: dpkg-shlibdeps reads what the binaries link (OpenMPI,
# oneDNN, protobuf, onnx, LLVM/MLIR 19, zlib, libgomp, libstdc++) and names
# the Debian packages that hold them; what is not linked is added by hand:
# mpirun, to start ranks, and the Python the module is built for.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME shardc)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "shardc maintainers <shardc@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Compiles ONNX transformer models into sharded executables and runs them")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL shardc dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)

set(CPACK_DEBIAN_SHARDC_PACKAGE_NAME shardc)
set(CPACK_COMPONENT_SHARDC_DESCRIPTION "shardc compiles ONNX transformer models into \
sharded executables; shardrun runs them on CPU ranks (threads or MPI). With the Python module \
(import shardc).")
# The module's file name says CPython 3.11 (Debian 12's python3); shardrun's
# ranks start under mpirun.
execute_process(COMMAND ${SHARDC_PYTHON} -c "import sys; print(sys.version_info[1])"
                OUTPUT_VARIABLE shardc_python_minor OUTPUT_STRIP_TRAILING_WHITESPACE)
math(EXPR shardc_python_next "${shardc_python_minor} + 1")
set(CPACK_DEBIAN_SHARDC_PACKAGE_DEPENDS "openmpi-bin")
set(CPACK_DEBIAN_SHARDC_PACKAGE_RECOMMENDS
    "python3 (>= 3.${shardc_python_minor}), python3 (<< 3.${shardc_python_next}), python3-numpy")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME shardc-dev)
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "The shardc runtime's C++ headers and CMake package (find_package(shardc)), to embed it.")
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "shardc (= ${PROJECT_VERSION}), nlohmann-json3-dev, libflatbuffers-dev")
include(CPack)
