import { availableParallelism, totalmem } from "node:os";

/** Layer 3: how every console statement runs — read-only, bounded in time, rows, bytes and memory. */
export interface ConsoleLimits {
  maxExecutionSeconds: number;
  maxRowsToRead: number;
  maxBytesToRead: number;
  maxMemoryBytes: number;
  /** The largest result a query may answer (default DEFAULT_MAX_RESULT_BYTES). */
  maxResultBytes?: number;
  /** Engine threads one query may use (default: the engine's, one per core). */
  maxThreads?: number;
}

/**
 * Threads per console query when not configured: all readers busy together use about one thread per
 * core. Each console query otherwise takes every core, and four runaways then leave an ingest insert a
 * ninth of the CPU on two cores; the price is that one query alone on a large machine is slower.
 */
export function defaultConsoleThreads(readers: number, cores = availableParallelism()): number {
  return Math.max(1, Math.floor(cores / readers));
}

/**
 * Memory one console query may use when not configured: 1 GiB, or an eighth of the machine's memory
 * when that is less, so the four default readers together never take more than half of it (the
 * engine's own limit for the whole process is 90 %). Large GROUP BY, ORDER BY and JOIN spill to disk
 * at half of it (the engine's `max_bytes_ratio_before_external_*` defaults) rather than fail.
 */
export function defaultConsoleMemoryBytes(total = totalmem()): number {
  return Math.min(1024 ** 3, Math.floor(total / 8));
}

/**
 * 64 MiB: far more than a grid or a chart can show (50,000 rows of 1 KiB each is 49 MiB), small
 * enough that four readers' results at once stay a fraction of the process's memory.
 */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024 * 1024;

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
    // The result's size in the engine's memory. `throw`, not `break`: break passes on the block that
    // crossed the limit (one row can hold a 500 MB array) and would cut a result without a word. The
    // row limit is the confined query's own LIMIT, so only the size can make this throw.
    max_result_bytes: limits.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
    result_overflow_mode: "throw",
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
    // The lowest CPU priority (nice 19) for the query's threads, so ingestion and the API run first
    // when the console keeps every core busy. The engine sets it only with CAP_SYS_NICE (root, or
    // `cap_add: SYS_NICE`); elsewhere it is a no-op and max_threads alone bounds the console's share.
    os_thread_priority: 19,
    ...(limits.maxThreads ? { max_threads: limits.maxThreads } : {}),
  };
}
