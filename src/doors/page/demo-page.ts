/** The demo page served at `/page-demo` (filled in below). */
export const DEMO_HTML = '<!doctype html><title>page demo</title>';
