import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { registry } from "./metrics.js";

/**
 * METRICS_PORT: a listener of its own that serves only GET /metrics, without a token — for a
 * Prometheus on a private network or the same host (bind METRICS_HOST accordingly).
 */
export async function serveMetrics(host: string, port: number): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (req.method !== "GET" || path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("only GET /metrics here\n");
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
      () => res.writeHead(500, { "content-type": "text/plain" }).end("metrics not collected\n"),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return { server, url: `http://${host.includes(":") ? `[${host}]` : host}:${bound}/metrics` };
}
