#!/bin/bash
# First start of the ClickHouse container: create the SQL console's read-only user from
# ../console-user.sql (mounted at /pixelhouse/console-user.sql). See docs/sql-console.md.
set -euo pipefail
db="${CLICKHOUSE_DB:-pixelhouse}"
user="${CLICKHOUSE_CONSOLE_USER:-pixelhouse_console}"
password="${CLICKHOUSE_CONSOLE_PASSWORD:-pixelhouse_console}"
case "$password" in *"'"*|*\\*) echo "CLICKHOUSE_CONSOLE_PASSWORD may not contain quotes or backslashes" >&2; exit 1;; esac
sed -e "s/{{DB}}/${db}/g" -e "s/{{CONSOLE_DB}}/${db}_console/g" -e "s/{{USER}}/${user}/g" \
  -e "s/{{PASSWORD}}/${password}/g" /pixelhouse/console-user.sql |
  clickhouse client --user "${CLICKHOUSE_USER}" --password "${CLICKHOUSE_PASSWORD}" --multiquery
