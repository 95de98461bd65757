import "../shared/base.css";
import "./console.css";
import { getJson } from "../shared/api.js";
import { clear, h } from "../shared/dom.js";
import type { Credentials } from "../shared/session.js";
import { startPage } from "../shared/shell.js";
import { consolePage } from "./page.js";
import type { SchemaTable } from "./schema.js";

const schemaOf = (creds: Credentials) =>
  getJson<{ tables: SchemaTable[] }>(creds, "/db-mgmt/api/sql/schema").then((r) => r.tables);

// The schema read that verified the key on the connect form is the page's first data: not read twice.
let verified: { creds: Credentials; tables: SchemaTable[] } | undefined;

startPage({
  page: "console",
  needs: "the analytics:read scope",
  async verify(creds) {
    verified = { creds, tables: await schemaOf(creds) };
  },
  start(creds, main) {
    const tables = verified?.creds === creds ? Promise.resolve(verified.tables) : schemaOf(creds);
    main.append(h("p", { class: "muted loading" }, "Loading the schema…"));
    tables.then(
      (t) => {
        clear(main);
        consolePage(creds, main, t);
      },
      (err: unknown) => {
        clear(main);
        main.append(
          h(
            "div",
            { class: "error-panel", role: "alert" },
            h("strong", {}, "The schema could not be read"),
            h("pre", {}, (err as Error).message),
          ),
        );
      },
    );
  },
});
