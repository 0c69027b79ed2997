#!/usr/bin/env bash
# The test command: installs what the black-box tests need (Python 3 and
# the sqlite3 shell, as external peers; script(1) for a terminal), then runs every module's tests
# with the race detector.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
command -v script >/dev/null 2>&1 || need+=(bsdutils) # script(1): a terminal for the progress-bar test
command -v zsh >/dev/null 2>&1 || need+=(zsh)           # the completion tests drive each shell
command -v fish >/dev/null 2>&1 || need+=(fish)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "scripts/test.sh: please install: ${need[*]}" >&2
    exit 1
  fi
fi

go test -race -count=1 ./...
(cd lint && go test -count=1 ./...)
