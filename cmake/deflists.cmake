# The X-macro lists that C and CMake share, read here for CMake:
#
#   test/suites.def   VS_SUITE(name, unsupported, timeout, "labels")
#   sync/broken.def   VS_BUG(name, suite, "build", "vcpu", "what")
#   tools/tools.def   VS_TOOL(name, dir, build, man)
#
# Each entry is one line.  A line that starts with the macro but does not
# have the shape below stops the configure, so CMake never reads a list
# other than the one C compiles.  Editing a list re-runs cmake.

# vs_read_def(FILE MACRO ARGS PREFIX FIELD...): for each line MACRO(ARGS)
# of FILE, whose first group is the entry's name, set PREFIX_NAMES to the
# names in order and PREFIX_<name>_<FIELD> to the following groups.
function(vs_read_def file macro args prefix)
  if(NOT CMAKE_SCRIPT_MODE_FILE)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  endif()
  file(STRINGS ${file} lines REGEX "^[ \t]*${macro}\\(")
  set(names "")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^${macro}\\(${args}\\)$")
      message(FATAL_ERROR "${file}: not of the form ${macro}(...) on one line: ${line}")
    endif()
    set(name ${CMAKE_MATCH_1})
    if(name IN_LIST names)
      message(FATAL_ERROR "${file}: ${name} is listed twice")
    endif()
    list(APPEND names ${name})
    set(i 2)
    foreach(field IN LISTS ARGN)
      set(${prefix}_${name}_${field} "${CMAKE_MATCH_${i}}" PARENT_SCOPE)
      math(EXPR i "${i} + 1")
    endforeach()
  endforeach()
  set(${prefix}_NAMES ${names} PARENT_SCOPE)
endfunction()

# vs_read_suites(SRC): VS_SUITE_NAMES, and VS_SUITE_<name>_TIMEOUT,
# VS_SUITE_<name>_UNSUPPORTED and VS_SUITE_<name>_LABELS (a CMake list)
# for each.
function(vs_read_suites src)
  vs_read_def(${src}/test/suites.def VS_SUITE
    "([a-z_]+), ([a-z_]+|NULL), ([0-9]+), \"([a-z ]+)\"" VS_SUITE
    UNSUPPORTED TIMEOUT LABELS)
  foreach(name IN LISTS VS_SUITE_NAMES)
    string(REPLACE " " ";" labels "${VS_SUITE_${name}_LABELS}")
    set(VS_SUITE_${name}_TIMEOUT ${VS_SUITE_${name}_TIMEOUT} PARENT_SCOPE)
    set(VS_SUITE_${name}_UNSUPPORTED ${VS_SUITE_${name}_UNSUPPORTED}
      PARENT_SCOPE)
    set(VS_SUITE_${name}_LABELS ${labels} PARENT_SCOPE)
  endforeach()
  set(VS_SUITE_NAMES ${VS_SUITE_NAMES} PARENT_SCOPE)
endfunction()

# vs_read_bugs(SRC): VS_BUG_NAMES (with '-', as -DVS_BROKEN takes them),
# and VS_BUG_<name>_SUITE (SUITE or SUITE/CASE), VS_BUG_<name>_BUILD,
# VS_BUG_<name>_VCPU (SUITE[/CASE],... or empty) and VS_BUG_<name>_WHAT.
function(vs_read_bugs src)
  vs_read_def(${src}/sync/broken.def VS_BUG
    "([a-z0-9_]+), ([a-z_]+(/[a-z0-9_-]+)?), \"([a-z,]*)\", \"([a-z0-9_/,-]*)\", \"([^\"]+)\""
    VS_BUG SUITE CASE_ BUILD VCPU WHAT)
  set(names "")
  foreach(id IN LISTS VS_BUG_NAMES)
    string(REPLACE "_" "-" name ${id})
    list(APPEND names ${name})
    foreach(field SUITE BUILD VCPU WHAT)
      set(VS_BUG_${name}_${field} "${VS_BUG_${id}_${field}}" PARENT_SCOPE)
    endforeach()
  endforeach()
  set(VS_BUG_NAMES ${names} PARENT_SCOPE)
endfunction()

# vs_read_tools(SRC): VS_TOOL_NAMES, and VS_TOOL_<name>_DIR,
# VS_TOOL_<name>_BUILD (native or vcpu) and VS_TOOL_<name>_MAN for each.
function(vs_read_tools src)
  vs_read_def(${src}/tools/tools.def VS_TOOL
    "([a-z-]+), ([a-z-]+), (native|vcpu), ([a-z-]+)" VS_TOOL DIR BUILD MAN)
  foreach(name IN LISTS VS_TOOL_NAMES)
    foreach(field DIR BUILD MAN)
      set(VS_TOOL_${name}_${field} "${VS_TOOL_${name}_${field}}"
        PARENT_SCOPE)
    endforeach()
  endforeach()
  set(VS_TOOL_NAMES ${VS_TOOL_NAMES} PARENT_SCOPE)
endfunction()
