/**
 * The HTML shell of the web UI: landmarks, navigation and the live regions
 * the browser modules fill in. No inline script or style (the CSP forbids
 * both); the screens are rendered by `/ui/main.js`.
 */
const NAV: ReadonlyArray<readonly [route: string, label: string]> = [
  ['approvals', 'Approvals'],
  ['policy', 'Policy'],
  ['notes', 'Notes'],
  ['scenes', 'Scenes'],
  ['jobs', 'Jobs'],
  ['audit', 'Audit'],
  ['agents', 'Agents'],
  ['upstreams', 'Upstreams'],
  ['settings', 'Settings'],
];

export function shellHtml(): string {
  const links = NAV.map(
    ([route, label]) =>
      `<li><a href="#/${route}" data-route="${route}">${label}<span class="badge" data-badge="${route}" hidden></span></a></li>`,
  ).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Airlock workspace</title>
<link rel="icon" href="data:,">
<link rel="manifest" href="/manifest.webmanifest">
<link rel="stylesheet" href="/ui/style.css">
<script type="module" src="/ui/main.js"></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <span class="brand">Airlock</span>
  <nav aria-label="Workspace"><ul>${links}</ul></nav>
  <p class="live" id="live" role="status" aria-live="polite">Connecting…</p>
</header>
<div id="errors" class="errors" role="alert" aria-live="assertive"></div>
<p id="announce" class="visually-hidden" role="status" aria-live="polite"></p>
<main id="main" tabindex="-1"><p>Loading…</p></main>
</body>
</html>
`;
}
