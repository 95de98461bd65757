import { type Command, InvalidArgumentError, Option } from "commander";
import { BadRequestError } from "../errors.js";
import {
  type AddDestinationInput,
  type Destination,
  DestinationService,
  mask,
  redactDestination,
} from "../forwarding/destinations.js";
import { Forwarder } from "../forwarding/service.js";
import type { SqlStore } from "../stores/sql/port.js";
import { output, withContext } from "./context.js";

const json = () => new Option("--json", "print machine-readable JSON");

const eventList = (value: string) => {
  const names = [
    ...new Set(
      value
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (names.length === 0) throw new InvalidArgumentError("give at least one event name");
  return names;
};

/** The forwarding service; its worker is never started here (only `serve` sends). */
const forwarding = (sql: SqlStore) => new Forwarder(sql, new DestinationService(sql));

function target(d: Destination): string {
  if (d.kind === "webhook") return `${d.config.url}  secret ${mask(d.config.secret)}`;
  const c = d.config;
  const test = c.testEventCode ? `  test_event_code ${c.testEventCode}` : "";
  return `dataset ${c.pixelId} via ${c.baseUrl}/${c.apiVersion}  token ${mask(c.accessToken)}${test}`;
}

const events = (d: Destination) => (d.eventNames ? d.eventNames.join(",") : "all");

interface AddOptions {
  pixel: string;
  kind: "webhook" | "meta_capi";
  name?: string;
  events?: string[];
  url?: string;
  secret?: string;
  datasetId?: string;
  accessToken?: string;
  baseUrl?: string;
  apiVersion?: string;
  testEventCode?: string;
  json?: boolean;
}

function addInput(opts: AddOptions): AddDestinationInput {
  const common = {
    pixelId: opts.pixel,
    eventNames: opts.events ?? null,
    ...(opts.name ? { name: opts.name } : {}),
  };
  const webhookOnly = { "--url": opts.url, "--secret": opts.secret };
  const metaOnly = {
    "--dataset-id": opts.datasetId,
    "--access-token": opts.accessToken,
    "--base-url": opts.baseUrl,
    "--api-version": opts.apiVersion,
    "--test-event-code": opts.testEventCode,
  };
  const onlyFor = (flags: string[], kind: string) =>
    new BadRequestError(
      `${flags.join(", ")} only ${flags.length === 1 ? "applies" : "apply"} to --kind ${kind}`,
    );
  const given = (o: Record<string, string | undefined>) =>
    Object.entries(o)
      .filter(([, v]) => v !== undefined)
      .map(([k]) => k);
  if (opts.kind === "webhook") {
    const stray = given(metaOnly);
    if (stray.length) throw onlyFor(stray, "meta_capi");
    if (!opts.url) throw new BadRequestError("--kind webhook needs --url");
    return {
      ...common,
      kind: "webhook",
      config: { url: opts.url, ...(opts.secret !== undefined ? { secret: opts.secret } : {}) },
    };
  }
  const stray = given(webhookOnly);
  if (stray.length) throw onlyFor(stray, "webhook");
  if (!opts.datasetId || !opts.accessToken) {
    throw new BadRequestError("--kind meta_capi needs --dataset-id and --access-token");
  }
  return {
    ...common,
    kind: "meta_capi",
    config: {
      pixelId: opts.datasetId,
      accessToken: opts.accessToken,
      ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
      ...(opts.apiVersion ? { apiVersion: opts.apiVersion } : {}),
      ...(opts.testEventCode ? { testEventCode: opts.testEventCode } : {}),
    },
  };
}

/** `pixelhouse destination add|list|remove` and `pixelhouse deadletter list|replay`. */
export function registerDestinationCommands(program: Command): void {
  const destination = program
    .command("destination")
    .description("manage forwarding destinations (signed webhooks, Meta Conversions API)");

  destination
    .command("add")
    .description("forward a pixel's accepted events to a signed webhook or the Meta Conversions API")
    .requiredOption("--pixel <id>", "pixel id")
    .addOption(
      new Option("--kind <kind>", "destination kind").choices(["webhook", "meta_capi"]).makeOptionMandatory(),
    )
    .option("--name <name>", "a label for listings")
    .option("--events <list>", "comma-separated event names to forward (default: every event)", eventList)
    .option("--url <url>", "webhook: the http(s) URL to POST to")
    .option("--secret <secret>", "webhook: HMAC signing secret (default: 32 random bytes, shown once)")
    .option("--dataset-id <id>", "meta_capi: the Meta dataset (pixel) id")
    .option("--access-token <token>", "meta_capi: Conversions API access token")
    .option("--base-url <url>", "meta_capi: Graph API base URL (default https://graph.facebook.com)")
    .option("--api-version <version>", "meta_capi: Graph API version (default v21.0)")
    .option("--test-event-code <code>", "meta_capi: send as test events (Events Manager → Test events)")
    .addOption(json())
    .action(async (opts: AddOptions) => {
      const input = addInput(opts);
      const generated = input.kind === "webhook" && input.config.secret === undefined;
      await withContext("pixelhouse destination add", async ({ stores }) => {
        const d = await forwarding(stores.sql).destinations.add(input);
        const secret = generated && d.kind === "webhook" ? d.config.secret : undefined;
        output(opts.json, { ...redactDestination(d), ...(secret ? { secret } : {}) }, [
          `destination ${d.id} (${d.kind}) added to pixel ${d.pixelId}`,
          `target: ${target(d)}`,
          `events: ${events(d)}`,
          ...(secret
            ? [
                "the webhook signing secret, shown only this once (verify x-pixelhouse-signature with it):",
                secret,
              ]
            : []),
        ]);
      });
    });

  destination
    .command("list")
    .description("list a pixel's destinations (secrets and tokens masked)")
    .requiredOption("--pixel <id>", "pixel id")
    .addOption(json())
    .action(async (opts: { pixel: string; json?: boolean }) => {
      await withContext("pixelhouse destination list", async ({ stores }) => {
        const list = (await forwarding(stores.sql).destinations.list(opts.pixel)).map(redactDestination);
        output(
          opts.json,
          list,
          list.length
            ? list.map(
                (d) =>
                  `${d.id}  ${d.kind.padEnd(9)}  ${d.enabled ? "enabled " : "disabled"}  events=${events(d)}  ${target(d)}${d.name ? `  ${d.name}` : ""}`,
              )
            : [`no destinations for pixel ${opts.pixel}`],
        );
      });
    });

  destination
    .command("remove")
    .description("delete a destination with its queued deliveries and dead letters")
    .argument("<destinationId>", "the id shown by `destination add` / `destination list`")
    .addOption(json())
    .action(async (id: string, opts: { json?: boolean }) => {
      await withContext("pixelhouse destination remove", async ({ stores }) => {
        const d = await forwarding(stores.sql).destinations.remove(id);
        output(opts.json, redactDestination(d), [
          `destination ${d.id} (${d.kind}) removed from pixel ${d.pixelId}`,
        ]);
      });
    });

  const deadletter = program
    .command("deadletter")
    .description("inspect and replay deliveries that failed every attempt");

  deadletter
    .command("list")
    .description("list a pixel's dead letters, newest first")
    .requiredOption("--pixel <id>", "pixel id")
    .option("--all", "include dead letters already replayed")
    .addOption(json())
    .action(async (opts: { pixel: string; all?: boolean; json?: boolean }) => {
      await withContext("pixelhouse deadletter list", async ({ stores }) => {
        const list = await forwarding(stores.sql).listDeadLetters(opts.pixel, {
          includeReplayed: opts.all ?? false,
        });
        output(
          opts.json,
          list,
          list.length
            ? list.map(
                (l) =>
                  `${l.id}  ${l.failedAt.toISOString()}  destination ${l.destinationId}  ${l.eventName} ${l.eventId}  attempts=${l.attempts}${l.replayedAt ? `  replayed ${l.replayedAt.toISOString()}` : ""}  ${l.lastError ?? ""}`,
              )
            : [`no dead letters for pixel ${opts.pixel}`],
        );
      });
    });

  deadletter
    .command("replay")
    .description("queue a pixel's dead letters again (attempts reset); a running server sends them")
    .requiredOption("--pixel <id>", "pixel id")
    .option("--destination <id>", "only this destination's dead letters")
    .option("--id <n...>", "only these dead-letter ids")
    .addOption(json())
    .action(async (opts: { pixel: string; destination?: string; id?: string[]; json?: boolean }) => {
      await withContext("pixelhouse deadletter replay", async ({ stores }) => {
        const replayed = await forwarding(stores.sql).replayDeadLetters({
          pixelId: opts.pixel,
          ...(opts.destination ? { destinationId: opts.destination } : {}),
          ...(opts.id?.length ? { ids: opts.id } : {}),
        });
        output(opts.json, { replayed }, [
          replayed
            ? `${replayed} dead letter${replayed === 1 ? "" : "s"} queued again; a running server delivers them`
            : "nothing to replay",
        ]);
      });
    });
}
