# The allocation failure tests (tests/unit/alloc_fail.h) fail the library's
# allocations one by one: their links alone wrap the allocation functions the
# library's objects call (ld --wrap), so the library keeps calling malloc
# directly and no other binary pays for the counter.
function(tl_wrap_allocations name)
  target_sources(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit/alloc_fail.c)
  target_link_options(${name} PRIVATE
    LINKER:--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup
    LINKER:--wrap=aligned_alloc)
endfunction()

if(TARGET test_alloc_torture)
  tl_wrap_allocations(test_alloc_torture)
endif()

# The CLI's output helpers, with the allocations of building and printing a
# JSON line failed one by one.
if(TARGET test_cli_output)
  target_sources(test_cli_output PRIVATE ${PROJECT_SOURCE_DIR}/cli/util.c)
  target_include_directories(test_cli_output PRIVATE ${PROJECT_SOURCE_DIR}/cli)
  tl_wrap_allocations(test_cli_output)
endif()
