#!/usr/bin/env bash
# A throw-away PostgreSQL server on 127.0.0.1 for the test suite (Debian, run as root).
#
#   source .ci/postgres.sh        start it and export the URLs below
#   bash .ci/postgres.sh stop     stop it and drop its cluster
#
# Every start drops the cluster and creates it anew, so a run never sees an earlier run's
# rows, whether the last server was stopped, left running or killed. The package is
# installed only when no server is present (the project's machine image has PostgreSQL 15).
#
# Exports:
#   LANGCHEF_TEST_DATABASE_URL    postgresql://langchef:langchef@127.0.0.1:PORT/langchef
#                                 (the tests point LANGCHEF_DATABASE_URL at a fresh schema of it)
#   LANGCHEF_TEST_DAGSTER_PG_URL  postgresql+psycopg2://…/langchef_dagster (for deploy/dagster.yaml)
#                                 "+psycopg2": SQLAlchemy 2.1 reads a bare postgresql:// as psycopg 3,
#                                 on which dagster-postgres 0.29 fails (NOTIFY with a bound parameter).
set -euo pipefail

LANGCHEF_PG_CLUSTER="${LANGCHEF_PG_CLUSTER:-langchef_ci}"
LANGCHEF_PG_PORT="${LANGCHEF_PG_PORT:-55432}"

_pg_version() { ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n 1; }

_pg_drop() {
  local version
  version="$(_pg_version)"
  if [ -n "$version" ] && pg_lsclusters -h 2>/dev/null \
      | awk -v c="$LANGCHEF_PG_CLUSTER" '$2 == c {found = 1} END {exit !found}'; then
    pg_dropcluster --stop "$version" "$LANGCHEF_PG_CLUSTER"
  fi
}

_pg_start() {
  if [ -z "$(_pg_version)" ] || ! command -v pg_createcluster >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  fi
  local version
  version="$(_pg_version)"
  _pg_drop
  # --no-sync: throw-away data, no fsync at initdb.
  pg_createcluster "$version" "$LANGCHEF_PG_CLUSTER" -p "$LANGCHEF_PG_PORT" --start-conf=manual \
    -- --auth-local=peer --auth-host=scram-sha-256 --no-sync -E UTF8 --locale=C.UTF-8 >/dev/null
  # A conf.d file, not `pg_createcluster -o`: that writes 127.0.0.1 unquoted (it looks like a
  # number to postgresql-common) and the server then refuses its own configuration.
  # fsync and friends off: test data only, never in a deployment.
  cat > "/etc/postgresql/$version/$LANGCHEF_PG_CLUSTER/conf.d/90-langchef-ci.conf" <<'CONF'
listen_addresses = '127.0.0.1'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
CONF
  pg_ctlcluster "$version" "$LANGCHEF_PG_CLUSTER" start
  # env -C /: the postgres user may not be allowed into the caller's working directory.
  runuser -u postgres -- env -C / psql -X -q -p "$LANGCHEF_PG_PORT" -v ON_ERROR_STOP=1 -d postgres <<'SQL'
CREATE ROLE langchef LOGIN CREATEDB PASSWORD 'langchef';
CREATE DATABASE langchef OWNER langchef;
CREATE DATABASE langchef_dagster OWNER langchef;
SQL
  # A password login over TCP must work before any test relies on it.
  PGPASSWORD=langchef psql -X -q -h 127.0.0.1 -p "$LANGCHEF_PG_PORT" -U langchef -d langchef \
    -v ON_ERROR_STOP=1 -tAc 'SELECT 1' >/dev/null
  # Named *_TEST_*: exported as LANGCHEF_DATABASE_URL it would move every test's ledger into
  # one shared database; the PostgreSQL tests set that variable themselves, per test.
  export LANGCHEF_TEST_DATABASE_URL="postgresql://langchef:langchef@127.0.0.1:$LANGCHEF_PG_PORT/langchef"
  export LANGCHEF_TEST_DAGSTER_PG_URL="postgresql+psycopg2://langchef:langchef@127.0.0.1:$LANGCHEF_PG_PORT/langchef_dagster"
  echo "postgres.sh: PostgreSQL $version ($LANGCHEF_PG_CLUSTER) on 127.0.0.1:$LANGCHEF_PG_PORT"
}

if [ "${1:-start}" = "stop" ]; then
  _pg_drop
else
  _pg_start
fi
