# The ctest layering.includes: reads every #include of every C++/CUDA file under common/, tools/ and the chapters'
# folders (0N_*) of the tree DIR, and fails on any include that its room's allowlist does not name. bench/ is left out:
# a benchmark may include whatever it measures.
#
# The rooms of common/, each allowed only itself and the rooms below it (include by room: "gpu/ops.h"):
#     chapter -> hopper -> gpu -> profiler -> {trace, cuda} -> base, and work -> trace (the ladder's ops' FLOP formulas)
# (hopper: the machinery of the Hopper kernels, ptx.cuh, pipeline.cuh, the tensor maps, that chapters 04 and 06 share.)
# tools/ (ladder-trace, its Python package) may include base, trace, work and the files beside it: never a chapter,
# never CUDA; nanobind only in tools/python/.
# A chapter (0N_name/) may include any room of common/, its own folder, and an earlier chapter through that chapter's
# API only: its kernels.cuh ("03_fused_mlp/kernels.cuh" from 04_epilogue_mlp/), and the headers api_<chapter> names
# below; never the earlier chapter's other files (its internals), never a later chapter. No chapter has an exception:
# what two chapters share is a room of common/ (04's Hopper machinery is common/hopper/).
# Inside trace/, four parts, a folder each (common/trace/<part>/), each allowed only itself and the parts before it
# (the arrows one way):
#     renderers -> analyses -> model -> text
# text: how names from a trace are escaped, shortened and measured, and axis ticks (every part prints names, if only in
# an error message); model: the event model and its file formats (read, write, index); analyses: what a trace says,
# as plain structs with named fields, no layout; renderers: tables, CSV/JSON records, timelines and pictures of them.
# A file's part is its folder, and an include of trace/ names the part ("trace/model/trace.h"), from every room; a file
# of common/trace/ outside the four folders (tests/ aside) is in no part and fails.
# Headers in angle brackets: the C++ standard library everywhere, and beyond it only what the room's list names below;
# a tests/ folder adds GoogleTest and nlohmann-json. Each failure names the file, the line and the rule it broke.
cmake_policy(SET CMP0057 NEW)  # if(... IN_LIST ...)
set(rooms base trace work cuda profiler gpu hopper chapter)
set(below_base base)
set(below_trace base trace)
set(below_work base trace work)
set(below_cuda base cuda)
set(below_profiler base cuda trace profiler)
set(below_gpu base cuda trace profiler gpu)
set(below_hopper base cuda trace profiler gpu hopper)
set(below_chapter ${rooms})
set(below_tools base trace work)
set(trace_parts text model analyses renderers)  # in order: each may include the ones before it
string(REPLACE ";" ", " parts "${trace_parts}")
set(says_where "so the include says where it comes from")
# The part of PATH, a file's path from the root (common/trace/<part>/NAME.cpp) or an include's (trace/<part>/NAME.h):
# the index of its folder in trace_parts, or -1 when it is in none of them.
function(trace_part path out)
  set(${out} -1 PARENT_SCOPE)
  if(path MATCHES "^(common/)?trace/([^/]+)/[^/]+$")
    list(FIND trace_parts "${CMAKE_MATCH_2}" k)
    set(${out} ${k} PARENT_SCOPE)
  endif()
endfunction()

# Angle-bracket headers beyond the C++ standard library, by pattern on the include's path.
set(c_std "(assert|ctype|errno|float|inttypes|limits|math|signal|stdarg|stddef|stdint|stdio|stdlib|string|time)\\.h$")
set(posix "unistd\\.h$|sys/|fcntl\\.h$|poll\\.h$|spawn\\.h$|dlfcn\\.h$|cxxabi\\.h$")
set(network "arpa/|netinet/")
set(cuda "cuda[A-Za-z_0-9]*\\.h$|cublas[A-Za-z_0-9]*\\.h$|cupti[A-Za-z_0-9]*\\.h$|nvtx3/")
set(cuda_device "mma\\.h$|cooperative_groups|cuda/")
set(allow_base "")
set(allow_trace "fmt/|zlib\\.h$|${posix}")
set(allow_work "fmt/")
set(allow_cuda "fmt/|${cuda}")
set(allow_profiler "fmt/|${cuda}|${posix}")
set(allow_gpu "fmt/|${cuda}")
set(allow_hopper "fmt/|${cuda}")
set(allow_chapter "fmt/|CLI/|${cuda}|${posix}")
set(allow_tools "fmt/|CLI/|${posix}|${network}")
set(allow_chapters "fmt/|CLI/|${cuda}|${cuda_device}")  # every chapter's folder
set(torch "torch/|ATen/|c10/")
set(allow_05_torch_op "${torch}")                     # and what a chapter adds: PyTorch's C++ API (05's op library,
set(allow_06_train_mlp "${torch}")                    # which 06 adds its ops to), MPI, NCCL and POSIX
set(allow_07_tp_mlp "mpi\\.h$|nccl\\.h$|nccl_device\\.h$|${posix}")
set(allow_tests "gtest/|gmock/|nlohmann/")
# What a chapter offers the later ones, beyond its kernels.cuh: 05's op library, to which a later chapter adds its
# PyTorch ops (torch_op.h: the input checks and the launcher call every op shares).
set(api_05_torch_op torch_op.h)

set(broken "")
set(count 0)
file(GLOB_RECURSE files RELATIVE ${DIR} ${DIR}/common/*.h ${DIR}/common/*.cuh ${DIR}/common/*.cpp ${DIR}/common/*.cu
     ${DIR}/tools/*.h ${DIR}/tools/*.cpp ${DIR}/[0-9][0-9]_*/*.h ${DIR}/[0-9][0-9]_*/*.cuh ${DIR}/[0-9][0-9]_*/*.cpp
     ${DIR}/[0-9][0-9]_*/*.cu)
foreach(rel ${files})
  set(part -1)  # the file's part of trace/, when it is in trace/
  # The room: common/<room>/..., tools/..., or a chapter's folder.
  if(rel MATCHES "^common/([^/]+)/")
    set(room "${CMAKE_MATCH_1}")
    if(NOT room IN_LIST rooms)
      string(APPEND broken "\n  ${rel}: in no room (common/ has ${rooms})")
      continue()
    endif()
    set(quoted ${below_${room}})
    set(allowed "${allow_${room}}")
    string(CONCAT rule "${room} may include only ${below_${room}} "
           "(chapter -> hopper -> gpu -> profiler -> {trace, cuda} -> base)")
    if(room STREQUAL "trace" AND NOT rel MATCHES "^common/trace/tests/")
      trace_part(${rel} part)
      if(part LESS 0)
        string(APPEND broken "\n  ${rel}: in no part of trace (a file of trace/ is in its part's folder: ${parts})")
        continue()
      endif()
      list(GET trace_parts ${part} part_name)
    endif()
  elseif(rel MATCHES "^tools/")
    set(room tools)
    set(quoted ${below_tools} tools)
    set(allowed "${allow_tools}")
    if(rel MATCHES "^tools/python/")  # the Python package's binding
      set(allowed "${allowed}|nanobind/|Python\\.h$")
    endif()
    set(rule "tools may include only base, trace, work and its own files: no chapter")
  else()
    string(REGEX MATCH "^([0-9][0-9])_[^/]+" room "${rel}")
    set(number "${CMAKE_MATCH_1}")
    set(quoted ${rooms} ${room})
    file(GLOB chapters RELATIVE ${DIR} ${DIR}/[0-9][0-9]_*)
    foreach(c IN LISTS chapters)
      string(SUBSTRING "${c}" 0 2 n)
      if(IS_DIRECTORY ${DIR}/${c} AND n LESS_EQUAL number)
        list(APPEND quoted ${c})
      endif()
    endforeach()
    set(allowed "${allow_chapters}")
    if(DEFINED allow_${room})
      set(allowed "${allowed}|${allow_${room}}")
    endif()
    set(rule "${room} may include common/'s rooms and chapters up to ${number}: never a later chapter")
  endif()
  if(rel MATCHES "/tests/")
    set(allowed "${allowed}|${allow_tests}")
  endif()
  string(REGEX REPLACE "^\\|" "" allowed "${allowed}")
  file(STRINGS ${DIR}/${rel} includes REGEX "^[ \t]*#[ \t]*include")
  set(file_read OFF)
  foreach(line ${includes})
    math(EXPR count "${count} + 1")
    set(why "")
    if(line MATCHES "\"([^\"]+)\"")
      set(path "${CMAKE_MATCH_1}")
      string(REGEX MATCH "^[^/]+" top "${path}")
      get_filename_component(here ${DIR}/${rel} DIRECTORY)
      if(room STREQUAL "tools" AND NOT path MATCHES "/" AND EXISTS ${here}/${path})
        # tools/ includes the files beside it by name
      elseif(NOT path MATCHES "/")
        set(why "include by room or folder (\"gpu/${path}\", \"trace/<part>/${path}\"), ${says_where}")
      elseif(NOT top IN_LIST quoted)
        set(why "${rule}")
      elseif(top MATCHES "^[0-9][0-9]_" AND NOT top STREQUAL room)
        # An earlier chapter's file: only its API (kernels.cuh and its api_ list), never its internals.
        set(api kernels.cuh ${api_${top}})
        string(REGEX REPLACE "^[^/]+/" "" file_in "${path}")
        if(NOT file_in IN_LIST api)
          string(REPLACE ";" ", " api_list "${api}")
          string(CONCAT why "a chapter uses an earlier one only through its API (${top}/: ${api_list}), never its "
                 "internals; what chapters share is a room of common/")
        endif()
      elseif(top STREQUAL "trace" AND NOT path MATCHES "^trace/tests/")
        trace_part(${path} included_part)
        if(included_part LESS 0)
          set(why "include trace's files by part (\"trace/<part>/NAME.h\", <part> one of ${parts}), ${says_where}")
        elseif(part GREATER_EQUAL 0 AND included_part GREATER part)
          set(why "trace's ${part_name} may include only the parts before it (renderers -> analyses -> model -> text)")
        endif()
      endif()
    elseif(line MATCHES "<([^>]+)>")
      set(path "${CMAKE_MATCH_1}")
      if(NOT path MATCHES "^[a-z_0-9]+$" AND NOT path MATCHES "^(${c_std})" AND
         (allowed STREQUAL "" OR NOT path MATCHES "^(${allowed})"))
        if(allowed STREQUAL "")
          set(why "${room} may use only the C++ standard library")
        else()
          set(why "not on ${room}'s list of headers beyond the C++ standard library (cmake/layering.cmake)")
        endif()
      endif()
    endif()
    if(why)
      # Find the line's number only for a broken rule: file(STRINGS) gives the lines without their numbers.
      if(NOT file_read)
        file(READ ${DIR}/${rel} text)
        set(file_read ON)
      endif()
      string(FIND "${text}" "${line}" pos)
      string(SUBSTRING "${text}" 0 ${pos} before)
      string(REGEX MATCHALL "\n" newlines "${before}")
      list(LENGTH newlines n)
      math(EXPR n "${n} + 1")
      string(STRIP "${line}" shown)
      string(APPEND broken "\n  ${rel}:${n}: ${shown}: ${why}")
    endif()
  endforeach()
endforeach()
list(LENGTH files nfiles)
if(broken)
  message(FATAL_ERROR "includes that break the rooms' rules:${broken}")
endif()
message(STATUS "${nfiles} files under common/, tools/ and the chapters, ${count} includes, each allowed by its room")
