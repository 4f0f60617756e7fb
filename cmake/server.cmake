# The notification ingest server (server/), run by `timelake serve-notifications`:
# its sources join the CLI, which links libmicrohttpd for them.
if(TARGET timelake_cli)
  pkg_check_modules(MHD REQUIRED IMPORTED_TARGET libmicrohttpd)
  file(GLOB TL_SERVER_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/server/*.c)
  # Three of Karet's helpers, which like the server use the library through
  # timelake.h only: JSON read and written whole or not at all when memory
  # runs out (jansson's own calls are not), and the growable text they use.
  set(TL_SERVER_SHARED karet/json_text.c karet/json_write.c karet/strbuf.c)
  # The server uses the library through timelake.h only, as cli/ does: its
  # sources are compiled with include/ as their one library include path, so
  # that an internal header fails to compile there.
  add_library(timelake_server_obj OBJECT ${TL_SERVER_SOURCES} ${TL_SERVER_SHARED})
  target_include_directories(timelake_server_obj PRIVATE include)
  target_link_libraries(timelake_server_obj PRIVATE PkgConfig::DEPS PkgConfig::MHD)
  target_sources(timelake_cli PRIVATE $<TARGET_OBJECTS:timelake_server_obj>)
  target_link_libraries(timelake_cli PRIVATE PkgConfig::MHD)
endif()

# Unit tests of the server's pure parts (outside tests/unit/test_*.c, which
# link the library only).
if(TL_BUILD_TESTS AND TARGET timelake_cli)
  add_executable(test_notify tests/unit/server/test_notify.c tests/unit/unit.c
    server/notify_auth.c server/notify_events.c server/notify_routes.c
    server/notify_parse.c cli/errors.c cli/arrow_schema.c ${TL_SERVER_SHARED})
  target_link_libraries(test_notify PRIVATE timelake_static)
  tl_wrap_allocations(test_notify)
  add_test(NAME test_notify COMMAND test_notify)
endif()
