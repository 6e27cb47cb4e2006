# evenfeed_target_defaults(target): warnings (as errors for our own code), the include
# root, and the sanitizers when EVENFEED_SANITIZE is on.
set(EVENFEED_SANITIZER_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer
                             -fno-sanitize-recover=undefined)
if(EVENFEED_SANITIZE AND EVENFEED_TSAN)
  message(FATAL_ERROR "EVENFEED_SANITIZE (ASan+UBSan) and EVENFEED_TSAN cannot be combined; pick one")
endif()
if(EVENFEED_TSAN)
  set(EVENFEED_SANITIZER_FLAGS -fsanitize=thread -fno-omit-frame-pointer)
endif()
if(EVENFEED_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "EVENFEED_FUZZ needs clang (libFuzzer): CC=clang CXX=clang++ cmake ...")
  endif()
  # Everything is checked by ASan+UBSan; only the fuzz targets link libFuzzer's main.
  # libFuzzer's coverage (-fsanitize=fuzzer-no-link: a counter on every edge and a
  # callback on every comparison) goes everywhere but the libraries of
  # EVENFEED_UNFUZZED_TARGETS: the planner holds no parser a fuzzer feeds, and its
  # coverage slowed the planner's tests under ASan about twice over (the ASan stage of
  # scripts/test.sh; docs/plan_history.md, thirty-ninth session).
  set(EVENFEED_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
                               -fno-omit-frame-pointer)
  set(EVENFEED_FUZZ_COVERAGE_FLAGS -fsanitize=fuzzer-no-link)
  set(EVENFEED_UNFUZZED_TARGETS evenfeed_bucketing)
  set(EVENFEED_SANITIZE ON)
endif()
if(EVENFEED_FUZZ)
  add_link_options(-fsanitize=address,undefined)
elseif(EVENFEED_SANITIZE OR EVENFEED_TSAN)
  add_link_options(${EVENFEED_SANITIZER_FLAGS})
endif()

function(evenfeed_target_defaults target)
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${EVENFEED_ROOT}>)
  target_compile_features(${target} PUBLIC cxx_std_20)
  set(cxx_warnings -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-missing-field-initializers)
  if(EVENFEED_WERROR)
    list(APPEND cxx_warnings -Werror)
  endif()
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${cxx_warnings}>)
  if(EVENFEED_SANITIZE OR EVENFEED_TSAN)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${EVENFEED_SANITIZER_FLAGS}>)
  endif()
  if(EVENFEED_FUZZ AND NOT target IN_LIST EVENFEED_UNFUZZED_TARGETS)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${EVENFEED_FUZZ_COVERAGE_FLAGS}>)
  endif()
endfunction()
