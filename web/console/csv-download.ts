import { request } from "../shared/api.js";
import { h } from "../shared/dom.js";
import type { Credentials } from "../shared/session.js";
import { csvStatus, type SqlRequest } from "./query.js";

/**
 * Runs the query again as CSV (the API's CSVWithNames) and saves it as query.csv through a `blob:`
 * link, which the pages' CSP allows. Resolves the status line saying how many rows it holds; rejects
 * with the API's error.
 */
export async function downloadCsv(creds: Credentials, body: SqlRequest): Promise<string> {
  const res = await request(creds, "POST", "/db-mgmt/api/sql", body);
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: "query.csv" });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return csvStatus(res.headers, () => blob.text());
}
