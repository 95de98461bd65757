import { chErrors } from "./errors.js";

/**
 * URL parameters of ClickHouse's HTTP interface. The protocol's own (`query`, `database`, …) are
 * read by the endpoint; output formatting settings pass to the engine; transport and progress
 * settings, and the limits clients like to send, are accepted and have no effect (the console's
 * limits apply, always); anything else — `readonly=0`, file-backed formats' schemas, any setting
 * that could change what is read — is refused.
 */
const PROTOCOL = new Set([
  "query",
  "database",
  "default_format",
  "query_id",
  "session_id",
  "session_timeout",
  "session_check",
  "user",
  "password",
  "quota_key",
  "compress",
  "decompress",
  "enable_http_compression",
  "http_zlib_compression_level",
  "buffer_size",
  "wait_end_of_query",
  "http_response_buffer_size",
]);

const NO_EFFECT = new Set([
  "send_progress_in_http_headers",
  "http_headers_progress_interval_ms",
  "cancel_http_readonly_queries_on_client_close",
  "add_http_cors_header",
  "log_comment",
  "max_execution_time",
  "max_result_rows",
  "max_result_bytes",
  "result_overflow_mode",
  "max_rows_to_read",
  "max_bytes_to_read",
  "max_memory_usage",
  "timeout_overflow_mode",
  "max_block_size",
  "extremes",
  "use_client_time_zone",
  "allow_experimental_analyzer",
  "join_use_nulls",
]);

const FORMATTING =
  /^(output_format_(?!schema$)[a-z0-9_]+|format_csv_[a-z0-9_]+|format_tsv_[a-z0-9_]+|date_time_output_format|output_format_decimal_trailing_zeros)$/;

export interface ClientSettings {
  /** Formatting settings for the engine. */
  engine: Record<string, string>;
  /** Accepted and ignored, for the response's information. */
  ignored: string[];
}

/** Sorts a request's parameters into protocol, engine formatting settings and ignored ones; refuses the rest. */
export function clientSettings(params: Readonly<Record<string, string>>): ClientSettings {
  const engine: Record<string, string> = {};
  const ignored: string[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (PROTOCOL.has(name) || name.startsWith("param_")) continue;
    if (name === "readonly") {
      // Already read-only: 1 and 2 ask for nothing more; 0 asks for writes.
      if (value !== "1" && value !== "2")
        throw chErrors.readonly("Cannot modify 'readonly' setting in readonly mode");
      ignored.push(name);
    } else if (NO_EFFECT.has(name)) {
      ignored.push(name);
    } else if (FORMATTING.test(name)) {
      if (value.length > 256 || /[\0\r\n]/.test(value))
        throw chErrors.badArguments(`Bad value for setting ${name}`);
      engine[name] = value;
    } else {
      throw chErrors.readonly(`Cannot modify '${name}' setting in readonly mode`);
    }
  }
  return { engine, ignored };
}
