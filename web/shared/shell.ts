import { ApiError } from "./api.js";
import { clear, h } from "./dom.js";
import {
  type Credentials,
  clearCredentials,
  lastPixelId,
  loadCredentials,
  saveCredentials,
} from "./session.js";

export interface PageOptions {
  page: "console" | "dashboards";
  /** What the key needs here, said on the connect form. */
  needs: string;
  /** A cheap call the page needs anyway: it rejects with an ApiError when the key does not fit. */
  verify(creds: Credentials): Promise<unknown>;
  /** Renders the page into main once connected. */
  start(creds: Credentials, main: HTMLElement): void;
}

const NAV = [
  { page: "console", href: "/console", label: "SQL console" },
  { page: "dashboards", href: "/dashboards", label: "Dashboards" },
  { page: "docs", href: "/docs", label: "API reference" },
];

/** The header, and either the connect form or the page itself. */
export function startPage(options: PageOptions): void {
  const who = h("div", { class: "who" });
  const header = h(
    "header",
    { class: "topbar" },
    h(
      "a",
      { class: "brand", href: "/console" },
      h("span", { class: "logo", "aria-hidden": "true" }),
      "pixelhouse",
    ),
    h(
      "nav",
      {},
      NAV.map((n) =>
        h("a", { href: n.href, ...(n.page === options.page ? { "aria-current": "page" } : {}) }, n.label),
      ),
    ),
    who,
  );
  const main = h("main", { id: "main" });
  document.body.append(header, main);

  const show = (creds: Credentials | null) => {
    clear(who);
    clear(main);
    if (!creds) {
      main.append(connectForm(options, show));
      return;
    }
    who.append(
      h(
        "span",
        { class: "pixel", title: "The pixel this tab's key belongs to" },
        "Pixel ",
        h("code", {}, creds.pixelId),
      ),
      h(
        "button",
        {
          type: "button",
          class: "ghost",
          id: "disconnect",
          title: "Forget the API key in this tab",
          onclick: () => {
            clearCredentials();
            show(null);
          },
        },
        "Disconnect",
      ),
    );
    options.start(creds, main);
  };
  show(loadCredentials());
}

function connectForm(options: PageOptions, done: (c: Credentials) => void): HTMLElement {
  const pixel = h("input", {
    id: "pixel-id",
    required: true,
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "demo",
    value: lastPixelId(),
  });
  const key = h("input", {
    id: "api-key",
    type: "password",
    required: true,
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "pxh_…",
  });
  const error = h("p", { class: "error-text", id: "connect-error", role: "alert" });
  error.hidden = true;
  const submit = h("button", { type: "submit", class: "primary" }, "Connect");
  // No `name` on the inputs and a POST action: even a submit that escaped the script could not put the
  // key into a URL.
  const form = h(
    "form",
    { class: "card connect", id: "connect", method: "post", action: location.pathname },
    h("h1", {}, "Connect to a pixel"),
    h(
      "p",
      { class: "muted" },
      `Enter the pixel id and an API key with ${options.needs}. The key stays in this browser tab ` +
        "(sessionStorage) and is sent only in request headers — never in a URL.",
    ),
    h("label", { for: "pixel-id" }, "Pixel ID"),
    pixel,
    h("label", { for: "api-key" }, "API key"),
    key,
    h("div", { class: "actions" }, submit),
    error,
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const creds = { key: key.value.trim(), pixelId: pixel.value.trim() };
    if (!creds.key || !creds.pixelId) return;
    submit.disabled = true;
    error.hidden = true;
    try {
      await options.verify(creds);
      saveCredentials(creds);
      done(creds);
    } catch (err) {
      error.textContent =
        err instanceof ApiError && (err.status === 401 || err.status === 403)
          ? `The key was refused (${err.status}): ${err.message}`
          : (err as Error).message;
      error.hidden = false;
      submit.disabled = false;
    }
  });
  queueMicrotask(() => (pixel.value ? key : pixel).focus());
  return form;
}
