import { describe, expect, it } from "vitest";
import { storeErrors } from "../../src/metrics.js";
import { CircuitBreaker } from "../../src/stores/breaker.js";

class Outage extends Error {}
class Refused extends Error {
  constructor(readonly waitMs: number) {
    super(`refused for ${waitMs} ms`);
  }
}

/** A breaker on a clock the test moves, and helpers to run calls through it. */
function setup(failures = 3, cooldownMs = 1000) {
  let now = 1_000_000;
  const breaker = new CircuitBreaker({ failures, cooldownMs }, () => now);
  let calls = 0;
  const run = (outcome: "ok" | "outage" | "bug") =>
    breaker.run(
      async () => {
        calls++;
        if (outcome === "outage") throw new Outage("down");
        if (outcome === "bug") throw new Error("bad statement");
        return "ok";
      },
      (err) => err instanceof Outage,
      (ms) => new Refused(ms),
    );
  return {
    breaker,
    run,
    calls: () => calls,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe("CircuitBreaker", () => {
  it("opens after N outage errors in a row and refuses at once, naming the cool-down left", async () => {
    const b = setup(3, 1000);
    for (let i = 0; i < 3; i++) await expect(b.run("outage")).rejects.toBeInstanceOf(Outage);
    expect(b.breaker.state).toBe("open");
    b.advance(400);
    const refused = await b.run("ok").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Refused);
    expect((refused as Refused).waitMs).toBe(600);
    expect(b.calls()).toBe(3); // the refused call never reached the store
  });

  it("a success in between resets the count; errors that are not outages count as the store answering", async () => {
    const b = setup(3);
    await expect(b.run("outage")).rejects.toThrow();
    await expect(b.run("outage")).rejects.toThrow();
    await b.run("ok");
    await expect(b.run("outage")).rejects.toThrow();
    await expect(b.run("bug")).rejects.toThrow("bad statement");
    await expect(b.run("outage")).rejects.toThrow();
    await expect(b.run("outage")).rejects.toThrow();
    expect(b.breaker.state).toBe("closed");
  });

  it("after the cool-down lets one probe through; its success closes the breaker", async () => {
    const b = setup(2, 1000);
    await expect(b.run("outage")).rejects.toThrow();
    await expect(b.run("outage")).rejects.toThrow();
    b.advance(1000);
    expect(b.breaker.state).toBe("half-open");
    const probe = b.run("ok");
    // While the probe is under way, others are still refused.
    await expect(b.run("ok")).rejects.toBeInstanceOf(Refused);
    await expect(probe).resolves.toBe("ok");
    expect(b.breaker.state).toBe("closed");
    await expect(b.run("ok")).resolves.toBe("ok");
  });

  it("a failed probe opens it for another cool-down", async () => {
    const b = setup(2, 1000);
    await expect(b.run("outage")).rejects.toThrow();
    await expect(b.run("outage")).rejects.toThrow();
    b.advance(1000);
    await expect(b.run("outage")).rejects.toBeInstanceOf(Outage);
    expect(b.breaker.state).toBe("open");
    const refused = (await b.run("ok").catch((e: unknown) => e)) as Refused;
    expect(refused.waitMs).toBe(1000);
  });

  it("a probe that never settles frees its slot after a cool-down", async () => {
    const b = setup(1, 1000);
    await expect(b.run("outage")).rejects.toThrow();
    b.advance(1000);
    void b.breaker.run(
      () => new Promise(() => {}),
      () => true,
      (ms) => new Refused(ms),
    );
    await expect(b.run("ok")).rejects.toBeInstanceOf(Refused);
    b.advance(1000);
    await expect(b.run("ok")).resolves.toBe("ok");
  });

  it("reset closes it at once (a connection became ready)", async () => {
    const b = setup(1, 60_000);
    await expect(b.run("outage")).rejects.toThrow();
    expect(b.breaker.state).toBe("open");
    b.breaker.reset();
    await expect(b.run("ok")).resolves.toBe("ok");
  });
});

describe("CircuitBreaker metrics", () => {
  it("counts a named store's outage errors and refused calls in pixelhouse_store_errors_total", async () => {
    // A bad statement is the caller's problem: it is neither an outage nor counted.
    const fresh = new CircuitBreaker({ failures: 2, cooldownMs: 500 }, () => 0, "sql");
    await fresh
      .run(
        () => Promise.reject(new Error("syntax")),
        () => false,
        () => new Error("x"),
      )
      .catch(() => {});
    expect((await storeErrors.get()).values.some((v) => v.labels.store === "sql")).toBe(false);
    const now = 1_000;
    const breaker = new CircuitBreaker({ failures: 2, cooldownMs: 500 }, () => now, "kv");
    const value = async (kind: string) =>
      (await storeErrors.get()).values.find((v) => v.labels.store === "kv" && v.labels.kind === kind)
        ?.value ?? 0;
    const [outages, refusals] = [await value("outage"), await value("refused")];
    const down = () => Promise.reject(new Error("down"));
    const refused = () => new Error("refused");
    for (let i = 0; i < 2; i++) await breaker.run(down, () => true, refused).catch(() => {});
    // Open now: the next two calls are refused without reaching the store.
    await breaker.run(down, () => false, refused).catch(() => {});
    await breaker.run(down, () => true, refused).catch(() => {});
    expect(await value("outage")).toBe(outages + 2);
    expect(await value("refused")).toBe(refusals + 2);
  });
});
