# The CUDA toolkit for the CUDA backend (runtime/cuda) and the NCCL
# communicator: nvcc, the CUDA runtime and cuBLASLt from NVIDIA's usual prefix
# (see DESIGN.md). Everything CUDA compiles and links without a GPU; it only
# runs on a machine with one.
#
# SHARDC_CUDA defaults to ON when nvcc is found. Sanitizer and fuzzer builds
# turn it OFF: their flags (-fsanitize=...) are added for every language and
# nvcc does not take them, and the instrumented runtimes would not see into
# device code anyway.

set(SHARDC_CUDA_ROOT "/usr/local/cuda" CACHE PATH "Prefix of the CUDA toolkit")
find_program(SHARDC_NVCC nvcc HINTS ${SHARDC_CUDA_ROOT}/bin)

set(shardc_cuda_default OFF)
if(SHARDC_NVCC AND NOT SHARDC_SANITIZE AND NOT SHARDC_FUZZ)
  set(shardc_cuda_default ON)
endif()
option(SHARDC_CUDA "Build the CUDA backend (needs nvcc, cuBLASLt)" ${shardc_cuda_default})
if(SHARDC_CUDA AND (SHARDC_SANITIZE OR SHARDC_FUZZ))
  message(STATUS "SHARDC_CUDA is off in sanitizer and fuzzer builds")
  set(SHARDC_CUDA OFF CACHE BOOL "Build the CUDA backend (needs nvcc, cuBLASLt)" FORCE)
endif()

if(SHARDC_CUDA)
  if(NOT SHARDC_NVCC)
    message(FATAL_ERROR "SHARDC_CUDA is on but nvcc was not found (set SHARDC_CUDA_ROOT)")
  endif()
  if(NOT CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER ${SHARDC_NVCC})
  endif()
  # nvcc's host compiler is the one that compiles the C++, so both sides of
  # the build agree on the standard library.
  if(NOT CMAKE_CUDA_HOST_COMPILER)
    set(CMAKE_CUDA_HOST_COMPILER ${CMAKE_CXX_COMPILER})
  endif()
  # Machine code for A100 (sm_80), L4/L40 (sm_89) and H100/H200 (sm_90),
  # plus compute_90 PTX that newer GPUs compile when they load it. PTX for
  # 80 and 89 would only add size: anything that runs it runs sm_80 code.
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "80-real;89-real;90")
  endif()
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  # ccache understands nvcc: reuse the C++ launcher (the Makefile sets ccache).
  if(CMAKE_CXX_COMPILER_LAUNCHER AND NOT CMAKE_CUDA_COMPILER_LAUNCHER)
    set(CMAKE_CUDA_COMPILER_LAUNCHER ${CMAKE_CXX_COMPILER_LAUNCHER})
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  message(STATUS "CUDA ${CUDAToolkit_VERSION} from ${CUDAToolkit_BIN_DIR}, "
                 "architectures ${CMAKE_CUDA_ARCHITECTURES}")
endif()
