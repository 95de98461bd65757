import { type Command, InvalidArgumentError, Option } from "commander";
import { PUBLIC_EVENTS_STREAM } from "../events/public-events.js";
import { defaultConsumerName } from "../events/subscription.js";
import { assertBusName } from "../stores/bus/port.js";
import { output, withContext } from "./context.js";

const busName = (what: "stream" | "group") => (value: string) => {
  try {
    assertBusName(what, value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  return value;
};

const positive = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new InvalidArgumentError("must be 1 to 10000");
  return n;
};

interface ReadOptions {
  group: string;
  stream: string;
  count: number;
  ack: boolean;
  relay: boolean;
  json?: boolean;
}

/** `pixelhouse events read`: a consumer group's view of a bus stream, from the command line. */
export function registerEventCommands(program: Command): void {
  const events = program.command("events").description("the event bus (docs/events.md)");
  events
    .command("read")
    .description(
      "read the next messages of a bus stream as a consumer group (the group is created on first read and " +
        "starts at the oldest message kept); with the embedded stores, stop the service first",
    )
    .requiredOption("--group <name>", "consumer group name", busName("group"))
    .option("--stream <name>", "bus stream", busName("stream"), PUBLIC_EVENTS_STREAM)
    .option("--count <n>", "most messages to read", positive, 100)
    .option("--no-ack", "leave the messages pending (the group gets them again after 30 s)")
    .option("--no-relay", "do not relay unpublished outbox rows to the bus first")
    .addOption(new Option("--json", "print machine-readable JSON"))
    .action(async (opts: ReadOptions) => {
      await withContext("pixelhouse events read", async ({ stores, services }) => {
        // What a stopped service left in the outbox reaches the bus first, as `serve` would do.
        if (opts.relay) while ((await services.relay.runOnce()).claimed > 0);
        const messages = await stores.bus.read(opts.stream, opts.group, defaultConsumerName(), {
          count: opts.count,
        });
        if (opts.ack && messages.length > 0) {
          await stores.bus.ack(
            opts.stream,
            opts.group,
            messages.map((m) => m.id),
          );
        }
        output(
          opts.json,
          messages,
          messages.length
            ? messages.map(
                (m) => `${m.id}  key ${m.key}  deliveries ${m.deliveries}  ${JSON.stringify(m.payload)}`,
              )
            : [`no new messages on ${opts.stream} for group ${opts.group}`],
        );
      });
    });
}
