#!/bin/bash
# Runs in the guest: the regionpm kselftest (TAP), with the harness options
# in $REGIONPM_KSELFTEST_ARGS (e.g. "-t NAME" to include, "-T NAME" to
# exclude a test), so one binary serves guests of different shapes.
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck disable=SC2086 # a list of options
exec "$top/build/tests/regionpm_test" ${REGIONPM_KSELFTEST_ARGS:-}
