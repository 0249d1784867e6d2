# Finds the outside packages shardc builds on (all from Debian, see DESIGN.md):
# MLIR/LLVM 19 as the shared libMLIR.so/libLLVM.so, protobuf + libonnx.

set(SHARDC_LLVM_PREFIX "/usr/lib/llvm-19" CACHE PATH "Prefix of the LLVM/MLIR 19 installation")

find_package(MLIR REQUIRED CONFIG PATHS ${SHARDC_LLVM_PREFIX}/lib/cmake/mlir NO_DEFAULT_PATH)
message(STATUS "MLIR ${LLVM_PACKAGE_VERSION} from ${MLIR_DIR}")
list(APPEND CMAKE_MODULE_PATH ${MLIR_CMAKE_DIR} ${LLVM_CMAKE_DIR})
include(TableGen)
include(AddLLVM)
include(AddMLIR)

include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
add_definitions(${LLVM_DEFINITIONS})
if(NOT LLVM_ENABLE_RTTI)
  add_compile_options(-fno-rtti)
endif()

# libonnx needs protobuf found first; its config brings ONNX_ML=1 and ONNX_NAMESPACE=onnx.
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED CONFIG)

set(SHARDC_LIT "${SHARDC_LLVM_PREFIX}/build/utils/lit/lit.py" CACHE FILEPATH "lit.py to run the lit suites")
set(SHARDC_FILECHECK_DIR "${LLVM_TOOLS_BINARY_DIR}" CACHE PATH "Where FileCheck and not live")
