import type { Binder } from "../binder.js";
import { printFilter } from "./print.js";
import { type ResolveContext, resolveFilter } from "./resolve.js";
import type { Filter } from "./schema.js";

export interface FilterContext extends ResolveContext {
  binder: Binder;
}

/** Every field a filter names (for deciding which sources it must reach). */
export function filterFields(filter: Filter | undefined): string[] {
  if (!filter) return [];
  if ("and" in filter) return filter.and.flatMap(filterFields);
  if ("or" in filter) return filter.or.flatMap(filterFields);
  if ("not" in filter) return filterFields(filter.not);
  return [filter.field];
}

/** Resolve then print (`resolve.ts`, `print.ts`): a canonical filter as a SQL boolean, or a 400. */
export function compileFilter(filter: Filter | undefined, ctx: FilterContext): string {
  return printFilter(resolveFilter(filter, ctx), ctx.binder);
}
