import { h } from "../shared/dom.js";
import { DEFAULT_LIMIT, MAX_LIMIT } from "./query.js";

export interface EditorCard {
  element: HTMLElement;
  /** Where the page mounts the editor, once the card is in the document. */
  editorBox: HTMLElement;
  limitText(): string;
  /** A run under way: Run is disabled until it ends (a newer run takes over the button). */
  setRunning(running: boolean): void;
  /** A download under way: the CSV button is disabled. */
  setDownloading(downloading: boolean): void;
  setStatus(text: string): void;
}

/** The card around the editor: heading, the editor's box, and the toolbar (Run, Limit, status, CSV). */
export function createEditorCard(actions: { onRun: () => void; onCsv: () => void }): EditorCard {
  const editorBox = h("div", { class: "editor", id: "editor" });
  const limit = h("input", {
    id: "limit",
    type: "number",
    min: 1,
    max: MAX_LIMIT,
    step: 1,
    value: DEFAULT_LIMIT,
    "aria-label": "Row limit",
  });
  const runButton = h(
    "button",
    {
      type: "button",
      class: "primary",
      id: "run",
      title: "Run (Ctrl+Enter / ⌘+Enter)",
      onclick: actions.onRun,
    },
    "Run",
    h("kbd", {}, /Mac|iPhone|iPad/.test(navigator.platform) ? "⌘ ↵" : "Ctrl ↵"),
  );
  const csvButton = h(
    "button",
    { type: "button", class: "secondary", id: "csv", onclick: actions.onCsv },
    "Download CSV",
  );
  const status = h("span", { class: "run-status", id: "run-status", role: "status" });
  const element = h(
    "section",
    { class: "card editor-card" },
    h(
      "div",
      { class: "card-head" },
      h("h1", {}, "SQL console"),
      h("span", { class: "muted" }, "ClickHouse SQL over this pixel's tables — read-only"),
    ),
    editorBox,
    h(
      "div",
      { class: "toolbar" },
      runButton,
      h("label", { class: "limit", for: "limit" }, "Limit", limit),
      status,
      h("span", { class: "spacer" }),
      csvButton,
    ),
  );
  return {
    element,
    editorBox,
    limitText: () => limit.value,
    setRunning: (running) => {
      runButton.disabled = running;
    },
    setDownloading: (downloading) => {
      csvButton.disabled = downloading;
    },
    setStatus: (text) => {
      status.textContent = text;
    },
  };
}
