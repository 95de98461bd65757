import { z } from "zod";
import { ValidationError } from "../errors.js";
import { ATTRIBUTION_MODELS } from "../query/attribution-models.js";
import { FAMILIES, FIELD_BY_NAME } from "../query/filters/fields.js";
import { resolveFilter } from "../query/filters/resolve.js";
import { type Filter, filterSchema } from "../query/filters/schema.js";
import { MEASURE_BY_KEY } from "../query/measures.js";
import { attributionHalfLifeSchema, attributionWindowSchema, currencySchema } from "../query/schemas.js";
import { GRANULARITIES, inQueryRange, QUERY_DATE_RANGE_MESSAGE } from "../query/time.js";
import { GRID_COLUMNS, MAX_ROWS, MAX_Y } from "./layout.js";

/**
 * Dashboard views (docs/dashboards.md). The public view format leaves the value
 * sets of chartType, layoutMode, sectionType, density, headerStyle and theme open; these closed
 * lists are ours, and the first of each list (the interface's example where it gives one) is the
 * default a response carries when the request left the field out.
 */
export const CHART_TYPES = ["bar", "line", "area", "sparkline", "kpi", "table", "pie"] as const;
export const LAYOUT_MODES = ["auto", "manual"] as const;
export const SECTION_TYPES = ["default", "summary"] as const;
export const DENSITIES = ["compact", "comfortable", "spacious"] as const;
export const HEADER_STYLES = ["default", "minimal", "hidden"] as const;
export const THEMES = ["default", "light", "dark"] as const;

export const DEFAULT_CHART_TYPE = CHART_TYPES[0];
export const DEFAULT_LAYOUT_MODE = LAYOUT_MODES[0];
export const DEFAULT_SECTION_TYPE = SECTION_TYPES[0];

/** Limits that keep one view renderable; a 1 MiB body is the outer bound. */
export const MAX_WIDGETS = 100;
export const MAX_SECTIONS = 50;
export const MAX_MEASURES = 20;
export const MAX_DIMENSIONS = 3;
export const MAX_FILTERS = 50;
export const MAX_NAME = 200;

const int = (min: number, max: number) => z.number().int().min(min).max(max);
/** The column is a Postgres integer. */
export const orderSchema = int(-2_147_483_648, 2_147_483_647).meta({
  description: "Position in the list (ascending); default: after the pixel's last view",
});
export const nameSchema = z
  .string()
  // An empty name is one error, not also "blank".
  .min(1, { abort: true })
  .max(MAX_NAME)
  .regex(/\S/, "must not be blank")
  .meta({ description: `1..${MAX_NAME} characters, not only whitespace` });
const widgetIdSchema = z.string().min(1).max(100);

const filterList = z.array(filterSchema).max(MAX_FILTERS);

export const sectionSettingsSchema = z.strictObject({
  density: z.enum(DENSITIES),
  pacing: z.boolean(),
  theme: z.enum(THEMES),
  backgroundColor: z
    .string()
    .regex(
      /^(#[0-9A-Fa-f]{3}|#[0-9A-Fa-f]{6}|#[0-9A-Fa-f]{8})?$/,
      "must be #RGB, #RRGGBB, #RRGGBBAA or empty",
    )
    .meta({ description: "CSS hex colour; empty = the theme's background" }),
  headerStyle: z.enum(HEADER_STYLES),
  filters: filterSchema,
});
export type SectionSettings = z.infer<typeof sectionSettingsSchema>;

/** What a response carries for a setting the request left out (docs/dashboards.md). */
export const DEFAULT_SETTINGS: SectionSettings = {
  density: "compact",
  pacing: false,
  theme: "default",
  backgroundColor: "",
  headerStyle: "default",
  filters: { and: [] },
};

/** A layout: integers in grid cells; constraints left out take the widest values. */
const layoutSchema = z
  .strictObject({
    x: int(0, GRID_COLUMNS - 1),
    y: int(0, MAX_Y),
    rows: int(1, MAX_ROWS),
    columns: int(1, GRID_COLUMNS),
    minColumns: int(1, GRID_COLUMNS).default(1),
    maxColumns: int(1, GRID_COLUMNS).default(GRID_COLUMNS),
    minRows: int(1, MAX_ROWS).default(1),
    maxRows: int(1, MAX_ROWS).default(MAX_ROWS),
    static: z.boolean().default(false),
  })
  .superRefine((l, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (l.x + l.columns > GRID_COLUMNS)
      issue("columns", `x + columns must be at most ${GRID_COLUMNS} (the grid's width)`);
    if (l.minColumns > l.maxColumns) issue("minColumns", "must be at most maxColumns");
    else if (l.columns < l.minColumns || l.columns > l.maxColumns)
      issue("columns", "must be between minColumns and maxColumns");
    if (l.minRows > l.maxRows) issue("minRows", "must be at most maxRows");
    else if (l.rows < l.minRows || l.rows > l.maxRows) issue("rows", "must be between minRows and maxRows");
  })
  .meta({ description: `Grid cells of a ${GRID_COLUMNS}-column grid: x + columns ≤ ${GRID_COLUMNS}` });

const widgetSchema = z.strictObject({
  id: widgetIdSchema.meta({ description: "Unique within the view" }),
  title: z.string().max(MAX_NAME),
  chartType: z.enum(CHART_TYPES).default(DEFAULT_CHART_TYPE),
  layout: layoutSchema,
  dataConfig: z.strictObject({
    measures: z
      .array(z.string().min(1).max(200))
      .min(1)
      .max(MAX_MEASURES)
      .meta({ description: "Measure keys of GET /db-mgmt/api/measures" }),
    dimensions: z
      .array(z.string().min(1).max(200))
      .max(MAX_DIMENSIONS)
      .default([])
      .meta({ description: "Field keys of GET /db-mgmt/api/filters" }),
    filters: filterList.default([]).meta({ description: "Canonical filters, all of which apply" }),
  }),
  sourceWidgetId: widgetIdSchema.optional().meta({ description: "The widget this one was copied from" }),
});

// A view's range is queried as it is: it takes the days a query takes, so a saved view never fails later.
const viewDay = z.iso.date().refine(inQueryRange, QUERY_DATE_RANGE_MESSAGE);
const dateRangeSchema = z
  .strictObject({ start: viewDay, end: viewDay })
  .refine((r) => r.start <= r.end, { path: ["end"], message: "must not be before start" });

/**
 * One configuration shape, two forms: the request form takes settings as subsets and may leave
 * `ordinal` out; the response form has every field. Both forms share every other piece.
 */
function configurationShape<S extends z.ZodType, O extends z.ZodType>(settings: S, ordinal: O) {
  const section = z.strictObject({
    id: z.uuid(),
    title: z.string().max(MAX_NAME),
    ordinal,
    collapsed: z.boolean().default(false),
    hidden: z.boolean().default(false),
    layoutMode: z.enum(LAYOUT_MODES).default(DEFAULT_LAYOUT_MODE),
    widgets: z.array(widgetSchema).max(MAX_WIDGETS).default([]),
    sectionType: z.enum(SECTION_TYPES).default(DEFAULT_SECTION_TYPE),
    settings,
  });
  return z.strictObject({
    attributionModel: z.enum(ATTRIBUTION_MODELS),
    attributionWindow: attributionWindowSchema.meta({
      description: "Days: 1, 7, 14, 30, 60, 90 or -1 (unlimited)",
    }),
    attributionHalfLifeDays: attributionHalfLifeSchema.optional(),
    granularity: z.enum(GRANULARITIES),
    dateRange: dateRangeSchema,
    currency: currencySchema.optional().meta({
      description:
        "Reporting currency the view opens in (ISO 4217); absent: the page's last choice, else USD",
    }),
    grid: z.strictObject({ maxWidth: int(320, 10_000).meta({ description: "Pixels" }) }),
    widgets: z.array(widgetSchema).max(MAX_WIDGETS),
    filters: filterSchema,
    sections: z.array(section).max(MAX_SECTIONS),
    defaultSettings: settings,
  });
}

/** The request form, structure only (also how a stored configuration is read back). */
export const configurationInputSchema = configurationShape(
  sectionSettingsSchema.partial().default({}),
  int(0, 10_000).optional(),
);
type ParsedConfiguration = z.output<typeof configurationInputSchema>;

/** The response form: every field present. */
export const configurationSchema = configurationShape(sectionSettingsSchema, int(0, 10_000));
export type Configuration = z.output<typeof configurationSchema>;
export type Widget = Configuration["widgets"][number];

/**
 * Fills what the request left to defaults: the view's defaultSettings over DEFAULT_SETTINGS, each
 * section's settings over the view's defaultSettings (a key given replaces, filters included), and
 * a missing ordinal with the section's index. Keys come out in the order docs/dashboards.md lists them.
 */
export function resolveConfiguration(c: ParsedConfiguration): Configuration {
  const defaults: SectionSettings = { ...DEFAULT_SETTINGS, ...c.defaultSettings };
  return {
    attributionModel: c.attributionModel,
    attributionWindow: c.attributionWindow,
    ...(c.attributionHalfLifeDays !== undefined
      ? { attributionHalfLifeDays: c.attributionHalfLifeDays }
      : {}),
    granularity: c.granularity,
    dateRange: c.dateRange,
    ...(c.currency ? { currency: c.currency } : {}),
    grid: c.grid,
    widgets: c.widgets,
    filters: c.filters,
    sections: c.sections.map((s, i) => ({
      id: s.id,
      title: s.title,
      ordinal: s.ordinal ?? i,
      collapsed: s.collapsed,
      hidden: s.hidden,
      layoutMode: s.layoutMode,
      widgets: s.widgets,
      sectionType: s.sectionType,
      settings: { ...defaults, ...s.settings },
    })),
    defaultSettings: defaults,
  };
}

type Path = (string | number)[];
type Issue = { path: Path; message: string };

/**
 * A canonical filter checked the way the query engine will read it — known field, operator valid
 * for its type, value of the right kind — by the query engine's own resolve step, which emits no
 * SQL. Fields of every family are accepted: which family fits depends on the measures the widget queries.
 */
function filterIssues(filter: Filter, path: Path): Issue[] {
  try {
    resolveFilter(filter, { families: FAMILIES, timezone: "UTC", path });
    return [];
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return err.issues.map((i) => ({ path: i.path, message: i.message }));
  }
}

/**
 * What structure cannot say: measure keys known to the catalog, dimensions known to the field list,
 * filters the engine accepts, widget ids unique across the view, section ids unique. Run on
 * requests only, so a view stored before a catalog change still reads back.
 */
export function configurationIssues(c: ParsedConfiguration): Issue[] {
  const out: Issue[] = [...filterIssues(c.filters, ["filters"])];
  const widgetIds = new Map<string, string>();
  const checkWidgets = (widgets: ParsedConfiguration["widgets"], base: Path) => {
    widgets.forEach((w, i) => {
      const at = [...base, i];
      const seen = widgetIds.get(w.id);
      if (seen !== undefined)
        out.push({ path: [...at, "id"], message: `duplicate widget id "${w.id}" (also at ${seen})` });
      else widgetIds.set(w.id, at.join("."));
      w.dataConfig.measures.forEach((key, j) => {
        if (!MEASURE_BY_KEY.has(key))
          out.push({
            path: [...at, "dataConfig", "measures", j],
            message: `unknown measure key "${key}" (GET /db-mgmt/api/measures lists them)`,
          });
      });
      w.dataConfig.dimensions.forEach((d, j) => {
        if (!FIELD_BY_NAME.has(d))
          out.push({
            path: [...at, "dataConfig", "dimensions", j],
            message: `unknown dimension "${d}" (GET /db-mgmt/api/filters lists the fields)`,
          });
      });
      w.dataConfig.filters.forEach((f, j) => {
        out.push(...filterIssues(f, [...at, "dataConfig", "filters", j]));
      });
    });
  };
  checkWidgets(c.widgets, ["widgets"]);
  if (c.defaultSettings.filters)
    out.push(...filterIssues(c.defaultSettings.filters, ["defaultSettings", "filters"]));
  const sectionIds = new Set<string>();
  c.sections.forEach((s, i) => {
    if (sectionIds.has(s.id))
      out.push({ path: ["sections", i, "id"], message: `duplicate section id "${s.id}"` });
    sectionIds.add(s.id);
    checkWidgets(s.widgets, ["sections", i, "widgets"]);
    if (s.settings.filters)
      out.push(...filterIssues(s.settings.filters, ["sections", i, "settings", "filters"]));
  });
  return out;
}

/** The request form with every check: what create and update accept. */
const checkedConfigurationSchema = configurationInputSchema.superRefine((c, ctx) => {
  for (const issue of configurationIssues(c)) ctx.addIssue({ code: "custom", ...issue });
});

export const createViewBody = z.strictObject({
  name: nameSchema,
  configuration: checkedConfigurationSchema,
  order: orderSchema.optional(),
});
export type CreateViewInput = z.output<typeof createViewBody>;

export const updateViewBody = z
  .strictObject({
    name: nameSchema.optional(),
    configuration: checkedConfigurationSchema
      .optional()
      .meta({ description: "Replaces the whole configuration (validated as on create)" }),
    order: orderSchema.optional(),
  })
  .refine((b) => b.name !== undefined || b.configuration !== undefined || b.order !== undefined, {
    message: "must change at least one of name, configuration, order",
  });
export type UpdateViewInput = z.output<typeof updateViewBody>;

export const copyViewBody = z
  .strictObject({
    name: nameSchema.optional().meta({ description: 'Default: "<name> (copy)"' }),
    order: orderSchema.optional(),
  })
  .optional();
export type CopyViewInput = NonNullable<z.output<typeof copyViewBody>>;

const measureKeySchema = z
  .string()
  .min(1)
  .superRefine((key, ctx) => {
    if (!MEASURE_BY_KEY.has(key))
      ctx.addIssue({
        code: "custom",
        message: `unknown measure key "${key}" (GET /db-mgmt/api/measures lists them)`,
      });
  })
  .meta({ description: "A measure key of GET /db-mgmt/api/measures" });

export const presetViewBody = z.strictObject({
  name: nameSchema,
  widgets: z
    .array(
      z.strictObject({
        measure: measureKeySchema,
        title: z.string().max(MAX_NAME).optional().meta({ description: "Default: the measure's title" }),
      }),
    )
    .min(1)
    .max(MAX_WIDGETS)
    .meta({ description: "One sparkline widget each, laid out left to right in reading order" }),
  order: orderSchema.optional(),
});
export type PresetViewInput = z.output<typeof presetViewBody>;

export const viewParams = z.strictObject({ dashboardViewId: z.string() });

export const dashboardViewSchema = z.object({
  id: z.string(),
  pixelId: z.string(),
  type: z.literal("view"),
  name: z.string(),
  configuration: configurationSchema,
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  createdBy: z.string().meta({ description: "Empty for views written with an API key" }),
  updatedBy: z.string().meta({ description: "Empty for views written with an API key" }),
  order: z.number().int(),
});
export type DashboardView = z.infer<typeof dashboardViewSchema>;
