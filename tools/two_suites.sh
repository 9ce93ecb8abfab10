#!/usr/bin/env bash
# `make test` and `make test-fast`: two pytest processes side by side, one per core. The grader's
# own suites (fixture courses, no executed reference) run beside everything else (which reads the
# executed references and grades the mutation batch in the background). On CI's 2 cores a single
# process left a core idle for half its run. Usage: tools/two_suites.sh PYTHON MARKER_EXPRESSION [PYTEST_ARGS...]
set -uo pipefail
py=$1 markers=$2
shift 2
extra=("$@")
grader=(tests/test_autograder_*.py tests/test_calibrate.py tests/test_scaffold.py tests/test_plain_nbgrader.py)
beside=$(mktemp -d)
trap 'rm -rf "$beside"' EXIT
"$py" -m pytest -q -m "$markers" --durations=15 -p no:cacheprovider --basetemp="$beside/tmp" "${extra[@]}" "${grader[@]}" \
  >"$beside/log" 2>&1 &
pid=$!
"$py" -m pytest -q -m "$markers" --durations=25 "${extra[@]}" "${grader[@]/#/--ignore=}"
rest=$?
wait "$pid"
theirs=$?
echo "=== the grader's suites, run beside the rest ==="
cat "$beside/log"
exit $(( rest || theirs ))
