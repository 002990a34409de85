# Helpers shared by the CLI shell tests (sourced; they need $T, a scratch
# directory the test owns).
step() { echo "--- $*"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# run CMD...: runs it, output to $T/out (shown), fails the test on non-zero.
run() {
  if ! "$@" >"$T/out" 2>"$T/err"; then
    cat "$T/out" "$T/err" >&2
    fail "command failed: $*"
  fi
  cat "$T/out"
}
# expect_fail PATTERN CMD...: CMD must exit non-zero with PATTERN (grep -Ei) on stderr.
expect_fail() {
  local pattern=$1
  shift
  if "$@" >"$T/out" 2>"$T/err"; then
    cat "$T/out" >&2
    fail "should have failed: $*"
  fi
  grep -Eqi -- "$pattern" "$T/err" || {
    cat "$T/err" >&2
    fail "stderr of '$*' lacks /$pattern/"
  }
  echo "ok (fails as expected): $(head -c 200 "$T/err" | tr '\n' ' ')"
}
