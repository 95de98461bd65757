import { getJson, postJson } from "../shared/api.js";
import { clear, h } from "../shared/dom.js";
import { formatRange, formatValue } from "../shared/format.js";
import type { Credentials } from "../shared/session.js";
import {
  attributionText,
  beforeText,
  type CreditedOrders,
  creditedOrdersBody,
  type Drill,
  type IdentityLink,
  instantText,
  type Journey,
  type JourneyTouch,
  journeyPath,
  MODELS,
  ORDERS_PAGE,
  pageText,
  shareText,
} from "./drill.js";

/*
 * The side panel of an attribution table (docs/web-pages.md, "Orders and journeys"): the orders
 * credited to a row's value, a page at a time (POST /db-mgmt/api/query-attribution/orders), and one
 * order's journey (GET /db-mgmt/api/orders/{id}/journey). `data-view` (orders | journey) and
 * `data-state` (loading | ready | error) on the panel say what it shows, for people and for tests.
 */

export interface OrdersPanel {
  open(drill: Drill): void;
  close(): void;
}

/** `attribution.campaign_id` → `Campaign id`. */
const fieldName = (field: string) => {
  const name = field.slice(field.indexOf(".") + 1).replace(/_/g, " ");
  return name.charAt(0).toUpperCase() + name.slice(1);
};

const dash = (v: string | null | undefined) => (v === null || v === undefined || v === "" ? "—" : v);

export function ordersPanel(creds: Credentials): OrdersPanel {
  const title = h("h2", { id: "orders-panel-title", tabindex: -1 });
  const subtitle = h("p", { class: "subtitle", id: "orders-panel-subtitle" });
  const content = h("div", { class: "drill-body", id: "orders-panel-body" });
  const closeButton = h(
    "button",
    { type: "button", class: "ghost", id: "orders-panel-close", "aria-label": "Close the orders panel" },
    "Close",
  );
  const root = h(
    "aside",
    {
      class: "drill-panel card",
      id: "orders-panel",
      role: "dialog",
      "aria-labelledby": "orders-panel-title",
      hidden: true,
    },
    h("header", { class: "drill-head" }, h("div", {}, title, subtitle), closeButton),
    content,
  );
  let offset = 0;
  /** Answers of a superseded request are dropped: only the latest one is shown. */
  let generation = 0;
  let opener: Element | null = null;

  const setState = (view: "orders" | "journey", state: "loading" | "ready" | "error") => {
    root.dataset.view = view;
    root.dataset.state = state;
  };
  const failed = (view: "orders" | "journey", err: unknown) => {
    clear(content);
    content.append(
      h("p", { class: "werror", role: "alert", id: "orders-panel-error" }, (err as Error).message),
    );
    setState(view, "error");
  };

  const close = () => {
    generation++;
    if (root.hidden) return;
    root.hidden = true;
    clear(content);
    if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
  };
  closeButton.addEventListener("click", close);
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !root.hidden) close();
  });

  const header = (d: Drill) => {
    const q = d.query;
    title.textContent = `Orders credited to ${d.value}`;
    subtitle.textContent = `${fieldName(d.dimension)} · ${attributionText(q.attributionModel, q.attributionWindow, q.attributionHalfLifeDays)} · ${formatRange(q.dateRange)} · ${q.currency}`;
  };

  const showOrders = async (d: Drill, at: number) => {
    const mine = ++generation;
    offset = at;
    header(d);
    setState("orders", "loading");
    let answer: CreditedOrders;
    try {
      answer = await postJson<CreditedOrders>(
        creds,
        "/db-mgmt/api/query-attribution/orders",
        creditedOrdersBody(d, at),
      );
    } catch (err) {
      if (mine === generation) failed("orders", err);
      return;
    }
    if (mine !== generation) return;
    clear(content);
    // `{}`: the warehouse could not answer (docs/query.md).
    if (!answer.orders) {
      failed("orders", new Error("The warehouse could not answer; try again."));
      return;
    }
    const money = (v: number) => formatValue(v, "currency", answer.currency);
    const rows = answer.orders.map((o) =>
      h(
        "tr",
        { "data-order-id": o.orderId },
        h(
          "td",
          {},
          h(
            "button",
            {
              type: "button",
              class: "link order-link",
              title: "Open this order's journey",
              onclick: () => void showJourney(d, o.orderId),
            },
            o.orderId,
          ),
        ),
        h("td", { class: "time" }, instantText(o.createdAt)),
        h("td", { class: "num" }, money(o.value)),
        h("td", { class: "num credit" }, shareText(o.credit)),
      ),
    );
    const p = answer.pagination;
    const prev = h(
      "button",
      { type: "button", id: "orders-prev", onclick: () => void showOrders(d, Math.max(0, at - ORDERS_PAGE)) },
      "Previous",
    );
    const next = h(
      "button",
      { type: "button", id: "orders-next", onclick: () => void showOrders(d, at + ORDERS_PAGE) },
      "Next",
    );
    prev.disabled = at === 0;
    next.disabled = !p.hasMore;
    content.append(
      rows.length
        ? h(
            "div",
            { class: "wtable" },
            h(
              "table",
              { id: "credited-orders" },
              h(
                "thead",
                {},
                h(
                  "tr",
                  {},
                  h("th", {}, "Order"),
                  h("th", {}, "Placed"),
                  h("th", { class: "num", title: "Net value: total − refunds" }, "Value"),
                  h("th", { class: "num", title: "The share of the order credited to this value" }, "Credit"),
                ),
              ),
              h("tbody", {}, rows),
            ),
          )
        : h("p", { class: "muted none" }, "No order is credited to this value in the period."),
      h(
        "div",
        { class: "pager" },
        prev,
        h("span", { id: "orders-page", class: "muted" }, pageText(p, rows.length)),
        next,
      ),
    );
    setState("orders", "ready");
  };

  const showJourney = async (d: Drill, orderId: string) => {
    const mine = ++generation;
    title.textContent = `Order ${orderId}`;
    setState("journey", "loading");
    let j: Journey;
    try {
      j = await getJson<Journey>(creds, journeyPath(orderId, d.query));
    } catch (err) {
      if (mine === generation) {
        failed("journey", err);
        content.prepend(backButton(d));
      }
      return;
    }
    if (mine !== generation) return;
    clear(content);
    content.append(backButton(d), ...journeyView(j, d));
    setState("journey", "ready");
  };

  const backButton = (d: Drill) =>
    h(
      "button",
      { type: "button", class: "link", id: "journey-back", onclick: () => void showOrders(d, offset) },
      `← Orders credited to ${d.value}`,
    );

  return {
    open(d: Drill) {
      opener = document.activeElement;
      if (!root.isConnected) document.body.append(root);
      root.hidden = false;
      void showOrders(d, 0);
      title.focus();
    },
    close,
  };
}

/** The order, its touches with every model's credit, and the merges behind it. */
function journeyView(j: Journey, d: Drill): HTMLElement[] {
  const o = j.order;
  const money = (v: number) => formatValue(v, "currency", o.value.currency);
  const current = d.query.attributionModel;
  const order = h(
    "dl",
    { class: "journey-order", id: "journey-order" },
    h("dt", {}, "Placed"),
    h("dd", {}, instantText(o.createdAt)),
    h("dt", {}, "Status"),
    h("dd", {}, o.status),
    h("dt", {}, "Value"),
    h(
      "dd",
      { id: "journey-value" },
      money(o.value.net),
      o.value.refunds
        ? h("span", { class: "muted" }, ` (${money(o.value.total)} − ${money(o.value.refunds)} refunded)`)
        : null,
      o.currency !== o.value.currency
        ? h("span", { class: "muted" }, ` · ${formatValue(o.totalPrice, "currency", o.currency)} as placed`)
        : null,
    ),
    h("dt", {}, "Identity"),
    h(
      "dd",
      { class: "mono" },
      o.identity.storedId,
      o.identity.storedId !== o.identity.canonicalId ? ` → ${o.identity.canonicalId}` : null,
    ),
  );
  const a = j.attribution;
  const outside = j.touches.filter((t) => !t.inWindow).length;
  const summary = h(
    "p",
    { class: "muted", id: "journey-summary" },
    `${a.touchesInWindow} touch${a.touchesInWindow === 1 ? "" : "es"} in the ${a.window === -1 ? "unlimited" : `${a.window}-day`} window` +
      (outside ? ` · ${outside} earlier shown dimmed` : "") +
      (a.olderTouchesOmitted ? ` · ${a.olderTouchesOmitted} older not shown` : "") +
      ` · time decay with a ${a.halfLifeDays}-day half-life`,
  );
  const modelHead = MODELS.map(([m, label]) =>
    h("th", { class: `num model${m === current ? " current" : ""}`, "data-model": m }, label),
  );
  const rows = j.touches.map((t) => touchRow(t, o.createdAt, current));
  const touches = j.touches.length
    ? h(
        "div",
        { class: "wtable journey-touches" },
        h(
          "table",
          { id: "journey-touches" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["Time", "Before", "Channel", "Source", "Medium", "Campaign"].map((c) => h("th", {}, c)),
              modelHead,
              ["Click id", "Campaign id", "Ad set id", "Ad id"].map((c) => h("th", {}, c)),
              h("th", {}, "Landing page"),
              h(
                "th",
                {
                  title:
                    "The identity the touch was recorded under, and the merges joining it to the order's",
                },
                "Identity",
              ),
            ),
          ),
          h("tbody", {}, rows),
        ),
      )
    : h("p", { class: "muted none" }, "No touch reaches this order: it is credited to (none).");
  const links = j.identityLinks.map((l) => h("li", {}, linkText(l)));
  const merges = h(
    "section",
    { class: "journey-merges" },
    h("h3", {}, "Identity merges"),
    links.length
      ? h("ul", { id: "journey-merges" }, links)
      : h(
          "p",
          { class: "muted", id: "journey-merges" },
          "None: the order and its touches share one identity.",
        ),
    j.identityLinksOmitted ? h("p", { class: "muted" }, `and ${j.identityLinksOmitted} more`) : null,
  );
  return [h("section", { class: "journey" }, order, summary), touches, merges];
}

function touchRow(t: JourneyTouch, orderAt: string, current: string): HTMLElement {
  const identity = t.identity;
  return h(
    "tr",
    {
      class: t.inWindow ? "" : "outside",
      "data-event-id": t.eventId,
      "data-in-window": String(t.inWindow),
      title: t.inWindow ? null : "Before the window: no model credits it",
    },
    h("td", { class: "time" }, instantText(t.time)),
    h("td", { class: "time" }, beforeText(t.time, orderAt)),
    [t.channel, t.source, t.medium, t.campaign].map((v) => h("td", {}, dash(v))),
    // Before the long columns, so the credits show without scrolling.
    MODELS.map(([m]) =>
      h(
        "td",
        { class: `num credit${m === current ? " current" : ""}`, "data-model": m },
        shareText(t.credit[m] ?? 0),
      ),
    ),
    [t.clickIdType, t.campaignId, t.adsetId, t.adId].map((v) => h("td", {}, dash(v))),
    // Text, never a link: the address is what the visitor's browser reported.
    h("td", { class: "url", title: t.landingPage ?? "" }, dash(t.landingPage)),
    h(
      "td",
      { class: "mono", title: identity.merges.map(linkText).join("\n") },
      dash(identity.identityId ?? identity.canonicalId),
      identity.merges.length
        ? h(
            "span",
            { class: "muted" },
            ` (${identity.merges.length} merge${identity.merges.length === 1 ? "" : "s"})`,
          )
        : null,
    ),
  );
}

const linkText = (l: IdentityLink) =>
  `${l.aliasType} ${l.aliasValue} → ${l.canonicalId} · since ${instantText(l.firstSeen)}`;
