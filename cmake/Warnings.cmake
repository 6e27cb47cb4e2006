# evenfeed_target_defaults(target): warnings (as errors for our own code), the include
# root, and the sanitizers when EVENFEED_SANITIZE is on.
set(EVENFEED_SANITIZER_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer
                             -fno-sanitize-recover=undefined)
if(EVENFEED_SANITIZE)
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
  if(EVENFEED_SANITIZE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${EVENFEED_SANITIZER_FLAGS}>)
  endif()
endfunction()
