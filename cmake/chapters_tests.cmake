# The tests of chapters.txt (label cpu): every chapter folder listed, every reference trace and figure trace it names
# committed (scripts/chapters.py); a planted list whose every mistake is named; a need no script knows refused.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(NOT BUILD_TESTING OR NOT Python3_FOUND)
  return()
endif()
set(planted ${PROJECT_SOURCE_DIR}/cmake/tests/chapters)
ladder_expect(chapters.listed_as_found EXIT 0 REGEX "figure lines, all found"
              COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/chapters.py)
string(CONCAT expected "09_no_folder/CMakeLists.txt does not exist.*02_linear: a chapter folder chapters.txt does not list.*"
       "07_tp_mlp: a chapter folder.*planted.txt:4: no committed trace traces/reference/h100/01_matmul_add_size65.json.*"
       "planted.txt:5: a figure's name ends in .svg, not 'size64_step.png'.*"
       "figure size64_step.svg: no committed trace traces/reference/h100/no_such_trace.json.*")
ladder_expect(chapters.fails_on_planted_entries EXIT 1
              REGEX "${expected}"
              COMMAND ${CMAKE_COMMAND} -E env LADDER_CHAPTERS=${planted}/planted.txt
                      ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/chapters.py)
ladder_expect(chapters.python_refuses_unknown_need EXIT 1 REGEX "bad_need.txt:3: unknown need 'gpu'"
              COMMAND ${CMAKE_COMMAND} -E env LADDER_CHAPTERS=${planted}/bad_need.txt
                      ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/chapters.py)
