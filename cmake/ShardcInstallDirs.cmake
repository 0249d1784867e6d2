# Where `cmake --install` puts things and how the installed binaries find
# their libraries; included before any target is declared, since the RPATH
# settings apply to the targets made after them. The rules themselves are
# in ShardcInstall.cmake.
#
# A prefix (`make install PREFIX=...`, the Debian package's /usr) gets the
# usual layout: bin/, lib/ (libshardc_runtime.so, its CMake package),
# include/shardc/, share/doc/shardc/, and the Python module in
# lib/python3/dist-packages, where Debian's python3 finds it under /usr.
#
# A wheel (scikit-build-core sets SKBUILD) gets the same files where pip
# installs a wheel's: the tools as scripts (the environment's bin/), the
# runtime library as data in lib/ (so the tools' $ORIGIN/../lib finds it
# there too), the module in site-packages. The C++ headers and the CMake
# package stay out of it.
include(GNUInstallDirs)
if(SKBUILD)
  set(SHARDC_INSTALL_BINDIR ${SKBUILD_SCRIPTS_DIR})
  set(SHARDC_INSTALL_LIBDIR ${SKBUILD_DATA_DIR}/lib)
  set(SHARDC_INSTALL_DOCDIR ${SKBUILD_DATA_DIR}/share/doc/shardc)
  set(SHARDC_INSTALL_PYTHONDIR ${SKBUILD_PLATLIB_DIR})
  set(shardc_libdir_from_bin lib)
else()
  set(SHARDC_INSTALL_BINDIR ${CMAKE_INSTALL_BINDIR})
  set(SHARDC_INSTALL_LIBDIR ${CMAKE_INSTALL_LIBDIR})
  set(SHARDC_INSTALL_DOCDIR ${CMAKE_INSTALL_DOCDIR})
  set(SHARDC_INSTALL_PYTHONDIR lib/python3/dist-packages CACHE STRING
      "Where the Python module is installed, relative to the prefix")
  set(shardc_libdir_from_bin ${CMAKE_INSTALL_LIBDIR})
endif()

# Relocatable: the tools find libshardc_runtime.so relative to themselves,
# wherever the prefix is copied; libraries outside the build tree (MPI's,
# LLVM's, CUDA's) stay where they were linked from. The build tree's own
# folders are never written into an installed file.
set(CMAKE_INSTALL_RPATH "$ORIGIN/../${shardc_libdir_from_bin}")
set(CMAKE_INSTALL_RPATH_USE_LINK_PATH ON)
