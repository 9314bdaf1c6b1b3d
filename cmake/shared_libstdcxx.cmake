# Run after linking a library that Python loads (LIB): it must share the process's libstdc++, not carry its own. Two
# copies in one process each number the locale facets their own way, and formatting an integer through an ostream
# in the library (every TORCH_CHECK that prints a number) then crashes. So: libstdc++.so.6 among its NEEDED
# libraries, and no std:: facet id (std::num_put<...>::id and the like) among the symbols it defines.
execute_process(COMMAND ${READELF} -d "${LIB}" OUTPUT_VARIABLE dynamic)
execute_process(COMMAND ${NM} -D --defined-only "${LIB}" OUTPUT_VARIABLE symbols)
string(REGEX MATCH "[\n ]_ZNSt[0-9A-Za-z_]*2idE\n" facet "${symbols}")
set(why "")
if(NOT dynamic MATCHES "\\(NEEDED\\)[^\n]*\\[libstdc\\+\\+\\.so")
  set(why "it does not need libstdc++.so.6")
elseif(facet)
  string(STRIP "${facet}" facet)
  set(why "it defines the facet id ${facet}")
endif()
if(why)
  message(FATAL_ERROR " ladder: ${LIB} carries a libstdc++ of its own (${why}): link it with a compiler that links "
                      "the shared libstdc++, e.g. -DCMAKE_CXX_COMPILER=/usr/bin/g++")
endif()
