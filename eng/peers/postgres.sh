#!/usr/bin/env bash
# A private PostgreSQL 15 server on 127.0.0.1 for the ferrodbc test suite.
#
#   eng/peers/postgres.sh          start (idempotent), ensure role odbcu/pw and database odbcdb,
#                                  print the ODBC connection string on stdout
#   eng/peers/postgres.sh stop     stop the server (the cluster's data is kept)
#   eng/peers/postgres.sh status   exit 0 when the server accepts connections
#
# As root it uses a dedicated Debian cluster ("15/ferrodbc", port 54329, owned by postgres) so the
# default "main" cluster is never touched; as another user it runs initdb into
# ${FERRODBC_PG_DIR:-/tmp/ferrodbc-pg-$USER}. Diagnostics go to stderr; stdout is only the
# connection string, so `CONNSTR=$(eng/peers/postgres.sh)` works.
#
# psqlODBC options in the connection string (each checked against psqlODBC 13.02):
#   MaxLongVarcharSize=0   TEXT (and unknown-typed literals) is described with an unknown size
#                          instead of the default made-up 8190, so nothing mistakes 8190 for a bound.
#   TextAsLongVarchar=1    TEXT is described as SQL_WLONGVARCHAR (the default, stated explicitly):
#                          ferrodbc streams it whole with SQLGetData. With 0 it would be a
#                          VARCHAR(MaxVarcharSize) and longer values could not be bound.
#   MaxVarcharSize=10485760  the size reported for `varchar` without a length. The default 255 is
#                          not a limit PostgreSQL enforces, so a longer value would not fit the
#                          bound buffer (ferrodbc raises DataError rather than truncate). 10485760 is
#                          PostgreSQL's real varchar maximum; above 8000 units ferrodbc streams.
#                          (MaxVarcharSize=0 is worse: it turns every varchar(n) into LONGVARCHAR;
#                          UnknownSizes=1 also reports unconstrained numeric with an unknown size.)
#   UnknownsAsLongVarchar  (left at 0) only moves types psqlODBC does not know (json, xml, ...)
#                          from VARCHAR(MaxVarcharSize) to LONGVARCHAR; with the MaxVarcharSize
#                          above they are streamed whole either way.
#   BoolsAsChar=0          boolean is SQL_BIT (→ bool), not the default VARCHAR '1'/'0'.
#   UseDeclareFetch=0      results are read in one go (no server-side cursor).
set -euo pipefail

PG_VERSION=${FERRODBC_PG_VERSION:-15}
PORT=${FERRODBC_PG_PORT:-54329}
CLUSTER=ferrodbc
ROLE=odbcu
PASSWORD=pw
DATABASE=odbcdb
BIN=/usr/lib/postgresql/$PG_VERSION/bin
CONNSTR="Driver={PostgreSQL Unicode};Server=127.0.0.1;Port=$PORT;Database=$DATABASE;Uid=$ROLE;Pwd=$PASSWORD;MaxLongVarcharSize=0;TextAsLongVarchar=1;MaxVarcharSize=10485760;BoolsAsChar=0;UseDeclareFetch=0"

log() { printf 'postgres peer: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

[ -x "$BIN/postgres" ] || die "PostgreSQL $PG_VERSION is not installed ($BIN/postgres missing); run eng/setup.sh"

if [ "$(id -u)" = 0 ]; then
  MODE=cluster
  SOCKDIR=/var/run/postgresql
  as_pg() { runuser -u postgres -- "$@"; }
else
  MODE=initdb
  DATADIR=${FERRODBC_PG_DIR:-/tmp/ferrodbc-pg-$(id -un)}
  SOCKDIR=$DATADIR/socket
  as_pg() { "$@"; }
fi

ready() { "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" >/dev/null 2>&1; }

psql_admin() {
  # Superuser over the Unix socket (peer/trust auth), never over TCP.
  as_pg "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCKDIR" -p "$PORT" -d postgres "$@"
}

stop() {
  if [ "$MODE" = cluster ]; then
    if pg_lsclusters -h 2>/dev/null | awk -v v="$PG_VERSION" -v c="$CLUSTER" '$1==v && $2==c' | grep -q online; then
      pg_ctlcluster "$PG_VERSION" "$CLUSTER" stop -m fast
      log "stopped cluster $PG_VERSION/$CLUSTER"
    else
      log "cluster $PG_VERSION/$CLUSTER is not running"
    fi
  else
    if [ -f "$DATADIR/data/postmaster.pid" ]; then
      "$BIN/pg_ctl" -D "$DATADIR/data" -m fast -w stop >/dev/null
      log "stopped server in $DATADIR"
    else
      log "server in $DATADIR is not running"
    fi
  fi
}

start() {
  if [ "$MODE" = cluster ]; then
    command -v pg_createcluster >/dev/null || die "pg_createcluster missing (postgresql-common)"
    install -d -o postgres -g postgres -m 2775 "$SOCKDIR"
    DATA=/var/lib/postgresql/$PG_VERSION/$CLUSTER
    if pg_lsclusters -h 2>/dev/null | awk -v v="$PG_VERSION" -v c="$CLUSTER" '$1==v && $2==c' | grep -q . \
        && [ ! -f "$DATA/PG_VERSION" ]; then
      # Configuration without data (e.g. /var/lib wiped by a rebuilt container): start over.
      log "cluster $PG_VERSION/$CLUSTER has no data directory; recreating it"
      pg_dropcluster "$PG_VERSION" "$CLUSTER" --stop >/dev/null 2>&1 || rm -rf "/etc/postgresql/$PG_VERSION/$CLUSTER"
    fi
    if ! pg_lsclusters -h 2>/dev/null | awk -v v="$PG_VERSION" -v c="$CLUSTER" '$1==v && $2==c' | grep -q .; then
      log "creating cluster $PG_VERSION/$CLUSTER on port $PORT"
      pg_createcluster "$PG_VERSION" "$CLUSTER" -p "$PORT" -- --auth-local=peer --auth-host=scram-sha-256 >/dev/null
      CONF=/etc/postgresql/$PG_VERSION/$CLUSTER
      {
        echo "listen_addresses = '127.0.0.1'"
        echo "fsync = off"                  # a throw-away test server
        echo "synchronous_commit = off"
        echo "full_page_writes = off"
      } >> "$CONF/postgresql.conf"
    fi
    if ! ready; then
      log "starting cluster $PG_VERSION/$CLUSTER"
      # A stale pid file from a killed container would make pg_ctlcluster refuse to start.
      PID_FILE=$DATA/postmaster.pid
      if [ -f "$PID_FILE" ] && ! kill -0 "$(head -n1 "$PID_FILE")" 2>/dev/null; then
        rm -f "$PID_FILE"
      fi
      pg_ctlcluster "$PG_VERSION" "$CLUSTER" start || true
    fi
  else
    if [ ! -f "$DATADIR/data/PG_VERSION" ]; then
      log "initdb into $DATADIR/data"
      mkdir -p "$DATADIR/socket"
      "$BIN/initdb" -D "$DATADIR/data" -A trust -U "$(id -un)" -E UTF8 >/dev/null
    fi
    if ! ready; then
      log "starting server in $DATADIR"
      "$BIN/pg_ctl" -D "$DATADIR/data" -l "$DATADIR/server.log" -w start \
        -o "-p $PORT -k $SOCKDIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off" >/dev/null
    fi
  fi

  for _ in $(seq 1 60); do
    ready && break
    sleep 0.5
  done
  if ! ready; then
    if [ "$MODE" = cluster ]; then
      LOGFILE=/var/log/postgresql/postgresql-$PG_VERSION-$CLUSTER.log
    else
      LOGFILE=$DATADIR/server.log
    fi
    [ -f "$LOGFILE" ] && tail -n 20 "$LOGFILE" >&2
    die "the server did not become ready on 127.0.0.1:$PORT (log: $LOGFILE)"
  fi

  # Role and database (idempotent). The password is (re)set every time so a stale role works.
  psql_admin <<SQL
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$ROLE') THEN
    CREATE ROLE $ROLE LOGIN PASSWORD '$PASSWORD';
  ELSE
    ALTER ROLE $ROLE LOGIN PASSWORD '$PASSWORD';
  END IF;
END
\$\$;
SQL
  if [ "$(psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'")" != 1 ]; then
    psql_admin -c "CREATE DATABASE $DATABASE OWNER $ROLE ENCODING 'UTF8' TEMPLATE template0" >/dev/null
  fi
  log "ready on 127.0.0.1:$PORT (database $DATABASE, role $ROLE)"
  echo "$CONNSTR"
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) ready ;;
  *) die "usage: $0 [start|stop|status]" ;;
esac
