# `karet serve` (karet/serve_*, api_*, auth_*, db*, jobs_*): its sources join
# karet_core through karet.cmake's glob; it needs libmicrohttpd and SQLite.
if(TARGET karet_core)
  pkg_check_modules(KARET_SERVE_DEPS REQUIRED IMPORTED_TARGET libmicrohttpd sqlite3)
  target_link_libraries(karet_core PUBLIC PkgConfig::KARET_SERVE_DEPS)
endif()
