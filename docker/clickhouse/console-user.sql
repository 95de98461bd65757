-- The SQL console's ClickHouse user (docs/sql-console.md, layer 4). Placeholders: {{DB}} the app's
-- database, {{CONSOLE_DB}} the console's empty database, {{USER}}, {{PASSWORD}}.
-- It can SELECT the tables behind the analyst tables and nothing else: no touchpoints, no system
-- tables beyond what every user sees, no SOURCES (url, file, s3, remote…), no dictionaries, no DDL.
CREATE DATABASE IF NOT EXISTS {{CONSOLE_DB}};
CREATE SETTINGS PROFILE OR REPLACE {{USER}}_profile SETTINGS
  readonly = 1,
  allow_ddl = 0 CONST,
  allow_introspection_functions = 0 CONST,
  max_execution_time = 30 MIN 0.1 MAX 3600 CHANGEABLE_IN_READONLY,
  timeout_overflow_mode CHANGEABLE_IN_READONLY,
  max_result_rows MAX 50001 CHANGEABLE_IN_READONLY,
  max_result_bytes CHANGEABLE_IN_READONLY,
  result_overflow_mode CHANGEABLE_IN_READONLY,
  max_rows_to_read CHANGEABLE_IN_READONLY,
  max_bytes_to_read CHANGEABLE_IN_READONLY,
  read_overflow_mode CHANGEABLE_IN_READONLY,
  max_memory_usage = 1073741824 CHANGEABLE_IN_READONLY,
  max_threads CHANGEABLE_IN_READONLY,
  os_thread_priority CHANGEABLE_IN_READONLY,
  max_query_size CHANGEABLE_IN_READONLY,
  max_parser_depth CHANGEABLE_IN_READONLY,
  max_ast_depth CHANGEABLE_IN_READONLY,
  max_ast_elements CHANGEABLE_IN_READONLY,
  max_expanded_ast_elements CHANGEABLE_IN_READONLY,
  enable_global_with_statement CHANGEABLE_IN_READONLY,
  additional_table_filters CHANGEABLE_IN_READONLY,
  optimize_move_to_prewhere = 0 CHANGEABLE_IN_READONLY,
  optimize_move_to_prewhere_if_final = 0 CHANGEABLE_IN_READONLY,
  output_format_json_quote_64bit_integers CHANGEABLE_IN_READONLY,
  output_format_json_quote_decimals CHANGEABLE_IN_READONLY,
  date_time_output_format CHANGEABLE_IN_READONLY,
  send_progress_in_http_headers CHANGEABLE_IN_READONLY,
  cancel_http_readonly_queries_on_client_close CHANGEABLE_IN_READONLY,
  http_headers_progress_interval_ms CHANGEABLE_IN_READONLY;
CREATE USER IF NOT EXISTS {{USER}} IDENTIFIED WITH sha256_password BY '{{PASSWORD}}' DEFAULT DATABASE {{CONSOLE_DB}} SETTINGS PROFILE '{{USER}}_profile';
ALTER USER {{USER}} IDENTIFIED WITH sha256_password BY '{{PASSWORD}}' DEFAULT DATABASE {{CONSOLE_DB}} SETTINGS PROFILE '{{USER}}_profile';
REVOKE ALL ON *.* FROM {{USER}};
GRANT SHOW TABLES ON {{CONSOLE_DB}}.* TO {{USER}};
GRANT SELECT ON {{DB}}.events TO {{USER}};
GRANT SELECT ON {{DB}}.orders TO {{USER}};
GRANT SELECT ON {{DB}}.order_lines TO {{USER}};
GRANT SELECT ON {{DB}}.refunds TO {{USER}};
GRANT SELECT ON {{DB}}.order_costs TO {{USER}};
GRANT SELECT ON {{DB}}.ad_entities TO {{USER}};
GRANT SELECT ON {{DB}}.ad_metrics_daily TO {{USER}};
GRANT SELECT ON {{DB}}.identity_links TO {{USER}};
GRANT SELECT ON {{DB}}.fx_rates TO {{USER}};
