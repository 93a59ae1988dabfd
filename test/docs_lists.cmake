# docs_lists.cmake - docs/testing.md must agree with the lists it shows.
#
#   cmake -DSRC=SOURCE_DIR -DBUILD=BUILD_DIR -DCTEST=ctest -P docs_lists.cmake
#
# The planted-bug table has one row per entry of sync/broken.def, in its
# order: | NAME | WHAT | SUITE[ under BUILD]: how it shows |.  The test
# table gives every CTest test of BUILD (teeth-NAME under teeth-*) a row
# whose second cell is its labels.  A difference fails, naming the row;
# so does a row of either table over 200 characters.  Every planted bug
# has a row in the rules tables, and each bug they name is listed.

cmake_minimum_required(VERSION 3.25)
include(${SRC}/cmake/deflists.cmake)
vs_read_bugs(${SRC})

# The table rows of the doc, one list element per row.  CMake splits
# lists at ';': the doc's are read as ',', which no list entry contains.
file(READ ${SRC}/docs/testing.md doc)
string(REPLACE ";" "," doc "${doc}")
string(REPLACE "\n" ";" lines "${doc}")
set(errors "")

# vs_table_rows(HEADING OUT): the rows of the table whose heading row is
# HEADING, in order.
function(vs_table_rows heading out)
  set(rows "")
  set(in_table OFF)
  foreach(line IN LISTS lines)
    if(line STREQUAL heading)
      set(in_table ON)
    elseif(in_table AND line MATCHES "^\\| [a-z]")
      list(APPEND rows "${line}")
    elseif(in_table AND NOT line MATCHES "^\\|---")
      break()
    endif()
  endforeach()
  set(${out} "${rows}" PARENT_SCOPE)
endfunction()

# The planted-bug table: one row per bug, in the order of the list.
vs_table_rows("| NAME | the bug | caught by |" rows)
set(i 0)
list(LENGTH rows nrows)
foreach(bug IN LISTS VS_BUG_NAMES)
  set(want "| ${bug} | ${VS_BUG_${bug}_WHAT} | ${VS_BUG_${bug}_SUITE}")
  if(VS_BUG_${bug}_BUILD)
    string(APPEND want " under ${VS_BUG_${bug}_BUILD}")
  endif()
  string(APPEND want ": ")
  set(row "(none)")
  if(i LESS nrows)
    list(GET rows ${i} row)
  endif()
  string(FIND "${row}" "${want}" at)
  if(NOT at EQUAL 0)
    list(APPEND errors "planted bug ${i}: want a row starting '${want}', have '${row}'")
  endif()
  math(EXPR i "${i} + 1")
endforeach()
if(nrows GREATER i)
  list(APPEND errors "planted bugs: ${nrows} rows, sync/broken.def has ${i}")
endif()

# The test table: each test's labels, from CTest itself.
vs_table_rows("| CTest test | labels | what it checks |" test_rows)
set(checked "")
execute_process(COMMAND ${CTEST} --test-dir ${BUILD} --show-only=json-v1
  OUTPUT_VARIABLE json RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CTEST} --show-only=json-v1 failed")
endif()
string(JSON ntests LENGTH "${json}" tests)
math(EXPR last "${ntests} - 1")
foreach(t RANGE ${last})
  string(JSON name GET "${json}" tests ${t} name)
  set(labels "")
  string(JSON nprops LENGTH "${json}" tests ${t} properties)
  math(EXPR plast "${nprops} - 1")
  foreach(p RANGE ${plast})
    string(JSON pname GET "${json}" tests ${t} properties ${p} name)
    if(pname STREQUAL "LABELS")
      string(JSON nl LENGTH "${json}" tests ${t} properties ${p} value)
      math(EXPR llast "${nl} - 1")
      foreach(l RANGE ${llast})
        string(JSON label GET "${json}" tests ${t} properties ${p} value ${l})
        list(APPEND labels "${label}")
      endforeach()
    endif()
  endforeach()
  list(SORT labels)
  list(JOIN labels " " labels)
  set(key "${name}")
  if(name MATCHES "^teeth-")
    set(key "teeth-*")
  elseif(name MATCHES "^vcpu[0-9]+-")
    set(key "vcpuN-*")
  endif()
  if(key IN_LIST checked)
    continue()
  endif()
  list(APPEND checked "${key}")
  string(REGEX REPLACE "([][+.*()^$?|\\])" "\\\\\\1" key "${key}")
  # The first cell names the test, alone or among others ("a, b"); the
  # second lists its labels, in any order.
  set(found "(no row)")
  foreach(line IN LISTS test_rows)
    if(line MATCHES "^\\| ([^|]*, )?${key}(, [^|]*)? \\| ([^|]*) \\|")
      string(REPLACE " " ";" found "${CMAKE_MATCH_3}")
      list(SORT found)
      list(JOIN found " " found)
      break()
    endif()
  endforeach()
  if(NOT found STREQUAL labels)
    list(APPEND errors "test ${name}: labels '${labels}', the doc says '${found}'")
  endif()
endforeach()

# The rules tables (section "Every locking rule, broken once"): every
# planted bug is some rule's, and a bug a row names is one of the list.
set(in_rules OFF)
set(ruled "")
foreach(line IN LISTS lines)
  if(line MATCHES "^## ")
    set(in_rules OFF)
    if(line STREQUAL "## Every locking rule, broken once")
      set(in_rules ON)
    endif()
  elseif(in_rules AND line MATCHES "^\\| [^|]* \\| `([a-z0-9-]+)` \\|")
    set(bug "${CMAKE_MATCH_1}")
    if(NOT bug IN_LIST VS_BUG_NAMES)
      list(APPEND errors "rules table: '${bug}' is no planted bug")
    endif()
    list(APPEND ruled "${bug}")
  endif()
endforeach()
foreach(bug IN LISTS VS_BUG_NAMES)
  if(NOT bug IN_LIST ruled)
    list(APPEND errors "rules table: no row for the planted bug ${bug}")
  endif()
endforeach()

# Rows short enough to read: what a row cannot say in 200 characters is
# said in full below its table.
foreach(line IN LISTS rows test_rows)
  string(LENGTH "${line}" len)
  if(len GREATER 200)
    string(SUBSTRING "${line}" 0 40 start)
    list(APPEND errors "a row of ${len} characters (over 200): ${start}...")
  endif()
endforeach()

if(errors)
  list(JOIN errors "\n  " text)
  message(FATAL_ERROR "docs/testing.md disagrees with the lists:\n  ${text}")
endif()
message(STATUS "docs/testing.md: ${nrows} planted bugs, ${ntests} tests, as listed")
