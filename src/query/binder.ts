import { formatDateTime, type Params, type ParamValue } from "../stores/warehouse/port.js";

/** ClickHouse types a bound value may take; identifiers never travel this way. */
export type ParamType =
  | "String"
  | "Int64"
  | "UInt32"
  | "Float64"
  | "Date"
  | "DateTime64(3, 'UTC')"
  | "Array(String)"
  | "Array(Float64)"
  | "Array(DateTime64(3, 'UTC'))";

/**
 * The one place values become bound parameters: `bind` returns a `{pN:Type}` placeholder and keeps
 * the value. Emitted SQL holds no literal taken from a request.
 */
export class Binder {
  private readonly values: Record<string, ParamValue> = {};
  private n = 0;

  bind(value: ParamValue, type: ParamType): string {
    const name = `p${this.n++}`;
    // Instants are kept as the engine's text (what goes on the wire), so the parameters `?explain=true`
    // returns run as they are: a Date became ISO text ending in Z, which ClickHouse refuses.
    this.values[name] = value instanceof Date ? formatDateTime(value) : value;
    return `{${name}:${type}}`;
  }

  /**
   * A value under a fixed name the service can find and set again when it runs the statement (the
   * first day of rates: docs/query.md, "Currency"). Names never take the `pN` form `bind` hands out.
   */
  bindNamed(name: string, value: ParamValue, type: ParamType): string {
    if (/^p\d+$/.test(name)) throw new Error(`bindNamed: ${name} is a positional name`);
    this.values[name] = value;
    return `{${name}:${type}}`;
  }

  get params(): Params {
    return { ...this.values };
  }
}
