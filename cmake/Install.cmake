# `cmake --install`: headers under include/evenfeed/ (same layout as the repository, so
# `#include "loader/loader.h"` works, as does <evenfeed/loader/loader.h>), one static
# library per folder, the `evenfeed` command, a CMake package (find_package(evenfeed)
# gives evenfeed::evenfeed and one target per library, each carrying its
# dependencies) and a pkg-config file. Documented in docs/embedding.md.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(evenfeed_libraries core sampler bucketing loader cuda comm trainer)
set(evenfeed_header_folders core sampler bucketing loader cuda trainer)

foreach(name ${evenfeed_libraries})
  set_target_properties(evenfeed_${name} PROPERTIES EXPORT_NAME ${name})
endforeach()

# evenfeed::evenfeed: everything a trainer embeds.
add_library(evenfeed_package INTERFACE)
set_target_properties(evenfeed_package PROPERTIES EXPORT_NAME evenfeed)
list(TRANSFORM evenfeed_libraries PREPEND evenfeed_ OUTPUT_VARIABLE evenfeed_library_targets)
target_link_libraries(evenfeed_package INTERFACE ${evenfeed_library_targets})
add_library(evenfeed::evenfeed ALIAS evenfeed_package)

foreach(folder ${evenfeed_header_folders})
  install(DIRECTORY ${folder}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/evenfeed/${folder}
          FILES_MATCHING PATTERN "*.h")
endforeach()

install(TARGETS ${evenfeed_library_targets} evenfeed_package EXPORT evenfeedTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/evenfeed ${CMAKE_INSTALL_INCLUDEDIR})
# The installed command finds NCCL and Open MPI where the build found them.
set_target_properties(evenfeed PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS evenfeed RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/evenfeed)
if(EVENFEED_HAVE_CUDA)
  get_filename_component(EVENFEED_CUDA_ROOT ${CUDAToolkit_BIN_DIR} DIRECTORY)
endif()
install(EXPORT evenfeedTargets NAMESPACE evenfeed:: DESTINATION ${config_dir})
configure_package_config_file(cmake/evenfeedConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/evenfeedConfig.cmake INSTALL_DESTINATION ${config_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/evenfeedConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/evenfeedConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/evenfeedConfigVersion.cmake DESTINATION ${config_dir})

# pkg-config: the libraries are static, so Libs lists everything they link.
set(pc_cuda_libs "")
if(EVENFEED_HAVE_CUDA)
  get_filename_component(nccl_dir ${NCCL_LIBRARY} DIRECTORY)
  set(pc_cuda_libs "-L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -L${nccl_dir} -Wl,-rpath,${nccl_dir} -lnccl -ldl -lrt")
endif()
get_filename_component(openblas_dir ${OPENBLAS_LIBRARY} DIRECTORY)
set(pc_other_libs "-L${openblas_dir} -lopenblas -pthread")
file(RELATIVE_PATH pc_to_prefix /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" pc_to_prefix "${pc_to_prefix}")
configure_file(cmake/evenfeed.pc.in ${CMAKE_CURRENT_BINARY_DIR}/evenfeed.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/evenfeed.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
