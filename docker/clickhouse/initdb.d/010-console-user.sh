#!/bin/bash
# First start of the ClickHouse container: create the SQL console's read-only user from
# ../console-user.sql (mounted at /pixelhouse/console-user.sql). See docs/sql-console.md.
# Elsewhere, run it by hand against any server:
#   CONSOLE_USER_SQL=docker/clickhouse/console-user.sql CLICKHOUSE_DB=pixelhouse \
#   CLICKHOUSE_USER=… CLICKHOUSE_PASSWORD=… CLICKHOUSE_CONSOLE_PASSWORD=… \
#   docker/clickhouse/initdb.d/010-console-user.sh
# PRINT_ONLY=1 prints the SQL instead of running it.
set -euo pipefail
db="${CLICKHOUSE_DB:-pixelhouse}"
user="${CLICKHOUSE_CONSOLE_USER:-pixelhouse_console}"
password="${CLICKHOUSE_CONSOLE_PASSWORD:?set CLICKHOUSE_CONSOLE_PASSWORD (the password of the SQL console user)}"
sql_file="${CONSOLE_USER_SQL:-/pixelhouse/console-user.sql}"
for name in "$db" "$user"; do
  if ! [[ "$name" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]; then
    echo "not a plain identifier (letters, digits, underscore): $name" >&2
    exit 1
  fi
done
case "$password" in *$'\n'* | *$'\r'*)
  echo "CLICKHOUSE_CONSOLE_PASSWORD may not contain line breaks" >&2
  exit 1
  ;;
esac
# The password lands in a SQL string literal ('…', backslash escapes) through a sed replacement, where
# \, & and the delimiter | are special: escaped for the one, then for the other, every character
# arrives as it was (& / | \ ' " $ …).
sql_password=$(printf '%s' "$password" | sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g")
sed_password=$(printf '%s' "$sql_password" | sed -e 's/[\\&|]/\\&/g')
sed -e "s|{{DB}}|${db}|g" -e "s|{{CONSOLE_DB}}|${db}_console|g" -e "s|{{USER}}|${user}|g" \
  -e "s|{{PASSWORD}}|${sed_password}|g" "$sql_file" |
  if [[ "${PRINT_ONLY:-}" == 1 ]]; then
    cat
  else
    clickhouse client --user "${CLICKHOUSE_USER}" --password "${CLICKHOUSE_PASSWORD}" --multiquery
  fi
