import http from "node:http";

export interface LoadResult {
  events: number;
  seconds: number;
  eventsPerSecond: number;
  latenciesMs: number[];
  failures: number;
}

/** Posts every body once with `concurrency` keep-alive clients; measures acknowledgement latency. */
export async function runLoad(
  url: string,
  bodies: readonly string[],
  eventsPerBody: number,
  concurrency: number,
  headers: Record<string, string>,
): Promise<LoadResult> {
  const target = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
  const post = (body: string) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: "POST",
          agent,
          headers: {
            ...headers,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const t = performance.now();
        const status = await post(body).catch(() => 0);
        latencies.push(performance.now() - t);
        if (status !== 200) failures++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  const events = (bodies.length - failures) * eventsPerBody;
  return { events, seconds, eventsPerSecond: events / seconds, latenciesMs: latencies, failures };
}

export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
}
