# Karet (karet/): the pipeline tool over libtimelake. Its sources, except
# main.c, form the static library karet_core, which the `karet` executable
# and the unit tests in tests/unit/karet/ link. karet/ uses the library
# through timelake.h only.
file(GLOB KARET_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/karet/*.c)
list(REMOVE_ITEM KARET_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/karet/main.c)
if(KARET_SOURCES)
  add_library(karet_core STATIC ${KARET_SOURCES})
  target_include_directories(karet_core PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/karet
                                               ${CMAKE_CURRENT_SOURCE_DIR}/include)
  # INTERFACE: the library's own include path (src/) reaches karet_core's
  # users (the unit tests) but not its sources, so that an internal header
  # fails to compile in karet/; main.c is compiled apart for the same reason.
  target_link_libraries(karet_core PUBLIC PkgConfig::DEPS INTERFACE timelake_static)

  add_library(karet_main OBJECT karet/main.c)
  target_include_directories(karet_main PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/karet
                                                ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(karet_main PRIVATE PkgConfig::DEPS)
  add_executable(karet $<TARGET_OBJECTS:karet_main>)
  target_link_libraries(karet PRIVATE karet_core)
  install(TARGETS karet RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

  if(TL_BUILD_TESTS)
    file(GLOB KARET_UNIT_TESTS CONFIGURE_DEPENDS
         ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/karet/test_*.c)
    foreach(src ${KARET_UNIT_TESTS})
      get_filename_component(name ${src} NAME_WE)
      add_executable(${name} ${src} tests/unit/unit.c)
      target_include_directories(${name} PRIVATE tests/unit)
      target_link_libraries(${name} PRIVATE karet_core)
      add_test(NAME ${name} COMMAND ${name})
      if(name STREQUAL "test_karet_alloc")
        tl_wrap_allocations(${name})
      endif()
      set_tests_properties(${name} PROPERTIES
        ENVIRONMENT "TL_TEST_TMP=${CMAKE_CURRENT_BINARY_DIR}/test-tmp;KARET_SOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}")
    endforeach()
  endif()
endif()
