# All third-party dependencies, found the CMake way. scripts/install-deps.sh installs
# the Debian packages that provide them.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(TBB REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(MPI REQUIRED COMPONENTS C)
find_package(PNG REQUIRED)
find_package(JPEG REQUIRED)  # libjpeg-turbo's libjpeg API, for partial (cropped) decoding
# libyuv (SIMD resizing) ships no CMake or pkg-config file. The static archive is what
# the loader links (loader/CMakeLists.txt says why), and objcopy rewrites it.
find_path(LIBYUV_INCLUDE_DIR libyuv/scale_argb.h REQUIRED)
find_library(LIBYUV_STATIC_LIBRARY libyuv.a REQUIRED)
if(NOT CMAKE_OBJCOPY)
  message(FATAL_ERROR "objcopy (binutils) is needed to prepare libyuv; run scripts/install-deps.sh")
endif()
pkg_check_modules(LMDB REQUIRED IMPORTED_TARGET lmdb)
pkg_check_modules(TURBOJPEG REQUIRED IMPORTED_TARGET libturbojpeg)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
if(EVENFEED_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

include(CheckLanguage)
if(EVENFEED_CUDA)
  check_language(CUDA)
endif()
if(EVENFEED_CUDA AND CMAKE_CUDA_COMPILER)
  # Real code for A100 (sm_80) and H100/H200 (sm_90), plus sm_90 PTX for newer GPUs.
  # Set before enable_language: afterwards CMake has already filled in nvcc's own
  # default (sm_75 for CUDA 13), which no GPU we target runs natively. Pass
  # -DCMAKE_CUDA_ARCHITECTURES=... to choose others.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} REQUIRED)
  message(STATUS "evenfeed: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES}")
  set(EVENFEED_HAVE_CUDA ON)
  message(STATUS "evenfeed: CUDA ${CUDAToolkit_VERSION}, NCCL ${NCCL_LIBRARY}")
else()
  set(EVENFEED_HAVE_CUDA OFF)
  message(STATUS "evenfeed: nvcc not found; cuda/ builds its host-only fallback")
endif()
