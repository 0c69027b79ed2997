#!/usr/bin/env bash
# Sourced by scripts/test.sh: starts a throwaway PostgreSQL cluster for the
# pg module's tests and exports SESSIONDB_PG_DSN, unless it is already set
# (then those tests use that server), and SESSIONDB_PG_RESTART, the command
# that crash-restarts it for the server-restart test. The cluster runs as
# the postgres user (initdb refuses root), C.UTF-8 (a C ctype would blind
# pg_trgm to CJK), trust auth on a Unix socket in a temporary directory
# and no TCP, so nothing outside this run can reach it; an EXIT trap stops
# it and removes the directory. PostgreSQL is installed first when it is
# missing and this is root with apt-get.
#
# Beside it runs a hot standby, made with pg_basebackup -R and streaming
# from it, for the standby tests (pg/standby_test.go):
# SESSIONDB_PG_STANDBY_DSN, and its log, SESSIONDB_PG_STANDBY_LOG, which a
# failing standby test quotes. It streams through a physical replication
# slot, so the primary keeps every WAL segment the standby has not
# received: without one, the restart tests' crashes and checkpoints
# recycled segments a standby slowed by the race detector still needed,
# and it stopped replaying for good (CI, 2026-12-06: "no receiver").
# The primary listens on port $SESSIONDB_TEST_PG_PORT (default 55432),
# the standby on the next one.
#
# Sets pg_ready=1 when a server is there for the tests; otherwise explains
# why not (the pg tests then skip, or fail under CI=true).

pg_ready=0
pg_cluster_start() {
  if [ -n "${SESSIONDB_PG_DSN:-}" ]; then
    pg_ready=1
    return
  fi
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    if can_install; then
      echo "installing postgresql postgresql-contrib"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        postgresql postgresql-contrib >/dev/null
    else
      echo "scripts/test.sh: NOTICE: no PostgreSQL here and none can be installed; the pg tests will skip" >&2
      return
    fi
  fi
  if [ "$(id -u)" != 0 ] && [ "$(id -un)" != postgres ]; then
    echo "scripts/test.sh: NOTICE: a throwaway PostgreSQL cluster needs root (to run as postgres);" >&2
    echo "  set SESSIONDB_PG_DSN to a server's connection string to run the pg tests" >&2
    return
  fi
  if [ "${SESSIONDB_TEST_DRY_RUN:-}" = 1 ]; then
    echo "start a throwaway PostgreSQL cluster (initdb --locale=C.UTF-8, Unix socket only)"
    pg_ready=1
    return
  fi
  local pgbin as_pg=() port=${SESSIONDB_TEST_PG_PORT:-55432}
  pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  PG_TMP=$(mktemp -d)
  if [ "$(id -u)" = 0 ]; then
    chown postgres "$PG_TMP"
    as_pg=(runuser -u postgres --)
  fi
  PG_STOP=("${as_pg[@]}" "$pgbin/pg_ctl" -D "$PG_TMP/data" -m fast -w stop)
  trap 'pg_cluster_stop' EXIT
  local started=$SECONDS
  "${as_pg[@]}" "$pgbin/initdb" -D "$PG_TMP/data" --locale=C.UTF-8 --encoding=UTF8 --auth=trust -U postgres >"$PG_TMP/initdb.log" 2>&1 ||
    { cat "$PG_TMP/initdb.log" >&2; return 1; }
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/log" -w start \
    -o "-c listen_addresses='' -k $PG_TMP -p $port -c max_connections=200" >/dev/null ||
    { cat "$PG_TMP/log" >&2; return 1; }
  # initdb's trust rules let the local postgres role replicate.
  "${as_pg[@]}" "$pgbin/pg_basebackup" -D "$PG_TMP/standby" -R -C -S sessiondb_test_standby -X stream -c fast -h "$PG_TMP" -p "$port" -U postgres >"$PG_TMP/basebackup.log" 2>&1 ||
    { cat "$PG_TMP/basebackup.log" >&2; return 1; }
  PG_STOP_STANDBY=("${as_pg[@]}" "$pgbin/pg_ctl" -D "$PG_TMP/standby" -m fast -w stop)
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$PG_TMP/standby" -l "$PG_TMP/standby.log" -w start \
    -o "-c listen_addresses='' -k $PG_TMP -p $((port + 1)) -c max_connections=200" >/dev/null ||
    { cat "$PG_TMP/standby.log" >&2; return 1; }
  echo "throwaway PostgreSQL cluster and its hot standby up in $((SECONDS - started)) s at $PG_TMP"
  export SESSIONDB_PG_DSN="host=$PG_TMP port=$port user=postgres dbname=postgres sslmode=disable"
  export SESSIONDB_PG_STANDBY_DSN="host=$PG_TMP port=$((port + 1)) user=postgres dbname=postgres sslmode=disable"
  export SESSIONDB_PG_STANDBY_LOG="$PG_TMP/standby.log"
  # The server-restart test crashes and restarts this cluster (and only
  # this one: a server named by a caller's SESSIONDB_PG_DSN is never
  # restarted, and that test then skips). pg_ctl waits up to 300 s, not
  # its default 60: the fleet test's `-m fast` restart ends in a shutdown
  # checkpoint that syncs every file the suite's schemas dirtied (26,000,
  # 21 s on a busy 2-core machine; over 60 s once, "server does not shut
  # down").
  export SESSIONDB_PG_RESTART="cd / && ${as_pg[*]} $pgbin/pg_ctl -D $PG_TMP/data -l $PG_TMP/log -w -t 300 -m immediate restart >/dev/null"
  # The replica test stops the standby (this restart command with stop)
  # and starts it again (pg_ctl restart starts a stopped server).
  export SESSIONDB_PG_STANDBY_RESTART="cd / && ${as_pg[*]} $pgbin/pg_ctl -D $PG_TMP/standby -l $PG_TMP/standby.log -w -t 300 -m fast restart >/dev/null"
  pg_ready=1
}
pg_cluster_stop() {
  if [ -n "${PG_TMP:-}" ] && [ -d "$PG_TMP/data" ]; then
    if [ -d "$PG_TMP/standby" ]; then
      "${PG_STOP_STANDBY[@]}" >/dev/null 2>&1 || true
    fi
    "${PG_STOP[@]}" >/dev/null 2>&1 || true
    rm -rf "$PG_TMP"
  fi
}
