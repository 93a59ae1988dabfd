# cmake/layers.cmake - a layer of the library as CMake targets.
#
# vs_add_layer(NAME [ONE_BUILD] SOURCES src... [NATIVE src...]
#              [VCPU src...] [OPTIONS opt...] [LINK target...]
#              [NATIVE_LINK target...])
#
# makes vmsim_NAME, an object library of the layer's SOURCES and NATIVE
# sources, and, where the vCPU build is made (VS_VCPU_BUILD), its twin
# vmsim_NAME_vcpu: the SOURCES and VCPU sources compiled with VS_VCPU=1,
# where every operation of vmsim/atomic.h and vmsim/wait.h is an event
# of the virtual-CPU engine.  A ONE_BUILD layer (the engine itself, which
# uses no seam) has no twin: its objects serve both.  OPTIONS are
# compile options of the native build (the vCPU build has
# -fno-semantic-interposition throughout).  LINK states the layer's
# arrows: a layer below by its NAME (vmsim_NAME, or its twin), any other
# target as it is; NATIVE_LINK only in the native build.  The top-level CMakeLists.txt bundles the layers'
# objects into libvmsim (the global property VS_LAYERS_native) and
# libvmsim-vcpu (VS_LAYERS_vcpu).
function(vs_add_layer name)
  cmake_parse_arguments(L "ONE_BUILD" "" "SOURCES;NATIVE;VCPU;OPTIONS;LINK;NATIVE_LINK"
    ${ARGN})
  set(variants native)
  if(VS_VCPU_BUILD AND NOT L_ONE_BUILD)
    list(APPEND variants vcpu)
  endif()
  foreach(v IN LISTS variants)
    if(v STREQUAL "native")
      set(t vmsim_${name})
      add_library(${t} OBJECT ${L_SOURCES} ${L_NATIVE})
      target_compile_options(${t} PRIVATE ${L_OPTIONS})
      target_link_libraries(${t} PUBLIC ${L_NATIVE_LINK})
    else()
      set(t vmsim_${name}_vcpu)
      add_library(${t} OBJECT ${L_SOURCES} ${L_VCPU})
      target_compile_definitions(${t} PUBLIC VS_VCPU=1)
      target_compile_options(${t} PRIVATE -fno-semantic-interposition)
    endif()
    target_compile_definitions(${t} PRIVATE _GNU_SOURCE)
    target_include_directories(${t} PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
      $<BUILD_INTERFACE:${VS_GEN_DIR}>)
    # A planted bug (sync/broken.def) may sit in any layer, and in the
    # inline code of a public header, which then includes sync/'s list.
    if(VS_BROKEN_ID)
      target_compile_definitions(${t} PRIVATE "VS_BROKEN_ID=${VS_BROKEN_ID}")
      target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR})
    endif()
    foreach(dep IN LISTS L_LINK)
      if(v STREQUAL "vcpu" AND TARGET vmsim_${dep}_vcpu)
        set(dep vmsim_${dep}_vcpu)
      elseif(TARGET vmsim_${dep})
        set(dep vmsim_${dep})
      elseif(NOT TARGET ${dep})
        message(FATAL_ERROR "vs_add_layer(${name}): no layer or target "
          "'${dep}' (a layer is added after those it links)")
      endif()
      target_link_libraries(${t} PUBLIC ${dep})
    endforeach()
    set_property(GLOBAL APPEND PROPERTY VS_LAYERS_${v} ${t})
    if(L_ONE_BUILD AND VS_VCPU_BUILD)
      set_property(GLOBAL APPEND PROPERTY VS_LAYERS_vcpu ${t})
    endif()
  endforeach()
endfunction()
