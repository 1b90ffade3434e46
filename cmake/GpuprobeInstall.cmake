# Install rules and the package config, so that after `cmake --install` a project can write
#   find_package(gpuprobe CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE gpuprobe::gpuprobe)
include(CMakePackageConfigHelpers)

install(TARGETS gpuprobe EXPORT gpuprobeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/gpuprobe DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT gpuprobeTargets NAMESPACE gpuprobe:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpuprobe)

configure_package_config_file(cmake/gpuprobeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/gpuprobeConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpuprobe)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gpuprobeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gpuprobeConfig.cmake ${PROJECT_BINARY_DIR}/gpuprobeConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpuprobe)
