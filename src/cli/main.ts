import { Command, InvalidArgumentError, Option } from "commander";
import { loadConfig } from "../config.js";
import { BadRequestError } from "../errors.js";
import { STORABLE_SCOPES } from "../keys/scopes.js";
import { serve } from "../main.js";
import { VERSION } from "../version.js";
import { output, reportCliError, withContext } from "./context.js";
import { registerCostsCommands } from "./costs.js";
import { registerDemoCommand } from "./demo.js";
import { registerDestinationCommands } from "./destinations.js";
import { parseDuration } from "./duration.js";
import { registerEventCommands } from "./events.js";
import { registerImportCommands } from "./import.js";
import { registerStatusCommand } from "./status.js";

const program = new Command()
  .name("pixelhouse")
  .description("pixelhouse: analytics for e-commerce tracking pixels")
  .version(VERSION)
  .showHelpAfterError()
  .configureOutput({ outputError: (s, write) => write(`pixelhouse: ${s.replace(/^error: /, "")}`) });

const json = () => new Option("--json", "print machine-readable JSON");

program
  .command("serve")
  .description("start the HTTP service (what `npm start` runs); embedded stores unless URLs are configured")
  .addOption(new Option("--json", "print the ready line (url, stores, demo key) as one JSON document"))
  .action(async (opts: { json?: boolean }) => {
    await serve(loadConfig(), { json: opts.json === true });
  });

program
  .command("migrate")
  .description("apply pending Postgres and ClickHouse migrations (also done at every start)")
  .addOption(json())
  .action(async (opts: { json?: boolean }) => {
    // withContext applies the migrations; report what is recorded afterwards.
    await withContext("pixelhouse migrate", async ({ stores }) => {
      const { rows } = await stores.sql.query<{ version: number; name: string }>(
        "SELECT version, name FROM schema_migrations ORDER BY version",
      );
      const wh = await stores.warehouse.query<{ version: number; name: string }>(
        "SELECT version, name FROM schema_migrations FINAL ORDER BY version",
      );
      const fmt = (r: { version: number; name: string }) => `${String(r.version).padStart(3, "0")}_${r.name}`;
      output(opts.json, { postgres: rows.map(fmt), clickhouse: wh.map(fmt) }, [
        `postgres (${stores.sql.kind}): ${rows.map(fmt).join(", ")}`,
        `clickhouse (${stores.warehouse.kind}): ${wh.map(fmt).join(", ")}`,
        "schema is up to date",
      ]);
    });
  });

const pixel = program.command("pixel").description("manage pixels");
pixel
  .command("create")
  .description("create a pixel, and its account when --account is not given")
  .requiredOption("--name <name>", "pixel name (also the new account's name)")
  .option("--id <id>", "pixel id (1-64 of letters, digits, _ and -); generated when absent")
  .option("--timezone <tz>", "IANA timezone of the new account (default UTC)")
  .option("--currency <cur>", "reporting currency of the new account (default USD)")
  .option("--account <accountId>", "add the pixel to this existing account")
  .addOption(json())
  .action(
    async (opts: {
      name: string;
      id?: string;
      timezone?: string;
      currency?: string;
      account?: string;
      json?: boolean;
    }) => {
      await withContext("pixelhouse pixel create", async ({ services }) => {
        const { pixel: p, accountCreated } = await services.pixels.create({
          name: opts.name,
          ...(opts.id ? { id: opts.id } : {}),
          ...(opts.timezone ? { timezone: opts.timezone } : {}),
          ...(opts.currency ? { currency: opts.currency } : {}),
          ...(opts.account ? { accountId: opts.account } : {}),
        });
        output(
          opts.json,
          { pixelId: p.id, accountId: p.accountId, accountCreated, name: p.name, status: p.status },
          [
            `pixel ${p.id} created${accountCreated ? ` with a new account ${p.accountId}` : ` in account ${p.accountId}`}`,
            `next: npx pixelhouse key create --pixel ${p.id} --scopes account:read`,
          ],
        );
      });
    },
  );

const list = (value: string, previous: string[] = []) => [
  ...previous,
  ...value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean),
];

pixel
  .command("list")
  .description("list pixels with their status and allowed browser origins")
  .addOption(json())
  .action(async (opts: { json?: boolean }) => {
    await withContext("pixelhouse pixel list", async ({ services }) => {
      const pixels = await services.pixels.list();
      output(
        opts.json,
        pixels,
        pixels.length
          ? pixels.map(
              (p) =>
                `${p.id}  ${p.status.padEnd(8)}  ${p.name}  origins: ${p.allowedOrigins.join(" ") || "(none)"}`,
            )
          : ["no pixels yet: npx pixelhouse pixel create --name NAME"],
      );
    });
  });

pixel
  .command("origins")
  .description("add or remove browser origins the collector (/tr/api/collect, pixel.js) accepts")
  .requiredOption("--pixel <id>", "pixel id")
  .option(
    "--add <origins>",
    "comma-separated origins, e.g. https://shop.example,https://*.shop.example",
    list,
  )
  .option("--remove <origins>", "comma-separated origins to remove", list)
  .addOption(json())
  .action(async (opts: { pixel: string; add?: string[]; remove?: string[]; json?: boolean }) => {
    await withContext("pixelhouse pixel origins", async ({ services }) => {
      const origins = await services.pixels.updateOrigins(opts.pixel, opts.add ?? [], opts.remove ?? []);
      output(opts.json, { pixelId: opts.pixel, allowedOrigins: origins }, [
        `pixel ${opts.pixel} accepts browser events from: ${origins.join(" ") || "(no origin: the collector refuses all)"}`,
      ]);
    });
  });

const scopeList = (value: string) => {
  const scopes = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !STORABLE_SCOPES.includes(s));
  if (scopes.length === 0) throw new InvalidArgumentError("give at least one scope");
  if (unknown.length) {
    throw new InvalidArgumentError(
      `unknown scope ${unknown.join(", ")}; known: ${STORABLE_SCOPES.join(", ")}`,
    );
  }
  return [...new Set(scopes)];
};

const key = program.command("key").description("manage API keys");
key
  .command("create")
  .description("mint an API key for a pixel; the raw key is printed once and never stored")
  .requiredOption("--pixel <id>", "pixel id")
  .requiredOption("--scopes <list>", `comma-separated: ${STORABLE_SCOPES.join(", ")}`, scopeList)
  .option("--name <name>", "a label for listings")
  .option("--expires-in <duration>", "lifetime such as 90d, 12h, 2w, 1y (default: no expiry)")
  .addOption(json())
  .action(
    async (opts: { pixel: string; scopes: string[]; name?: string; expiresIn?: string; json?: boolean }) => {
      let expiresAt: Date | null = null;
      if (opts.expiresIn) {
        const ms = parseDuration(opts.expiresIn);
        if (ms === null)
          throw new BadRequestError(`--expires-in "${opts.expiresIn}" is not a duration like 90d or 12h`);
        expiresAt = new Date(Date.now() + ms);
      }
      await withContext("pixelhouse key create", async ({ services }) => {
        const p = await services.pixels.get(opts.pixel);
        if (!p) throw new BadRequestError(`pixel ${opts.pixel} not found`);
        const { key: raw, record } = await services.keys.create({
          pixelId: p.id,
          scopes: opts.scopes,
          ...(opts.name ? { name: opts.name } : {}),
          expiresAt,
        });
        output(
          opts.json,
          {
            key: raw,
            id: record.id,
            pixelId: record.pixelId,
            scopes: record.scopes,
            expiresAt: record.expiresAt,
          },
          [
            `key ${record.id} for pixel ${record.pixelId} (${record.scopes.join(", ")})`,
            `expires: ${record.expiresAt ? record.expiresAt.toISOString() : "never"}`,
            "the raw key, shown only this once:",
            raw,
          ],
        );
      });
    },
  );

key
  .command("list")
  .description("list a pixel's keys (never the raw keys)")
  .requiredOption("--pixel <id>", "pixel id")
  .addOption(json())
  .action(async (opts: { pixel: string; json?: boolean }) => {
    await withContext("pixelhouse key list", async ({ services }) => {
      if (!(await services.pixels.get(opts.pixel)))
        throw new BadRequestError(`pixel ${opts.pixel} not found`);
      const keys = await services.keys.list(opts.pixel);
      const state = (k: (typeof keys)[number]) =>
        k.revokedAt ? "revoked" : k.expiresAt && k.expiresAt.getTime() <= Date.now() ? "expired" : "active";
      output(
        opts.json,
        keys.map((k) => ({ ...k, state: state(k) })),
        keys.length
          ? keys.map((k) => `${k.id}  ${k.prefix}  ${state(k).padEnd(7)}  ${k.scopes.join(",")}  ${k.name}`)
          : [`no keys for pixel ${opts.pixel}`],
      );
    });
  });

key
  .command("revoke")
  .description("revoke a key by its id (takes effect within 5 seconds everywhere)")
  .argument("<keyId>", "the key id shown by `key create` / `key list`")
  .addOption(json())
  .action(async (keyId: string, opts: { json?: boolean }) => {
    await withContext("pixelhouse key revoke", async ({ services }) => {
      const record = await services.keys.revoke(keyId);
      output(opts.json, record, [`key ${record.id} revoked at ${record.revokedAt?.toISOString()}`]);
    });
  });

registerDestinationCommands(program);
registerDemoCommand(program);
registerImportCommands(program);
registerEventCommands(program);
registerCostsCommands(program);
registerStatusCommand(program);

program.parseAsync(process.argv).catch(reportCliError);
