# `cmake --install` (make install, the wheel, the Debian packages): what is
# installed, in two components. `shardc`: the tools, libshardc_runtime.so,
# the Python module, the documentation and the example model: what a user
# runs. `dev`: the runtime's headers and the CMake package
# (find_package(shardc) -> shardc::runtime) for a C++ program that embeds
# the runtime. Destinations: ShardcInstallDirs.cmake.

install(TARGETS shardc shardrun shardc-opt shardc-calibrate
        RUNTIME DESTINATION ${SHARDC_INSTALL_BINDIR} COMPONENT shardc)
install(TARGETS ShardcRuntime EXPORT shardcTargets
        LIBRARY DESTINATION ${SHARDC_INSTALL_LIBDIR} COMPONENT shardc NAMELINK_COMPONENT dev)

install(FILES README.md DESTINATION ${SHARDC_INSTALL_DOCDIR} COMPONENT shardc)
install(DIRECTORY docs/ DESTINATION ${SHARDC_INSTALL_DOCDIR}/docs COMPONENT shardc
        FILES_MATCHING PATTERN "*.md")
# The reference pages every build generates from the .td files (build/docs/).
install(DIRECTORY ${PROJECT_BINARY_DIR}/docs/ DESTINATION ${SHARDC_INSTALL_DOCDIR}/reference
        COMPONENT shardc FILES_MATCHING PATTERN "*.md")
install(FILES examples/gpt2_tiny.onnx DESTINATION ${SHARDC_INSTALL_DOCDIR}/examples
        COMPONENT shardc)

if(SKBUILD)
  return()
endif()

# The headers of the runtime's public API (runtime/session/Session.h and
# what it reaches) under include/shardc/, as the source tree lays them out:
# a server writes #include "runtime/session/Session.h". NCCL's and the CUDA
# backend's need their toolkits and stay out.
install(DIRECTORY runtime/core runtime/io runtime/comm runtime/cpu runtime/kernels
                  runtime/session runtime/library
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/shardc/runtime COMPONENT dev
        FILES_MATCHING PATTERN "*.h" PATTERN "Nccl*.h" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/runtime/schemas/program_generated.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/shardc/runtime/schemas COMPONENT dev)

include(CMakePackageConfigHelpers)
set(shardc_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/shardc)
install(EXPORT shardcTargets NAMESPACE shardc:: DESTINATION ${shardc_cmake_dir} COMPONENT dev)
configure_package_config_file(cmake/shardcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/shardcConfig.cmake INSTALL_DESTINATION ${shardc_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/shardcConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/shardcConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/shardcConfigVersion.cmake
        DESTINATION ${shardc_cmake_dir} COMPONENT dev)
