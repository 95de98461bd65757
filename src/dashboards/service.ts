import { randomUUID } from "node:crypto";
import { ulid } from "ulid";
import type { Principal } from "../keys/service.js";
import { MEASURE_BY_KEY } from "../query/measures.js";
import { addDays, dayIn } from "../shared/days.js";
import { ownedOrNotFound } from "../shared/ownership.js";
import type { SqlExecutor, SqlStore } from "../stores/sql/port.js";
import { sparklineLayout } from "./layout.js";
import {
  type Configuration,
  type CopyViewInput,
  type CreateViewInput,
  configurationInputSchema,
  type DashboardView,
  DEFAULT_SETTINGS,
  MAX_NAME,
  type PresetViewInput,
  resolveConfiguration,
  type UpdateViewInput,
  type Widget,
} from "./schemas.js";

export const DASHBOARD_VIEW_NOT_FOUND = "Dashboard view not found";

/** Days a preset view covers, ending today in the account's timezone. */
export const PRESET_DAYS = 30;
/** Width in pixels a preset view is laid out for. */
export const PRESET_MAX_WIDTH = 1440;

interface ViewRow {
  id: string;
  pixel_id: string;
  name: string;
  configuration: unknown;
  order: number;
  created_by: string;
  updated_by: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, pixel_id, name, configuration, "order", created_by, updated_by, created_at, updated_at`;

/**
 * A stored configuration is read back through the request form's structure (not its catalog checks,
 * so a view outlives a measure leaving the catalog) to get the interface's key order — jsonb keeps
 * its own — and any default added since the row was written.
 */
const toView = (r: ViewRow): DashboardView => ({
  id: r.id,
  pixelId: r.pixel_id,
  type: "view",
  name: r.name,
  configuration: resolveConfiguration(configurationInputSchema.parse(r.configuration)),
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
  createdBy: r.created_by,
  updatedBy: r.updated_by,
  order: r.order,
});

/** `<name> (copy)`, shortening the source name (by whole code points) so the result fits MAX_NAME. */
export function copyName(name: string): string {
  const suffix = " (copy)";
  const chars = Array.from(name);
  while (chars.join("").length + suffix.length > MAX_NAME) chars.pop();
  return chars.join("").trimEnd() + suffix;
}

/**
 * Dashboard views of a pixel (docs/dashboards.md). Every read and write is confined to the key's
 * pixel in SQL, and a row that does not come back goes through `ownedOrNotFound`, so another pixel's
 * id answers exactly like a missing one. `author` fills createdBy/updatedBy: empty for API keys.
 * No event is emitted (docs/dashboards.md).
 */
export class DashboardService {
  constructor(
    private readonly sql: SqlStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async list(owner: Principal): Promise<DashboardView[]> {
    const { rows } = await this.sql.query<ViewRow>(
      `SELECT ${COLUMNS} FROM dashboard_views WHERE pixel_id = $1 ORDER BY "order", created_at, id`,
      [owner.pixelId],
    );
    return rows.map(toView);
  }

  async get(owner: Principal, id: string): Promise<DashboardView> {
    const { rows } = await this.sql.query<ViewRow>(
      `SELECT ${COLUMNS} FROM dashboard_views WHERE id = $1 AND pixel_id = $2`,
      [id, owner.pixelId],
    );
    return owned(rows[0], owner);
  }

  create(owner: Principal, input: CreateViewInput, author: string): Promise<DashboardView> {
    return this.insert(this.sql, owner, {
      name: input.name,
      configuration: resolveConfiguration(input.configuration),
      order: input.order,
      author,
    });
  }

  async update(owner: Principal, id: string, patch: UpdateViewInput, author: string): Promise<DashboardView> {
    const { rows } = await this.sql.query<ViewRow>(
      `UPDATE dashboard_views SET
         name = COALESCE($3, name),
         configuration = COALESCE($4::jsonb, configuration),
         "order" = COALESCE($5::integer, "order"),
         updated_by = $6,
         updated_at = now()
       WHERE id = $1 AND pixel_id = $2
       RETURNING ${COLUMNS}`,
      [
        id,
        owner.pixelId,
        patch.name ?? null,
        patch.configuration ? JSON.stringify(resolveConfiguration(patch.configuration)) : null,
        patch.order ?? null,
        author,
      ],
    );
    return owned(rows[0], owner);
  }

  async remove(owner: Principal, id: string): Promise<{ deleted: true; dashboardViewId: string }> {
    const { rows } = await this.sql.query<ViewRow>(
      `DELETE FROM dashboard_views WHERE id = $1 AND pixel_id = $2 RETURNING ${COLUMNS}`,
      [id, owner.pixelId],
    );
    const view = owned(rows[0], owner);
    return { deleted: true, dashboardViewId: view.id };
  }

  /** A new view with the source's configuration (widget ids kept: they are unique per view). */
  copy(owner: Principal, id: string, input: CopyViewInput, author: string): Promise<DashboardView> {
    return this.sql.transaction(async (tx) => {
      const { rows } = await tx.query<ViewRow>(
        `SELECT ${COLUMNS} FROM dashboard_views WHERE id = $1 AND pixel_id = $2`,
        [id, owner.pixelId],
      );
      const source = owned(rows[0], owner);
      return this.insert(tx, owner, {
        name: input.name ?? copyName(source.name),
        configuration: source.configuration,
        order: input.order,
        author,
      });
    });
  }

  /**
   * Sparkline widgets in reading order (layout.ts), with a configuration an analyst would start
   * from: last-click attribution over 30 days, daily points for the sparklines, the last
   * PRESET_DAYS days up to today in the account's timezone, no filters, no sections.
   */
  async fromPreset(owner: Principal, input: PresetViewInput, author: string): Promise<DashboardView> {
    const { rows } = await this.sql.query<{ timezone: string }>(
      "SELECT timezone FROM accounts WHERE id = $1",
      [owner.accountId],
    );
    const today = dayIn(rows[0]?.timezone ?? "UTC", this.now());
    const layouts = sparklineLayout(input.widgets.length);
    const widgets: Widget[] = input.widgets.map((w, i) => ({
      id: randomUUID(),
      title: w.title ?? MEASURE_BY_KEY.get(w.measure)?.title ?? w.measure,
      chartType: "sparkline",
      layout: layouts[i]!,
      dataConfig: { measures: [w.measure], dimensions: [], filters: [] },
    }));
    const configuration: Configuration = {
      attributionModel: "last_click",
      attributionWindow: 30,
      granularity: "day",
      dateRange: { start: addDays(today, -(PRESET_DAYS - 1)), end: today },
      grid: { maxWidth: PRESET_MAX_WIDTH },
      widgets,
      filters: { and: [] },
      sections: [],
      defaultSettings: DEFAULT_SETTINGS,
    };
    return this.insert(this.sql, owner, { name: input.name, configuration, order: input.order, author });
  }

  private async insert(
    exec: SqlExecutor,
    owner: Principal,
    v: { name: string; configuration: Configuration; order: number | undefined; author: string },
  ): Promise<DashboardView> {
    // Without an order the view goes after the pixel's last one (capped at the integer column's maximum).
    const { rows } = await exec.query<ViewRow>(
      `INSERT INTO dashboard_views (id, pixel_id, name, configuration, "order", created_by, updated_by)
       VALUES ($1, $2, $3, $4::jsonb,
         COALESCE($5::integer, (SELECT LEAST(COALESCE(max("order"), -1)::bigint + 1, 2147483647)::integer
                                FROM dashboard_views WHERE pixel_id = $2)),
         $6, $6)
       RETURNING ${COLUMNS}`,
      [ulid(), owner.pixelId, v.name, JSON.stringify(v.configuration), v.order ?? null, v.author],
    );
    return toView(rows[0]!);
  }
}

function owned(row: ViewRow | undefined, owner: Principal): DashboardView {
  return ownedOrNotFound(row ? toView(row) : null, owner, DASHBOARD_VIEW_NOT_FOUND);
}
