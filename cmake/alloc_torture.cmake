# The allocation torture test (tests/unit/test_alloc_torture.c) fails the
# library's allocations one by one: its link alone wraps the allocation
# functions the library's objects call (ld --wrap), so the library keeps
# calling malloc directly and no other binary pays for the counter.
if(TARGET test_alloc_torture)
  target_link_options(test_alloc_torture PRIVATE
    LINKER:--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup
    LINKER:--wrap=aligned_alloc)
endif()
