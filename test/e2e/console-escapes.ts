/**
 * Escape attempts against the SQL console, run as pixel A while pixel B holds marker rows in every
 * table. `refused`: a 400 whose message matches; `rejected`: any 400 (refused by the console or failed
 * in the engine); `confined`: 200 with A's markers only; `quiet`: 200 (the caller's rows hold nothing
 * that fails, so only another pixel's row could make the engine throw); `any`: 200 or 400. B's markers must never come
 * back, in rows or in an engine error message.
 */
export interface Escape {
  category: string;
  sql: string;
  expect: "refused" | "rejected" | "confined" | "quiet" | "any";
  message?: RegExp;
}

/** `me` is the caller's marker tag: the error-message escapes exclude the caller's own rows by it. */
export function escapes(db: string, me = "A"): Escape[] {
  const nested = (depth: number) =>
    `${"SELECT * FROM (".repeat(depth)}SELECT event_id FROM events${")".repeat(depth)}`;
  const e: Escape[] = [
    // System and information schema
    { category: "system", sql: "SELECT * FROM system.tables", expect: "refused", message: /system tables/ },
    {
      category: "system",
      sql: "SELECT name FROM system.databases",
      expect: "refused",
      message: /system tables/,
    },
    { category: "system", sql: "SELECT * FROM system.one", expect: "refused", message: /system tables/ },
    {
      category: "system",
      sql: "SELECT * FROM INFORMATION_SCHEMA.TABLES",
      expect: "refused",
      message: /information_schema/,
    },
    {
      category: "system",
      sql: "SELECT * FROM information_schema.columns",
      expect: "refused",
      message: /information_schema/,
    },
    {
      category: "system",
      sql: "SELECT event_id FROM events UNION ALL SELECT name FROM system.tables",
      expect: "refused",
      message: /system tables/,
    },
    // Database-qualified names
    {
      category: "qualified",
      sql: `SELECT * FROM ${db}.events`,
      expect: "refused",
      message: /database-qualified/,
    },
    {
      category: "qualified",
      sql: `SELECT * FROM \`${db}\`.\`orders\``,
      expect: "refused",
      message: /database-qualified/,
    },
    {
      category: "qualified",
      sql: `SELECT * FROM "${db}"."orders"`,
      expect: "refused",
      message: /database-qualified/,
    },
    {
      category: "qualified",
      sql: "SELECT * FROM default.events",
      expect: "refused",
      message: /database-qualified/,
    },
    {
      category: "qualified",
      sql: `SELECT * FROM events AS e, ${db}.events AS r`,
      expect: "refused",
      message: /database-qualified/,
    },
    {
      category: "qualified",
      sql: `SELECT * FROM orders o JOIN ${db}.orders r USING (order_id)`,
      expect: "refused",
      message: /database-qualified/,
    },
    // Tables that are not analyst tables
    {
      category: "unknown table",
      sql: "SELECT * FROM touchpoints",
      expect: "refused",
      message: /unknown table touchpoints/,
    },
    {
      category: "unknown table",
      sql: "SELECT * FROM ad_metrics_daily",
      expect: "refused",
      message: /unknown table/,
    },
    {
      category: "unknown table",
      sql: "SELECT * FROM identity_links",
      expect: "refused",
      message: /unknown table/,
    },
    {
      category: "unknown table",
      sql: "SELECT * FROM schema_migrations",
      expect: "refused",
      message: /unknown table/,
    },
    {
      category: "unknown table",
      sql: "SELECT * FROM events WHERE event_id IN touchpoints",
      expect: "refused",
      message: /unknown table touchpoints/,
    },
    {
      category: "unknown table",
      sql: "SELECT * FROM events WHERE event_id GLOBAL IN system.tables",
      expect: "refused",
      message: /system tables/,
    },
    // Table functions
    {
      category: "table function",
      sql: "SELECT * FROM url('http://127.0.0.1:1/x', CSV, 'a String')",
      expect: "refused",
      message: /table function url/,
    },
    {
      category: "table function",
      sql: "SELECT * FROM file('/etc/passwd', LineAsString)",
      expect: "refused",
      message: /table function file/,
    },
    {
      category: "table function",
      sql: "SELECT * FROM s3('http://127.0.0.1:1/b/x.csv')",
      expect: "refused",
      message: /table function s3/,
    },
    {
      category: "table function",
      sql: `SELECT * FROM remote('127.0.0.1', ${db}.events)`,
      expect: "refused",
      message: /table function remote/,
    },
    {
      category: "table function",
      sql: `SELECT * FROM remoteSecure('127.0.0.1', ${db}, events)`,
      expect: "refused",
      message: /table function remoteSecure/,
    },
    {
      category: "table function",
      sql: `SELECT * FROM cluster('default', ${db}.events)`,
      expect: "refused",
      message: /table function cluster/,
    },
    {
      category: "table function",
      sql: `SELECT * FROM merge('${db}', '^events$')`,
      expect: "refused",
      message: /table function merge/,
    },
    {
      category: "table function",
      sql: "SELECT * FROM input('a String')",
      expect: "refused",
      message: /table function input/,
    },
    {
      category: "table function",
      sql: "SELECT * FROM executable('cat /etc/passwd', TSV, 'a String')",
      expect: "refused",
      message: /table function executable/,
    },
    {
      category: "table function",
      sql: "SELECT * FROM jdbc('x', 'y', 'z')",
      expect: "refused",
      message: /table function jdbc/,
    },
    {
      category: "table function",
      sql: "SELECT * FROM mysql('127.0.0.1:3306', 'test', 't', 'root', '')",
      expect: "refused",
      message: /table function mysql/,
    },
    {
      category: "table function",
      sql: "SELECT * FROM postgresql('127.0.0.1:5432', 'postgres', 'pixels', 'postgres', 'postgres')",
      expect: "refused",
      message: /table function postgresql/,
    },
    {
      category: "table function",
      sql: `SELECT * FROM view(SELECT * FROM ${db}.events)`,
      expect: "refused",
      message: /table function view/,
    },
    {
      category: "table function",
      sql: "SELECT * FROM numbers(10)",
      expect: "refused",
      message: /table function numbers/,
    },
    {
      category: "table function",
      sql: "SELECT * FROM events AS e JOIN generateRandom('a String') AS g ON 1",
      expect: "refused",
      message: /table function generateRandom/,
    },
    {
      category: "table function",
      sql: "SELECT * FROM clusterAllReplicas('default', system.one)",
      expect: "refused",
      message: /table function clusterAllReplicas/,
    },
    // Dictionaries and functions reading outside the query
    {
      category: "dictionary",
      sql: "SELECT dictGet('d', 'a', toUInt64(1))",
      expect: "refused",
      message: /dictionaries/,
    },
    {
      category: "dictionary",
      sql: "SELECT DICTGETSTRING('d', 'a', toUInt64(1))",
      expect: "refused",
      message: /dictionaries/,
    },
    {
      category: "dictionary",
      sql: "SELECT * FROM dictionary('d')",
      expect: "refused",
      message: /table function dictionary/,
    },
    { category: "dictionary", sql: "SELECT joinGet('t', 'a', 1)", expect: "refused", message: /joinGet/ },
    {
      category: "function",
      sql: "SELECT file('/etc/hostname')",
      expect: "refused",
      message: /function file/,
    },
    {
      category: "function",
      sql: "SELECT getSetting('additional_table_filters')",
      expect: "refused",
      message: /getSetting/,
    },
    { category: "function", sql: "SELECT currentDatabase()", expect: "refused", message: /currentDatabase/ },
    { category: "function", sql: "SELECT hostName()", expect: "refused", message: /hostName/ },
    // SETTINGS, FORMAT, INTO OUTFILE
    {
      category: "settings",
      sql: "SELECT * FROM events SETTINGS additional_table_filters = {}",
      expect: "refused",
      message: /SETTINGS/,
    },
    {
      category: "settings",
      sql: "SELECT * FROM (SELECT * FROM events SETTINGS readonly = 0)",
      expect: "refused",
      message: /SETTINGS/,
    },
    {
      category: "settings",
      sql: "SELECT * FROM events LIMIT 1 SETTINGS max_execution_time = 0",
      expect: "refused",
      message: /SETTINGS/,
    },
    { category: "format", sql: "SELECT * FROM events FORMAT JSON", expect: "refused", message: /FORMAT/ },
    {
      category: "outfile",
      sql: "SELECT * FROM events INTO OUTFILE '/tmp/pixelhouse-escape.csv'",
      expect: "refused",
      message: /INTO OUTFILE/,
    },
    // Statements that are not one SELECT
    {
      category: "multiple statements",
      sql: `SELECT 1; SELECT * FROM ${db}.events`,
      expect: "refused",
      message: /exactly one statement/,
    },
    {
      category: "multiple statements",
      sql: `SELECT 1; DROP TABLE ${db}.events`,
      expect: "refused",
      message: /exactly one statement/,
    },
    { category: "multiple statements", sql: "SELECT 1;\n;\nSELECT 2", expect: "rejected" },
    {
      category: "not a select",
      sql: "INSERT INTO events (event_id) SELECT event_id FROM events",
      expect: "refused",
      message: /only SELECT/,
    },
    { category: "not a select", sql: "DROP TABLE events", expect: "refused", message: /only SELECT/ },
    {
      category: "not a select",
      sql: "ALTER TABLE orders DELETE WHERE 1",
      expect: "refused",
      message: /only SELECT/,
    },
    { category: "not a select", sql: "CREATE TABLE x AS events", expect: "refused", message: /only SELECT/ },
    { category: "not a select", sql: "SET readonly = 0", expect: "refused", message: /only SELECT/ },
    { category: "not a select", sql: "SHOW TABLES", expect: "refused", message: /only SELECT/ },
    {
      category: "not a select",
      sql: `DESCRIBE TABLE ${db}.events`,
      expect: "refused",
      message: /only SELECT/,
    },
    {
      category: "not a select",
      sql: `EXPLAIN SELECT * FROM ${db}.events`,
      expect: "refused",
      message: /only SELECT/,
    },
    { category: "not a select", sql: "SELECT * FROM (EXPLAIN SELECT 1)", expect: "rejected" },
    // Comments, case, whitespace, quoting, lookalikes
    {
      category: "comments",
      sql: "SELECT * FROM /* events */ touchpoints",
      expect: "refused",
      message: /unknown table touchpoints/,
    },
    {
      category: "comments",
      sql: "SELECT event_id FROM events -- harmless\n UNION ALL SELECT event_id FROM touchpoints",
      expect: "refused",
      message: /touchpoints/,
    },
    {
      category: "comments",
      sql: "SELECT event_id FROM events /* ; DROP TABLE events; */",
      expect: "confined",
    },
    { category: "case", sql: "select * from SYSTEM.TABLES", expect: "refused", message: /system tables/ },
    { category: "case", sql: "SeLeCt event_id FrOm EVENTS", expect: "refused", message: /case-sensitive/ },
    { category: "case", sql: "sElEcT event_id fRoM events", expect: "confined" },
    {
      category: "whitespace",
      sql: "SELECT * FROM system . tables",
      expect: "refused",
      message: /system tables/,
    },
    {
      category: "whitespace",
      sql: `SELECT\t*\nFROM\r\n${db}\n.\n\`events\``,
      expect: "refused",
      message: /database-qualified/,
    },
    {
      category: "quoted",
      sql: "SELECT * FROM `system`.`tables`",
      expect: "refused",
      message: /system tables/,
    },
    {
      category: "quoted",
      sql: 'SELECT * FROM "touchpoints"',
      expect: "refused",
      message: /unknown table touchpoints/,
    },
    { category: "quoted", sql: "SELECT `event_id` FROM `events`", expect: "confined" },
    {
      category: "quoted",
      sql: "SELECT `a\n      TableIdentifier events` FROM touchpoints",
      expect: "refused",
      message: /control characters/,
    },
    { category: "lookalike", sql: "SELECT * FROM `ｅvents`", expect: "refused", message: /unknown table/ },
    { category: "lookalike", sql: "SELECT * FROM `еvents`", expect: "refused", message: /unknown table/ },
    {
      category: "lookalike",
      sql: "SELECT * FROM `events\u200b`",
      expect: "refused",
      message: /unknown table/,
    },
    // Aliases, CTEs that shadow names, joins, subqueries, UNIONs: run, but only over A's rows
    { category: "alias", sql: "SELECT event_id FROM events AS orders", expect: "confined" },
    {
      category: "alias",
      sql: "SELECT o.order_id FROM orders AS events JOIN orders AS o USING (order_id)",
      expect: "confined",
    },
    {
      category: "cte shadowing",
      sql: "WITH events AS (SELECT * FROM events) SELECT event_id FROM events",
      expect: "confined",
    },
    {
      category: "cte shadowing",
      sql: "WITH RECURSIVE events AS (SELECT * FROM events) SELECT event_id FROM events",
      expect: "confined",
    },
    {
      category: "cte shadowing",
      sql: "WITH orders AS (SELECT event_id AS order_id FROM events) SELECT order_id FROM orders",
      expect: "confined",
    },
    {
      category: "cte shadowing",
      sql: `WITH events AS (SELECT * FROM ${db}.events) SELECT event_id FROM events`,
      expect: "refused",
      message: /database-qualified/,
    },
    {
      category: "cte scope",
      sql: "SELECT * FROM (WITH touchpoints AS (SELECT 1 AS x) SELECT * FROM touchpoints) AS a, touchpoints AS b",
      expect: "rejected",
    },
    {
      category: "join",
      sql: "SELECT a.event_id, b.order_id FROM events a CROSS JOIN orders b",
      expect: "confined",
    },
    {
      category: "join",
      sql: "SELECT l.sku, o.order_id FROM order_lines l LEFT JOIN orders o USING (order_id)",
      expect: "confined",
    },
    {
      category: "subquery",
      sql: "SELECT order_id FROM orders WHERE order_id IN (SELECT order_id FROM refunds)",
      expect: "confined",
    },
    {
      category: "subquery",
      sql: "SELECT (SELECT groupArray(event_id) FROM events) AS ids",
      expect: "confined",
    },
    {
      category: "union",
      sql:
        "SELECT event_id AS m FROM events UNION ALL SELECT order_id FROM orders UNION ALL SELECT sku FROM order_lines " +
        "UNION ALL SELECT refund_id FROM refunds UNION ALL SELECT order_id FROM order_costs UNION ALL SELECT entity_id FROM ad_entities " +
        "UNION ALL SELECT entity_id FROM ad_metrics UNION ALL SELECT alias_value FROM identities",
      expect: "confined",
    },
    {
      category: "union",
      sql: "SELECT event_id FROM events INTERSECT SELECT event_id FROM events EXCEPT SELECT 'x'",
      expect: "confined",
    },
    { category: "filter", sql: "SELECT event_id FROM events WHERE 1 = 1 OR 1 = 1", expect: "confined" },
    { category: "filter", sql: "SELECT * FROM events WHERE pixel_id != ''", expect: "rejected" },
    // Engine errors that quote a value: a conversion evaluated on another pixel's row before the pixel
    // filter would print that row's marker ("Cannot parse 'MARKB_…'"). The markers never parse as
    // numbers, dates or UUIDs; order_id, event_id and alias_value are sort-key columns.
    {
      category: "error message",
      sql: "SELECT count() FROM orders WHERE toUInt64(order_id) = 1",
      expect: "rejected",
    },
    {
      category: "error message",
      sql: "SELECT count() FROM identities WHERE toDate(alias_value) > today()",
      expect: "rejected",
    },
    {
      category: "error message",
      sql: "SELECT throwIf(order_id != '', order_id) FROM orders",
      expect: "rejected",
    },
    {
      category: "error message",
      sql: "SELECT count() FROM events WHERE toInt32(event_id) > 0",
      expect: "rejected",
    },
    { category: "error message", sql: "SELECT sum(toUInt64(order_id)) FROM orders", expect: "rejected" },
    {
      category: "error message",
      sql: `SELECT count() FROM orders WHERE order_id != 'MARK${me}_orders' AND toUInt64(order_id) = 1`,
      expect: "quiet",
    },
    {
      category: "error message",
      sql: `SELECT count() FROM orders WHERE toUInt64(order_id) = 1 AND order_id != 'MARK${me}_orders'`,
      // Which operand runs first is the engine's choice: a 400 (the caller's own marker) or a 200.
      expect: "any",
    },
    {
      category: "error message",
      sql: `SELECT count() FROM identities WHERE alias_value != 'MARK${me}_identities' AND toDate(alias_value) > today()`,
      expect: "quiet",
    },
    {
      category: "error message",
      sql: `SELECT count() FROM events WHERE name = 'purchase' AND event_id != 'MARK${me}_events' AND toInt32(event_id) > 0`,
      expect: "quiet",
    },
    {
      category: "error message",
      sql: `SELECT count() FROM events WHERE event_id NOT LIKE '${me}%' AND event_id NOT LIKE 'MARK${me}%' AND accurateCast(event_id, 'Int32') > 0`,
      expect: "quiet",
    },
    {
      category: "error message",
      sql: `SELECT count() FROM refunds WHERE refund_id != 'MARK${me}_refunds' AND CAST(refund_id AS UInt64) = 1`,
      expect: "quiet",
    },
    {
      category: "error message",
      sql: `SELECT count() FROM order_lines WHERE sku != 'MARK${me}_order_lines' AND toUInt64(sku) = 1`,
      expect: "quiet",
    },
    {
      category: "error message",
      sql: `SELECT count() FROM order_costs WHERE order_id != 'MARK${me}_order_costs' AND toUInt64(order_id) = 1`,
      expect: "quiet",
    },
    {
      category: "error message",
      sql: `SELECT count() FROM ad_entities WHERE entity_id != 'MARK${me}_ad_entities' AND toUUID(entity_id) = toUUID('00000000-0000-0000-0000-000000000000')`,
      expect: "quiet",
    },
    {
      category: "error message",
      sql: `SELECT count() FROM ad_metrics WHERE entity_id != 'MARK${me}_ad_metrics' AND toDate(entity_id) = today()`,
      expect: "quiet",
    },
    {
      category: "error message",
      sql: "SELECT count() FROM orders AS o JOIN events AS e ON toUInt64(o.order_id) = toUInt64(e.event_id)",
      expect: "rejected",
    },
    {
      category: "error message",
      sql: `SELECT count() FROM events WHERE event_id IN (SELECT order_id FROM orders WHERE order_id != 'MARK${me}_orders' AND toUInt64(order_id) = 1)`,
      expect: "quiet",
    },
    {
      category: "error message",
      sql: `WITH o AS (SELECT order_id FROM orders WHERE order_id != 'MARK${me}_orders') SELECT count() FROM o WHERE toUInt64(order_id) = 1`,
      expect: "quiet",
    },
    {
      category: "error message",
      sql: `SELECT count() FROM identities WHERE alias_type = 'email' AND alias_value != 'MARK${me}_identities' AND toUInt64(alias_value) = 1`,
      expect: "quiet",
    },
    {
      category: "error message",
      sql: `SELECT count() FROM orders WHERE order_id != 'MARK${me}_orders' AND throwIf(order_id != '') = 0`,
      expect: "quiet",
    },
    {
      category: "error message",
      sql: "SELECT count() FROM orders PREWHERE toUInt64(order_id) = 1",
      expect: "rejected",
    },
    {
      category: "error message",
      sql: `SELECT count() FROM orders PREWHERE order_id != 'MARK${me}_orders' WHERE toUInt64(order_id) = 1`,
      expect: "any",
    },
    {
      category: "parameters",
      sql: "SELECT {pxh_pixel:String}",
      expect: "refused",
      message: /query parameters/,
    },
    {
      category: "parameters",
      sql: "SELECT * FROM {t:Identifier}",
      expect: "refused",
      message: /query parameters/,
    },
    // Very long and deeply nested queries
    { category: "nesting", sql: nested(60), expect: "confined" },
    { category: "nesting", sql: nested(3000), expect: "rejected" },
    { category: "nesting", sql: `SELECT ${"(".repeat(5000)}1${")".repeat(5000)}`, expect: "rejected" },
    {
      category: "long",
      sql: Array.from({ length: 300 }, () => "SELECT event_id FROM events").join(" UNION ALL "),
      expect: "confined",
    },
    {
      category: "long",
      sql: `SELECT event_id FROM events WHERE event_id != '${"x".repeat(90_000)}'`,
      expect: "confined",
    },
    { category: "long", sql: `SELECT 1 -- ${"y".repeat(120_000)}`, expect: "rejected" },
    { category: "nul", sql: "SELECT event_id FROM events\u0000; DROP TABLE events", expect: "rejected" },
  ];
  return e;
}
