#!/usr/bin/env bash
# The test command. Any user with only Go can run it: every test that needs
# something else — python3 and the sqlite3 shell (external peers), script(1)
# (a terminal), zsh and fish (the completion tests), gcc (the race detector
# needs cgo), a PostgreSQL server, root (mounts, other users' files) — skips
# where it is missing, saying how to run it. As root with apt-get (CI: a
# fresh machine) it installs them first, and pgbouncer and chromium, which
# the pooler and viewer tests drive.
#
# Under CI=true nothing may be missing: a tool that cannot be installed,
# or no C compiler (CI always runs with -race), is an error before any test
# runs, and a test that would skip fails instead.
# SESSIONDB_TEST_NO_INSTALL=1 never installs anything;
# SESSIONDB_TEST_DRY_RUN=1 prints the test commands instead of running them.
#
# The PostgreSQL engine (module pg/) and the CLI (module cmd/sessiondb/,
# which links both engines) are tested on a real server: the one
# SESSIONDB_PG_DSN names, else a throwaway cluster started here when the
# PostgreSQL binaries are present or can be installed and this is root
# (scripts/pg-cluster.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

can_install() {
  [ "${SESSIONDB_TEST_NO_INSTALL:-}" != 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1
}
have_cc() { command -v "$(go env CC)" >/dev/null 2>&1; }

need=()
ci_failed=0
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
command -v script >/dev/null 2>&1 || need+=(bsdutils) # script(1): a terminal for the progress-bar test
command -v zsh >/dev/null 2>&1 || need+=(zsh)           # the completion tests drive each shell
command -v fish >/dev/null 2>&1 || need+=(fish)
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || need+=(pgbouncer) # the pooler tests
# the viewer's browser tests (cmd/sessiondb/ui_browser_test.go) drive headless Chromium
[ -n "${SESSIONDB_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1 || need+=(chromium)
if ! have_cc && can_install; then
  need+=(gcc)
fi
if [ ${#need[@]} -gt 0 ]; then
  if can_install; then
    echo "installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  elif [ "${CI:-}" = true ]; then
    echo "scripts/test.sh: CI needs ${need[*]} and cannot install them here (run as root with apt-get)" >&2
    ci_failed=1
  else
    echo "scripts/test.sh: NOTICE: not installed: ${need[*]} (root with apt-get installs them);" >&2
    echo "  the tests that drive them skip, each saying so (go test -v shows which)" >&2
  fi
fi

race=(-race)
if ! have_cc; then
  if [ "${CI:-}" = true ]; then
    echo "scripts/test.sh: no C compiler ($(go env CC)); CI runs the race detector, which needs one" >&2
    exit 1
  fi
  echo "scripts/test.sh: NOTICE: no C compiler ($(go env CC)) and none can be installed here," >&2
  echo "  so the tests run WITHOUT the race detector (it needs cgo). Install gcc to test as CI does." >&2
  race=()
fi
[ "$ci_failed" = 0 ] || exit 1

run() {
  if [ "${SESSIONDB_TEST_DRY_RUN:-}" = 1 ]; then
    echo "$*"
  else
    "$@"
  fi
}
# The db package alone runs for minutes under the race detector on a
# 2-core machine; the default 10-minute timeout per package is too tight.
run go test "${race[@]}" -count=1 -timeout 40m ./...
(cd lint && run go test -count=1 ./...)
# The provider converters are modules of their own (their SDKs stay out of
# the store's graph).
for m in convert/openai convert/anthropic convert/eino; do
  (cd "$m" && run go test "${race[@]}" -count=1 ./...)
done

# Without a server the pg tests skip, saying how to get one (in CI they fail).
source scripts/pg-cluster.sh
pg_cluster_start
# Past go test's default 10 minutes: under the race detector on this
# 2-core machine the pg package alone runs 6-9 of them.
(cd pg && run go test "${race[@]}" -count=1 -timeout 25m ./...)
# The Prometheus collector is a module of its own (the client stays out of
# the store's graph); its tests scrape a store of each engine, PostgreSQL
# on the same server.
(cd metrics/prometheus && run go test "${race[@]}" -count=1 ./...)
# The CLI is its own module (it links both engines); its PostgreSQL tests
# use the same server.
(cd cmd/sessiondb && run go test "${race[@]}" -count=1 ./...)
