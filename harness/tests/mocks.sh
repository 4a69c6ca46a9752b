#!/bin/sh
# mxcts against the mock implementations (test_mocks.c), as one TAP test.
# A script rather than the program itself so that harness/tests/local.mk can
# order it after every other test (automake owns the rule of a program's log).
exec ./harness/tests/test_mocks "$@"
