/**
 * Identity resolution through POST /tr/api/events (docs/identity.md): identifiers of one event merge their
 * identities into the earliest canonical id, the graph of record and the warehouse identity_links agree,
 * and the canonical id is stable as aliases are added later. The identity worker files sightings
 * after the write; each check first lets it catch up (`settle`), then reads an event's identity as
 * queries do: the id stored on its row, resolved through its `canonical` link in one hop.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { oneRow, type Pixel, sendOk, sha256, ULID_RE } from "./ingest-helpers.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

type Mapping = Record<string, string>; // "type:value" → canonical id

/** The graph of record (LevelDB beside the embedded stores, Postgres on a server). */
async function graphAliases(pixelId: string): Promise<Mapping> {
  const rows = await app.stores.identity.aliases(pixelId);
  return Object.fromEntries(rows.map((r) => [`${r.type}:${r.value}`, r.canonical]));
}

async function warehouseLinks(pixelId: string): Promise<Mapping> {
  const rows = await app.stores.warehouse.query<{
    alias_type: string;
    alias_value: string;
    canonical_id: string;
  }>(
    "SELECT alias_type, alias_value, canonical_id FROM identity_links FINAL WHERE pixel_id = {pixel:String}",
    { pixel: pixelId },
  );
  return Object.fromEntries(rows.map((r) => [`${r.alias_type}:${r.alias_value}`, r.canonical_id]));
}

let seq = 0;
/** The identity of a stored event as queries see it: its row's id, one hop through the links. */
async function resolvedOf(pixelId: string, eventId: string): Promise<string> {
  const stored = (await oneRow(app, pixelId, eventId)).canonical_id as string;
  if (stored === "") return "";
  const [hop] = await app.stores.warehouse.query<{ to: string }>(
    `SELECT argMax(canonical_id, version) AS to FROM identity_links
     WHERE pixel_id = {pixel:String} AND alias_type = 'canonical' AND alias_value = {id:String}
     GROUP BY alias_value`,
    { pixel: pixelId, id: stored },
  );
  return hop?.to ?? stored;
}

/** Sends one event, lets the identity worker file it, and returns the event's identity. */
async function canonicalOf(px: Pixel, event: Record<string, unknown>): Promise<string> {
  const eventId = `ident-${++seq}`;
  const res = await sendOk(app, px, [{ name: "page_view", eventId, ...event }]);
  expect(res.eventsIngested).toBe(1);
  expect((await app.services.settle()).messages).toBe(0);
  return resolvedOf(px.pixelId, eventId);
}

describe("identity resolution", () => {
  // The merge scenario, shared by the next two tests.
  let px: Pixel;
  let a = "";
  let b = "";
  const e1 = "Merge.Me@Example.com";
  const h1 = sha256("merge.me@example.com");
  const expected = (): Mapping => ({
    "identity:anon-1": a,
    "identity:anon-2": a,
    [`email:${h1}`]: a,
    [`canonical:${b}`]: a,
  });

  it("an event linking two identities merges them into the earliest, in Postgres and the warehouse", async () => {
    px = await app.pixelWithKey(["events:write"]);
    a = await canonicalOf(px, { identityId: "anon-1" });
    b = await canonicalOf(px, { identityId: "anon-2" });
    expect(a).toMatch(ULID_RE);
    expect(b).toMatch(ULID_RE);
    expect(a < b).toBe(true);

    // The email first joins anon-2's identity…
    expect(await canonicalOf(px, { identityId: "anon-2", userProperties: { emails: [e1] } })).toBe(b);
    // …then links it to anon-1: both identities become the earliest, A.
    expect(await canonicalOf(px, { identityId: "anon-1", userProperties: { emails: [e1] } })).toBe(a);

    expect(await graphAliases(px.pixelId)).toStrictEqual(expected());
    expect(await warehouseLinks(px.pixelId)).toStrictEqual(expected());

    // Rows stored before the merge keep B; the 'canonical' link resolves it to A in one hop at query time.
    const resolved = await app.stores.warehouse.query<{ event_id: string; resolved: string }>(
      `SELECT e.event_id AS event_id, if(l.canonical_id = '', e.canonical_id, l.canonical_id) AS resolved
       FROM events AS e
       LEFT JOIN (SELECT alias_value, canonical_id FROM identity_links FINAL
                  WHERE pixel_id = {pixel:String} AND alias_type = 'canonical') AS l
         ON l.alias_value = e.canonical_id
       WHERE e.pixel_id = {pixel:String}`,
      { pixel: px.pixelId },
    );
    expect(resolved).toHaveLength(4);
    for (const r of resolved) expect(r.resolved, r.event_id).toBe(a);
  });

  it("the canonical id stays the earliest (A) for every later event, whichever known alias it carries", async () => {
    expect(a, "needs the merge of the previous test").not.toBe("");
    // Each step is soft so one stale answer does not hide the others.
    const step = async (label: string, event: Record<string, unknown>) =>
      expect.soft(await canonicalOf(px, event), label).toBe(a);
    await step("anon-2 alone, after its identity was merged into A", { identityId: "anon-2" });
    await step("the email alone, in another spelling", {
      userProperties: { emails: [` ${e1.toUpperCase()} `] },
    });
    await step("anon-2 with a new user id", {
      identityId: "anon-2",
      userProperties: { userIds: ["user-9"] },
    });
    await step("a new identity with a new store id and a known user id", {
      identityId: "anon-3",
      userProperties: { storeYIds: ["store-9"], userIds: ["user-9"] },
    });
    // A newer identity merged in later folds into A as well; A never changes.
    const c = await canonicalOf(px, { identityId: "anon-4" });
    expect(c > a).toBe(true);
    await step("anon-4 linked to a known user id", {
      identityId: "anon-4",
      userProperties: { userIds: ["user-9"] },
    });
    await step("anon-4 alone after its merge", { identityId: "anon-4" });
    await step("anon-2 alone once more", { identityId: "anon-2" });

    const after = await graphAliases(px.pixelId);
    expect(after).toMatchObject({
      ...expected(),
      "identity:anon-3": a,
      "identity:anon-4": a,
      "user:user-9": a,
      "store:store-9": a,
      [`canonical:${c}`]: a,
    });
    expect(new Set(Object.values(after))).toEqual(new Set([a]));
    expect(await warehouseLinks(px.pixelId)).toStrictEqual(after);
  });

  it("an event with eventProperties.orderId creates an 'order' alias that joins the buyer's copies", async () => {
    const px = await app.pixelWithKey(["events:write"]);
    const buyer = await canonicalOf(px, {
      name: "purchase",
      identityId: "buyer-anon",
      eventProperties: { orderId: "order-77", value: 20, currency: "USD" },
    });
    expect((await graphAliases(px.pixelId))["order:order-77"]).toBe(buyer);
    expect((await warehouseLinks(px.pixelId))["order:order-77"]).toBe(buyer);
    // A numeric order id is the same alias as its string.
    const other = await canonicalOf(px, { identityId: "other-anon" });
    expect(other).not.toBe(buyer);
    expect(
      await canonicalOf(px, { identityId: "other-anon", eventProperties: { orderId: "order-77" } }),
    ).toBe(buyer);
    const num = await canonicalOf(px, { identityId: "num-anon", eventProperties: { orderId: 1234 } });
    expect((await graphAliases(px.pixelId))["order:1234"]).toBe(num);
  });

  it("identities are per pixel: the same identifiers under another pixel are another identity", async () => {
    const [p1, p2] = [await app.pixelWithKey(["events:write"]), await app.pixelWithKey(["events:write"])];
    const one = await canonicalOf(p1, { identityId: "shared-anon", userProperties: { emails: ["s@x.io"] } });
    const two = await canonicalOf(p2, { identityId: "shared-anon", userProperties: { emails: ["s@x.io"] } });
    expect(one).not.toBe(two);
    expect(await canonicalOf(p1, { identityId: "shared-anon" })).toBe(one);
  });

  it("events without identifiers have no canonical id", async () => {
    const px = await app.pixelWithKey(["events:write"]);
    expect(await canonicalOf(px, {})).toBe("");
    expect(await graphAliases(px.pixelId)).toStrictEqual({});
  });

  it("one request linking identities across its events resolves them all to one canonical id", async () => {
    const px = await app.pixelWithKey(["events:write"]);
    await sendOk(app, px, [
      { name: "page_view", eventId: "batch-1", identityId: "b-1" },
      { name: "page_view", eventId: "batch-2", identityId: "b-2" },
      { name: "identify", eventId: "batch-3", identityId: "b-2", userProperties: { userIds: ["b-user"] } },
      { name: "identify", eventId: "batch-4", identityId: "b-1", userProperties: { userIds: ["b-user"] } },
    ]);
    await app.services.settle();
    const aliases = await graphAliases(px.pixelId);
    const root = aliases["identity:b-1"];
    expect(root).toMatch(ULID_RE);
    expect(aliases["identity:b-2"]).toBe(root);
    expect(aliases["user:b-user"]).toBe(root);
    expect((await oneRow(app, px.pixelId, "batch-4")).canonical_id).toBe(root);
    expect(await warehouseLinks(px.pixelId)).toMatchObject({
      "identity:b-1": root,
      "identity:b-2": root,
      "user:b-user": root,
    });
  });

  it("concurrent requests sharing one email resolve to a single identity", async () => {
    const px = await app.pixelWithKey(["events:write"]);
    const n = 20;
    const canonicals = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        canonicalOf(px, { identityId: `conc-${i}`, userProperties: { emails: ["same@x.io"] } }),
      ),
    );
    const aliases = await graphAliases(px.pixelId);
    const root = aliases[`email:${sha256("same@x.io")}`]!;
    for (let i = 0; i < n; i++) expect(aliases[`identity:conc-${i}`]).toBe(root);
    for (const c of canonicals) expect(c).toBe(root);
    // The warehouse agrees on every alias except the 'canonical' bookkeeping rows it may also hold.
    const links = await warehouseLinks(px.pixelId);
    for (const [k, v] of Object.entries(aliases)) expect(links[k], k).toBe(v);
  });
});
