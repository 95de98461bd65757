import { z } from "zod";

export const OPERATORS = [
  "equals",
  "not_equals",
  "in",
  "not_in",
  "contains",
  "not_contains",
  "starts_with",
  "ends_with",
  "gt",
  "gte",
  "lt",
  "lte",
  "between",
  "is_set",
  "is_not_set",
] as const;
export type Operator = (typeof OPERATORS)[number];

export type FilterValue = string | number | boolean | (string | number)[] | null;

/** The canonical filter (docs/query.md, "Canonical filter"): plain data, nested to any depth. */
export type Filter =
  | { and: Filter[] }
  | { or: Filter[] }
  | { not: Filter }
  | { field: string; op: Operator; value?: FilterValue };

const scalar = z.union([z.string(), z.number(), z.boolean()]);
const condition = z.strictObject({
  field: z.string().min(1),
  // Operator names are checked against the field's type when compiling, so the error names both.
  op: z.string().min(1),
  value: z.union([scalar, z.array(z.union([z.string(), z.number()])).max(10_000), z.null()]).optional(),
});

export const filterSchema: z.ZodType<Filter> = z
  .lazy(() =>
    z.union([
      z.strictObject({ and: z.array(filterSchema).max(500) }),
      z.strictObject({ or: z.array(filterSchema).max(500) }),
      z.strictObject({ not: filterSchema }),
      condition as z.ZodType<{ field: string; op: Operator; value?: FilterValue }>,
    ]),
  )
  .meta({
    id: "Filter",
    description:
      'Canonical filter: {"and":[F…]} | {"or":[F…]} | {"not":F} | {"field","op","value"}. Fields and their operators: GET /db-mgmt/api/filters.',
  });
