# Maroon as a library for other projects: the targets a consumer links, and (MAROON_INSTALL) the
# install rules, maroonConfig.cmake and the pkg-config files.
#
#   maroon::maroon         libmaroon.so: the C++ engine (include/maroon/*.h, C++20)
#   maroon::maroon_static  the same as static archives (needs Highway and threads at link time)
#   maroon::lagoon         libmaroon_lagoon.so: the Lagoon C ABI (maroon/lagoon.h), engine inside
#   maroon::lagoon_static  the same as static archives
#   maroon::dist           data-parallel training (maroon/dist.h), static; maroon::dist_mpi its
#                          MPI communicator (Open MPI's, or a stub when built without MPI)
#
# The same names work after find_package(maroon) and, as ALIAS targets, after add_subdirectory.
# Their usage requirements are include/ (and the generated maroon/version.h) and C++20, nothing
# else: src/ and the numerics and warning flags stay Maroon's own (maroon_flags).
#
# The shared libraries are the static archives linked whole (no second compilation: every object
# is already position-independent). GNU ld and lld's --whole-archive, passed by hand: CMake
# 3.24's $<LINK_LIBRARY:WHOLE_ARCHIVE> refuses an archive that the others also link plainly.
include(GNUInstallDirs)

set(MAROON_PUBLIC_INCLUDES
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# A public face for static archives: include/ and C++20, linking the archive without its
# (Maroon-internal) compile requirements.
function(maroon_static_face name archive)
  add_library(${name} INTERFACE)
  target_include_directories(${name} INTERFACE ${MAROON_PUBLIC_INCLUDES})
  target_compile_features(${name} INTERFACE cxx_std_20)
  target_link_libraries(${name} INTERFACE $<LINK_ONLY:${archive}>)
endfunction()

# A shared library made of `archives` linked whole.
function(maroon_shared_library name output archives)
  add_library(${name} SHARED ${PROJECT_SOURCE_DIR}/cmake/whole_archive.cpp)
  target_include_directories(${name} INTERFACE ${MAROON_PUBLIC_INCLUDES})
  target_compile_features(${name} INTERFACE cxx_std_20)
  set(files "")
  foreach(archive ${archives})
    list(APPEND files $<TARGET_FILE:${archive}>)
  endforeach()
  add_dependencies(${name} ${archives})
  target_link_libraries(${name} PRIVATE -Wl,--whole-archive ${files} -Wl,--no-whole-archive hwy::hwy Threads::Threads)
  set_target_properties(${name} PROPERTIES OUTPUT_NAME ${output} VERSION ${PROJECT_VERSION}
                                           SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
endfunction()

set(MAROON_ENGINE_ARCHIVES maroon maroon_math maroon_softfloat)
maroon_static_face(maroon_static maroon)
add_library(maroon::maroon_static ALIAS maroon_static)
set(MAROON_EXPORTED maroon_flags maroon_softfloat maroon_math maroon maroon_static)
set_target_properties(maroon PROPERTIES EXPORT_NAME core)
set_target_properties(maroon_math PROPERTIES EXPORT_NAME math)
set_target_properties(maroon_softfloat PROPERTIES EXPORT_NAME softfloat)
set_target_properties(maroon_flags PROPERTIES EXPORT_NAME flags)
maroon_shared_library(maroon_shared maroon "${MAROON_ENGINE_ARCHIVES}")
set_target_properties(maroon_shared PROPERTIES EXPORT_NAME maroon)
add_library(maroon::maroon ALIAS maroon_shared)
list(APPEND MAROON_EXPORTED maroon_shared)

if(TARGET maroon_lagoon)
  maroon_static_face(maroon_lagoon_static maroon_lagoon)
  add_library(maroon::lagoon_static ALIAS maroon_lagoon_static)
  set_target_properties(maroon_lagoon PROPERTIES EXPORT_NAME lagoon_core)
  list(APPEND MAROON_EXPORTED maroon_lagoon maroon_lagoon_static)
  # Only the C ABI is exported (exports.map), so the engine inside cannot clash with a host
  # runtime's symbols.
  maroon_shared_library(maroon_lagoon_shared maroon_lagoon "maroon_lagoon;${MAROON_ENGINE_ARCHIVES}")
  set(map ${PROJECT_SOURCE_DIR}/src/lagoon/exports.map)
  target_link_options(maroon_lagoon_shared PRIVATE -Wl,--version-script=${map})
  set_target_properties(maroon_lagoon_shared PROPERTIES EXPORT_NAME lagoon LINK_DEPENDS ${map})
  add_library(maroon::lagoon ALIAS maroon_lagoon_shared)
  list(APPEND MAROON_EXPORTED maroon_lagoon_shared)
endif()

# Data-parallel training (maroon/dist.h) as static archives: maroon::dist, the step with no MPI
# (a Comm of the caller's), and maroon::dist_mpi, MPI_COMM_WORLD's Comm. maroonConfig.cmake looks
# for what they link (OpenSSL, Open MPI) without requiring it, so a consumer needs those only
# when it links these targets.
if(TARGET maroon_dist)
  foreach(part dist dist_mpi)
    maroon_static_face(maroon_${part}_static maroon_${part})
    add_library(maroon::${part} ALIAS maroon_${part}_static)
    set_target_properties(maroon_${part} PROPERTIES EXPORT_NAME ${part}_core)
    set_target_properties(maroon_${part}_static PROPERTIES EXPORT_NAME ${part})
    list(APPEND MAROON_EXPORTED maroon_${part} maroon_${part}_static)
  endforeach()
endif()

# Installing needs Highway as an installed package: a build against a Highway of its own (the
# determinism matrix's riscv64 toolchain, the Python wheel's static runtime) installs nothing.
get_target_property(MAROON_HWY_IMPORTED hwy::hwy IMPORTED)
if(MAROON_INSTALL AND NOT MAROON_HWY_IMPORTED)
  message(STATUS "maroon: Highway is not an installed package here; no install rules")
  set(MAROON_INSTALL OFF)
endif()
if(NOT MAROON_INSTALL)
  return()
endif()

include(CMakePackageConfigHelpers)
set(MAROON_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/maroon)
install(TARGETS ${MAROON_EXPORTED} EXPORT maroonTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/maroon ${PROJECT_BINARY_DIR}/include/maroon
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT maroonTargets NAMESPACE maroon:: DESTINATION ${MAROON_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/maroonConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/maroonConfig.cmake INSTALL_DESTINATION ${MAROON_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/maroonConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/maroonConfig.cmake ${PROJECT_BINARY_DIR}/maroonConfigVersion.cmake
        DESTINATION ${MAROON_CMAKE_DIR})
# The .pc files name the prefix relative to themselves, so `cmake --install --prefix P` works.
file(RELATIVE_PATH MAROON_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
foreach(pc maroon maroon-lagoon)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
if(TARGET maroon-cli)
  install(TARGETS maroon-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
