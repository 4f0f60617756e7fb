# Karet's web pages (issue 17): the files under karet/web/ (CSS, JavaScript,
# icons) become byte arrays compiled into karet_core, so `karet serve` needs nothing beside its binary
# and no build step or CDN stands between a change and the page.
if(TARGET karet_core)
  function(karet_embed dir table out)
    file(GLOB inputs CONFIGURE_DEPENDS ${dir}/*)
    add_custom_command(
      OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -DDIR=${dir} -DOUT=${out} -DTABLE=${table}
              -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/scripts/embed_files.cmake
      DEPENDS ${inputs} ${CMAKE_CURRENT_SOURCE_DIR}/cmake/scripts/embed_files.cmake
      COMMENT "Embedding ${dir}"
      VERBATIM)
    target_sources(karet_core PRIVATE ${out})
  endfunction()
  karet_embed(${CMAKE_CURRENT_SOURCE_DIR}/karet/web WEB_ASSETS
              ${CMAKE_CURRENT_BINARY_DIR}/karet_web_assets.c)
endif()
