/** The web UI's stylesheet, served at `/ui/style.css`. Laptop and phone widths; light and dark. */
export const styles = `
:root { --fg: #1b1f24; --bg: #fff; --muted: #5b6470; --line: #d5dbe1; --accent: #0b5cad;
  --accent-fg: #fff; --danger: #b42318; --ok: #067647; --warn: #b54708; --panel: #f5f7f9;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 16px; line-height: 1.45; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e9ed; --bg: #15181c; --muted: #9aa4b0; --line: #343a42; --accent: #6cb0ff;
    --accent-fg: #0b1520; --danger: #ff8a80; --ok: #6fd59a; --warn: #f5b35c; --panel: #1d2126; }
}
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; }
.skip:focus { left: 8px; z-index: 10; background: var(--bg); padding: 8px; }
.top { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; padding: 8px 16px;
  border-bottom: 1px solid var(--line); background: var(--panel); position: sticky; top: 0; z-index: 5; }
.brand { font-weight: 700; }
.top nav ul { display: flex; flex-wrap: wrap; gap: 4px; list-style: none; margin: 0; padding: 0; }
.top nav a { display: inline-block; padding: 6px 10px; border-radius: 6px; text-decoration: none; color: var(--fg); }
.top nav a[aria-current="page"] { background: var(--accent); color: var(--accent-fg); }
.badge { margin-left: 6px; padding: 0 6px; border-radius: 9px; background: var(--danger); color: #fff; font-size: 0.8em; }
.live { margin: 0 0 0 auto; font-size: 0.9em; color: var(--muted); }
.live[data-state="live"]::before { content: "● "; color: var(--ok); }
.live[data-state="down"]::before { content: "● "; color: var(--danger); }
main { padding: 16px; max-width: 1100px; margin: 0 auto; }
main:focus, h1[tabindex="-1"]:focus, h2[tabindex="-1"]:focus { outline: none; }
h1 { font-size: 1.5em; margin: 0.2em 0 0.6em; }
h2 { font-size: 1.15em; margin: 1.2em 0 0.5em; }
.errors:empty { display: none; }
.errors { max-width: 1100px; margin: 8px auto 0; padding: 0 16px; }
.error { display: flex; gap: 8px; align-items: start; border: 1px solid var(--danger); color: var(--danger);
  border-radius: 6px; padding: 8px 12px; margin-bottom: 6px; background: var(--bg); }
.error p { margin: 0; flex: 1; }
button, .button { font: inherit; padding: 6px 12px; border-radius: 6px; border: 1px solid var(--line);
  background: var(--bg); color: var(--fg); cursor: pointer; text-decoration: none; display: inline-block; }
button.primary { background: var(--accent); color: var(--accent-fg); border-color: var(--accent); }
button.danger { color: var(--danger); border-color: var(--danger); }
button:disabled { opacity: 0.5; cursor: default; }
input, select, textarea { font: inherit; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px;
  background: var(--bg); color: var(--fg); max-width: 100%; }
textarea { width: 100%; min-height: 6em; }
label { display: inline-flex; flex-direction: column; gap: 2px; font-size: 0.9em; color: var(--muted); }
label > input, label > select, label > textarea { color: var(--fg); font-size: 1rem; }
label.check { flex-direction: row; align-items: center; gap: 6px; color: var(--fg); font-size: 1rem; }
fieldset { border: 1px solid var(--line); border-radius: 6px; display: flex; flex-wrap: wrap; gap: 6px 14px; }
.stack-form { display: grid; gap: 6px; }
.row { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; }
.cards { list-style: none; margin: 0; padding: 0; display: grid; gap: 10px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 12px; background: var(--panel); }
.card h3 { margin: 0 0 4px; font-size: 1em; }
.meta { color: var(--muted); font-size: 0.9em; margin: 2px 0; overflow-wrap: anywhere; }
.empty { color: var(--muted); font-style: italic; }
.state { font-size: 0.8em; padding: 0 6px; border-radius: 9px; border: 1px solid var(--line); }
.state-failed { border-color: var(--danger); color: var(--danger); }
pre.stderr { max-height: 14em; overflow: auto; font-size: 0.85em; white-space: pre-wrap; }
pre.config { overflow: auto; font-size: 0.85em; white-space: pre-wrap; overflow-wrap: anywhere; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 0.92em; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
td.code { font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
.result-ok { color: var(--ok); }
.result-err { color: var(--danger); }
progress { width: 100%; height: 14px; }
.status { font-weight: 600; }
.status-completed { color: var(--ok); }
.status-failed, .status-cancelled { color: var(--danger); }
.status-completed_with_errors { color: var(--warn); }
.warnings { color: var(--warn); margin: 4px 0 0; padding-left: 1.2em; }
.authorization { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 12px; margin: 6px 0; }
.authorization p { margin: 0; flex: 1 1 20em; }
.authorization .needs { color: var(--warn); }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(160px, 1fr)); gap: 10px; list-style: none; padding: 0; }
.thumb { display: block; border: 1px solid var(--line); border-radius: 6px; padding: 6px; background: var(--panel);
  color: var(--fg); text-decoration: none; text-align: center; }
.thumb img { max-width: 100%; height: auto; display: block; margin: 0 auto 4px; }
.stage { position: relative; display: inline-block; max-width: 100%; }
.stage img, .stage canvas { max-width: 100%; height: auto; display: block; border: 1px solid var(--line); }
.overlays { position: absolute; inset: 0; pointer-events: none; }
.overlay { position: absolute; border: 2px solid var(--accent); background: rgba(11, 92, 173, 0.12); color: inherit;
  padding: 0; border-radius: 2px; }
button.overlay { pointer-events: auto; cursor: pointer; }
.overlay[aria-pressed="true"] { border-color: var(--warn); background: rgba(181, 71, 8, 0.18); }
.split { display: grid; grid-template-columns: minmax(0, 2fr) minmax(0, 1fr); gap: 16px; }
.blocks { list-style: none; padding: 0; margin: 0; display: grid; gap: 8px; }
.block { border-left: 3px solid var(--accent); padding: 6px 10px; background: var(--panel); }
.block p { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.annots { padding-left: 1.2em; }
.verdict-ok { color: var(--ok); font-weight: 600; }
.verdict-bad { color: var(--danger); font-weight: 600; }
.decision { display: inline-block; padding: 0 8px; border-radius: 9px; border: 1px solid currentColor; font-size: 0.85em; }
.decision-allow { color: var(--ok); }
.decision-ask { color: var(--warn); }
.decision-deny { color: var(--danger); }
.card.highlight { border-color: var(--accent); box-shadow: 0 0 0 2px var(--accent); }
button .scope { display: block; font-size: 0.85em; font-weight: normal; }
.card .age { white-space: nowrap; }
.card .count { font-weight: 600; }
.thumbnails { display: flex; flex-wrap: wrap; gap: 8px; margin: 4px 0 8px; }
.thumbnail-pair { display: grid; grid-template-columns: auto auto; gap: 2px 8px; }
.thumbnail-pair > p { grid-column: 1 / -1; margin: 0; color: var(--muted); }
.thumbnail-pair figure { margin: 0; }
.thumbnail-pair img { max-width: 160px; max-height: 160px; border: 1px solid var(--line); }
.preview-summary { margin: 6px 0; font-weight: 600; overflow-wrap: anywhere; }
.preview dl, dl.defaults { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 12px; margin: 4px 0 8px; }
.preview dt, dl.defaults dt { color: var(--muted); }
.preview dd, dl.defaults dd { margin: 0; overflow-wrap: anywhere; }
.preview pre { margin: 0; padding: 6px 8px; background: var(--bg); border: 1px solid var(--line); border-radius: 6px;
  overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.9em; }
.rule .position { color: var(--muted); }
.rule .match { font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
.recent summary { cursor: pointer; color: var(--accent); margin-top: 6px; }
.recent-list { padding-left: 1.2em; margin: 4px 0; font-size: 0.9em; }
.rule-form { display: grid; gap: 8px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (max-width: 700px) {
  main { padding: 12px; }
  .top { padding: 8px; position: static; }
  .live { margin-left: 0; width: 100%; }
  .split { grid-template-columns: 1fr; }
  th, td { padding: 4px; }
  table.stack thead { display: none; }
  table.stack tr { display: block; border: 1px solid var(--line); border-radius: 8px; margin-bottom: 8px; padding: 6px; }
  table.stack td { display: grid; grid-template-columns: 8.5em minmax(0, 1fr); gap: 8px; border: 0; padding: 3px 4px; }
  table.stack td::before { content: attr(data-label); color: var(--muted); }
}
`;
