# cmake -DBUILD=<tree> -DTARGET=<target> -DEXPECT=<regex> -P expect_build_error.cmake
# Passes when building TARGET fails with a message matching EXPECT: a compile-time guard is tested by the
# build it refuses (a failure for any other reason, e.g. a broken snippet, does not pass).
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD} --target ${TARGET}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} built, but it must not:\n${out}")
endif()
if(NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "${TARGET} failed to build, but not with /${EXPECT}/:\n${out}")
endif()
message(STATUS "${TARGET} failed to build, as it must: /${EXPECT}/")
