/**
 * The sightings payload (src/identity/messages.ts) names the ids its write path made new for it.
 *
 * Worked example: groups [order o1, email e] and [order o2] got ids X (made now) and K (known before);
 * a third group with no news is sent empty. The payload carries the two sightings and `minted: [X]`;
 * read back, it gives the same sightings and minted [X]. A payload written before `minted` existed
 * reads back with minted [] (every id looked up), and a malformed one is not a sightings message.
 */
import { describe, expect, it } from "vitest";
import { parseSightings, sightingsPayload } from "../../src/identity/messages.js";

describe("sightings payload", () => {
  const o1 = { type: "order" as const, value: "o1" };
  const e = { type: "email" as const, value: "e" };
  const o2 = { type: "order" as const, value: "o2" };

  it("carries the ids made for it, and reads back the same", () => {
    const payload = sightingsPayload("px", [[o1, e], [o2], []], ["X", "K", "X"], new Set(["X", "Z"]));
    expect(payload?.sightings).toStrictEqual([
      ["X", "order", "o1", "email", "e"],
      ["K", "order", "o2"],
    ]);
    expect(payload?.minted).toStrictEqual(["X"]);
    const back = parseSightings(JSON.parse(JSON.stringify(payload)));
    expect(back?.minted).toStrictEqual(["X"]);
    expect(back?.sightings).toStrictEqual([
      { assigned: "X", aliases: [o1, e] },
      { assigned: "K", aliases: [o2] },
    ]);
  });

  it("leaves the field out when it made nothing, and reads older payloads as minting nothing", () => {
    const payload = sightingsPayload("px", [[o2]], ["K"], new Set());
    expect(payload).not.toHaveProperty("minted");
    expect(parseSightings({ pixelId: "px", at: 1, sightings: [["K", "order", "o2"]] })?.minted).toStrictEqual(
      [],
    );
    expect(
      parseSightings({ pixelId: "px", at: 1, sightings: [["K", "order", "o2"]], minted: [7] }),
    ).toBeNull();
  });
});
