#!/usr/bin/env bash
# postgres.sh [COMMAND [ARG...]]: run COMMAND (default: the PostgreSQL tests,
# go test -count=1 ./index/pgvector/) against a throwaway PostgreSQL 15 with
# pgvector, then stop the server and delete its files.
#
# The server runs as an unprivileged user (nobody, when started as root) on
# a free loopback port, from a cluster in a temporary directory; COMMAND
# sees its database in RECRAWL_TEST_POSTGRES_DSN. When pgvector is not
# installed in the server, it is built from the vendored source
# (RECRAWL_PGVECTOR_SRC, default ../shared/vendor/pgvector beside the
# repository, else /work/shared/vendor/pgvector) and installed; that, and
# installing postgresql-server-dev-15 when its headers are missing, needs
# root. PG_BIN (default /usr/lib/postgresql/15/bin) names the server's
# binaries.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
pg_config=$PG_BIN/pg_config

say() { echo "postgres.sh: $*" >&2; }
die() { say "$*"; exit 1; }
as_root() { [ "$(id -u)" -eq 0 ]; }

if [ ! -x "$PG_BIN/initdb" ] || [ ! -x "$pg_config" ]; then
  if as_root; then
    say "installing the PostgreSQL 15 server (no $PG_BIN/initdb)"
    apt-get update -q && apt-get install -y -q postgresql-15
  else
    die "no PostgreSQL 15 server in $PG_BIN (install postgresql-15, or set PG_BIN)"
  fi
fi

# pgvector: built and installed once per machine.
if [ ! -f "$("$pg_config" --sharedir)/extension/vector.control" ] || [ ! -f "$("$pg_config" --pkglibdir)/vector.so" ]; then
  src=${RECRAWL_PGVECTOR_SRC:-}
  if [ -z "$src" ]; then
    for d in "$repo/../shared/vendor/pgvector" /work/shared/vendor/pgvector; do
      if [ -f "$d/vector.control" ]; then src=$d; break; fi
    done
  fi
  if [ -n "${RECRAWL_PGVECTOR_SRC:-}" ] && [ ! -f "$src/vector.control" ]; then
    die "pgvector is not installed, and RECRAWL_PGVECTOR_SRC=$src is not a pgvector source tree (no vector.control)"
  fi
  [ -n "$src" ] ||
    die "pgvector is not installed and its source was not found: set RECRAWL_PGVECTOR_SRC to a pgvector checkout (looked in $repo/../shared/vendor/pgvector and /work/shared/vendor/pgvector)"
  as_root || die "pgvector is not installed in $("$pg_config" --sharedir); run this script as root once to build and install it from $src"
  if [ ! -f "$("$pg_config" --includedir-server)/postgres.h" ]; then
    say "installing postgresql-server-dev-15 (no server headers in $("$pg_config" --includedir-server))"
    apt-get update -q && apt-get install -y -q postgresql-server-dev-15
  fi
  build=$(mktemp -d)
  say "building pgvector from $src in $build"
  cp -r "$src" "$build/pgvector"
  make -s -C "$build/pgvector" PG_CONFIG="$pg_config" OPTFLAGS="" >"$build/make.log" 2>&1 ||
    { tail -20 "$build/make.log" >&2; die "building pgvector failed (log above)"; }
  make -s -C "$build/pgvector" PG_CONFIG="$pg_config" install >>"$build/make.log" 2>&1 ||
    { tail -20 "$build/make.log" >&2; die "installing pgvector failed (log above)"; }
  rm -rf "$build"
fi

# The throwaway cluster.
dir=$(mktemp -d "${TMPDIR:-/tmp}/recrawl-pg.XXXXXX")
run=()
if as_root; then
  chown nobody: "$dir"
  run=(runuser -u nobody --)
fi
started=""
cleanup() {
  if [ -n "$started" ]; then
    "${run[@]}" "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"${run[@]}" "$PG_BIN/initdb" -D "$dir/data" -U recrawl --auth=trust -E UTF8 --no-locale -N >"$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; die "initdb failed"; }
for try in 1 2 3 4 5 6 7 8; do
  port=$((20000 + RANDOM % 40000))
  if "${run[@]}" "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=300" start >/dev/null; then
    started=1
    break
  fi
  say "port $port: the server did not start (try $try)"
done
[ -n "$started" ] || { tail -20 "$dir/server.log" >&2; die "the server did not start"; }
"$PG_BIN/createdb" -h 127.0.0.1 -p "$port" -U recrawl recrawl_test

export RECRAWL_TEST_POSTGRES_DSN="postgres://recrawl@127.0.0.1:$port/recrawl_test?sslmode=disable"
export RECRAWL_CI_POSTGRES=1
say "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') with pgvector at $RECRAWL_TEST_POSTGRES_DSN"
if [ $# -eq 0 ]; then
  set -- go test -count=1 ./index/pgvector/
fi
cd "$repo"
status=0
"$@" || status=$?
exit "$status"
