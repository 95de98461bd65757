/** Layer 3: how every console statement runs — read-only, bounded in time, rows, bytes and memory. */
export interface ConsoleLimits {
  maxExecutionSeconds: number;
  maxRowsToRead: number;
  maxBytesToRead: number;
  maxMemoryBytes: number;
}

export const DEFAULT_ROW_LIMIT = 1000;
export const MAX_ROW_LIMIT = 50_000;
/** Longest SQL text accepted (characters); the engine's own max_query_size covers the wrapped text. */
export const MAX_SQL_LENGTH = 100_000;

export type EngineSettings = Record<string, string | number>;

/** Settings of the parse steps (formatQuery, EXPLAIN AST): read-only, small and quick. */
export function parseSettings(limits: ConsoleLimits): EngineSettings {
  return {
    readonly: 1,
    max_execution_time: Math.min(limits.maxExecutionSeconds, 10),
    max_query_size: 1_048_576,
    max_parser_depth: 1000,
    max_ast_depth: 1000,
    max_ast_elements: 200_000,
  };
}

/** Settings of the confined query itself. */
export function runSettings(limits: ConsoleLimits, rowLimit: number): EngineSettings {
  return {
    readonly: 1,
    max_execution_time: limits.maxExecutionSeconds,
    timeout_overflow_mode: "throw",
    max_result_rows: rowLimit + 1,
    result_overflow_mode: "break",
    max_rows_to_read: limits.maxRowsToRead,
    max_bytes_to_read: limits.maxBytesToRead,
    read_overflow_mode: "throw",
    max_memory_usage: limits.maxMemoryBytes,
    max_query_size: 1_048_576,
    max_parser_depth: 1000,
    max_ast_depth: 1000,
    max_ast_elements: 200_000,
    max_expanded_ast_elements: 500_000,
    // The analyst CTEs must be visible in every subquery and UNION part (layer 2 relies on it).
    enable_global_with_statement: 1,
    allow_introspection_functions: 0,
  };
}
