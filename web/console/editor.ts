import {
  autocompletion,
  closeBrackets,
  closeBracketsKeymap,
  completionKeymap,
} from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { type SQLNamespace, sql } from "@codemirror/lang-sql";
import { bracketMatching, HighlightStyle, indentOnInput, syntaxHighlighting } from "@codemirror/language";
import { EditorState, Prec } from "@codemirror/state";
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
  placeholder,
} from "@codemirror/view";
import { tags as t } from "@lezer/highlight";
import { ClickHouse, keywordCompletion } from "./clickhouse.js";

const highlight = HighlightStyle.define([
  { tag: t.keyword, color: "#7c3aed", fontWeight: "600" },
  { tag: [t.typeName], color: "#0e7490" },
  { tag: t.standard(t.name), color: "#1d4ed8" },
  { tag: [t.string, t.special(t.string)], color: "#047857" },
  { tag: [t.number, t.bool, t.null], color: "#b45309" },
  { tag: [t.lineComment, t.blockComment], color: "#94a3b8", fontStyle: "italic" },
  { tag: t.operator, color: "#be185d" },
  { tag: [t.special(t.name), t.quote], color: "#334155" },
  { tag: t.punctuation, color: "#64748b" },
]);

const theme = EditorView.theme({
  "&": { height: "100%", fontSize: "13.5px", backgroundColor: "#fff" },
  "&.cm-focused": { outline: "none" },
  ".cm-scroller": {
    fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, 'Liberation Mono', monospace",
    lineHeight: "1.55",
  },
  ".cm-gutters": { backgroundColor: "#f8fafc", color: "#94a3b8", borderRight: "1px solid #e2e8f0" },
  ".cm-activeLine": { backgroundColor: "#f5f7ff" },
  ".cm-activeLineGutter": { backgroundColor: "#eef2ff", color: "#475569" },
  ".cm-tooltip-autocomplete ul li[aria-selected]": { backgroundColor: "#4f46e5" },
  ".cm-completionInfo": { maxWidth: "340px", whiteSpace: "normal", fontSize: "12.5px" },
  ".cm-completionDetail": { color: "#64748b", fontStyle: "normal", marginLeft: "0.8em" },
});

/** What the page needs of the editor; CodeMirror stays behind it. */
export interface SqlEditor {
  text(): string;
  /** Replaces the selection with `text`, puts the cursor after it and focuses the editor. */
  insert(text: string): void;
  focus(): void;
}

/**
 * CodeMirror with the ClickHouse dialect and completion over `completion` (completionSchema of the
 * schema), in a shadow root inside `parent`. Mod-Enter calls `onRun`; every edit hands the text to
 * `onChange`.
 */
export function createEditor(options: {
  parent: HTMLElement;
  doc: string;
  completion: SQLNamespace;
  onRun: () => void;
  onChange: (doc: string) => void;
}): SqlEditor {
  const run = () => {
    options.onRun();
    return true;
  };
  // CodeMirror styles itself at run time (style-mod). In a document it writes a <style> element, which
  // the pages' CSP (style-src 'self', nothing inline) refuses; in a shadow root it uses a constructed
  // style sheet (adoptedStyleSheets), which the CSP allows. So the editor lives in a shadow root.
  const host = document.createElement("div");
  host.className = "cm-host";
  options.parent.append(host);
  const shadow = host.attachShadow({ mode: "open" });
  const view = new EditorView({
    parent: shadow,
    root: shadow,
    state: EditorState.create({
      doc: options.doc,
      extensions: [
        Prec.highest(keymap.of([{ key: "Mod-Enter", run, preventDefault: true }])),
        lineNumbers(),
        highlightActiveLineGutter(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        closeBrackets(),
        highlightActiveLine(),
        autocompletion({ icons: false }),
        keymap.of([
          ...closeBracketsKeymap,
          ...defaultKeymap,
          ...historyKeymap,
          ...completionKeymap,
          indentWithTab,
        ]),
        sql({ dialect: ClickHouse, schema: options.completion, keywordCompletion }),
        syntaxHighlighting(highlight),
        theme,
        placeholder("SELECT … FROM events"),
        EditorView.contentAttributes.of({ "aria-label": "SQL query", "data-testid": "sql-editor" }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) options.onChange(u.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    text: () => view.state.doc.toString(),
    insert(text) {
      const { from, to } = view.state.selection.main;
      view.dispatch({ changes: { from, to, insert: text }, selection: { anchor: from + text.length } });
      view.focus();
    },
    focus: () => view.focus(),
  };
}

/**
 * Ctrl/Cmd+Enter anywhere on the page runs too. A press in the editor is its own keymap's, which
 * prevents the default, so it does not run twice.
 */
export function runOnModEnter(target: Window, run: () => void): void {
  target.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && !ev.defaultPrevented) {
      ev.preventDefault();
      run();
    }
  });
}
