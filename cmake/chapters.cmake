# Reads chapters.txt, the list of the chapters (its top says the format), for the top CMakeLists.txt and
# cmake/sanitizer_tests.cmake:
#   ladder_chapter_entries(KIND OUT)   OUT: that kind's entries in the file's order, each "CHAPTER|NEEDS|NAME|REST"
#                                      (NEEDS: the line's own, `-` for none; REST: the rest of the line, maybe empty)
# scripts/chapters.sh (bash) and scripts/chapters.py (Python) read the same file, and check it.
set(LADDER_CHAPTERS_FILE ${CMAKE_CURRENT_LIST_DIR}/../chapters.txt)
# An edit of the list configures again, as an edit of a CMakeLists.txt does.
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${LADDER_CHAPTERS_FILE})

function(ladder_chapter_entries kind out)
  file(STRINGS ${LADDER_CHAPTERS_FILE} lines)
  set(entries "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^${kind}[ \t]+([^ \t]+)[ \t]+([^ \t]+)[ \t]+([^ \t]+)[ \t]*(.*)$")
      string(STRIP "${CMAKE_MATCH_4}" rest)
      list(APPEND entries "${CMAKE_MATCH_1}|${CMAKE_MATCH_2}|${CMAKE_MATCH_3}|${rest}")
    endif()
  endforeach()
  if(NOT entries)
    message(FATAL_ERROR "ladder: ${LADDER_CHAPTERS_FILE} has no '${kind}' line")
  endif()
  set(${out} "${entries}" PARENT_SCOPE)
endfunction()
