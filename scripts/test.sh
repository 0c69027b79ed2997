#!/usr/bin/env bash
# The test command: installs what the black-box tests need (Python 3 and
# the sqlite3 shell, as external peers; script(1) for a terminal; zsh and
# fish for the completion tests; gcc for the race detector, which needs
# cgo), then runs every module's tests with the race detector.
#
# Without a C compiler that it can install (not root, or no apt-get) the
# tests run without -race, after a notice; in CI (CI=true) that is an
# error, as CI always runs with -race.
# SESSIONDB_TEST_NO_INSTALL=1 never installs anything (a missing tool is
# then an error, a missing compiler means no -race);
# SESSIONDB_TEST_DRY_RUN=1 prints the test commands instead of running them.
#
# The PostgreSQL engine (module pg/) and the CLI (module cmd/sessiondb/,
# which links both engines) are tested on a real server: the one
# SESSIONDB_PG_DSN names, else a throwaway cluster started here when the
# PostgreSQL binaries are present or can be installed (scripts/pg-cluster.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

can_install() {
  [ "${SESSIONDB_TEST_NO_INSTALL:-}" != 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1
}
have_cc() { command -v "$(go env CC)" >/dev/null 2>&1; }

need=()
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
command -v script >/dev/null 2>&1 || need+=(bsdutils) # script(1): a terminal for the progress-bar test
command -v zsh >/dev/null 2>&1 || need+=(zsh)           # the completion tests drive each shell
command -v fish >/dev/null 2>&1 || need+=(fish)
# the viewer's browser tests (cmd/sessiondb/ui_browser_test.go) drive headless Chromium
[ -n "${SESSIONDB_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1 || need+=(chromium)
if ! have_cc && can_install; then
  need+=(gcc)
fi
if [ ${#need[@]} -gt 0 ]; then
  if can_install; then
    echo "installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "scripts/test.sh: please install: ${need[*]}" >&2
    exit 1
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
for m in convert/openai convert/anthropic; do
  (cd "$m" && run go test "${race[@]}" -count=1 ./...)
done

# Without a server the pg tests skip, saying how to get one (in CI they fail).
source scripts/pg-cluster.sh
pg_cluster_start
(cd pg && run go test "${race[@]}" -count=1 ./...)
# The CLI is its own module (it links both engines); its PostgreSQL tests
# use the same server.
(cd cmd/sessiondb && run go test "${race[@]}" -count=1 ./...)
