// Package ui is `sessiondb ui`: a local, read-only conversation viewer in
// the browser, over any store.Store (SQLite or PostgreSQL). It speaks only
// the store's public API and lives in the CLI's module, so the library
// never links it.
//
// Pages: a session list for a picker (/), a conversation (/s/ID), search
// with highlighted snippets that jump to the message in its conversation
// (/search), and usage per model (/usage; a session's usage is on its
// page). Everything is rendered on the server by html/template; one small
// script adds the live refresh and the fold/unfold buttons, and the pages
// work without it.
//
// Safe by construction, because transcripts hold hostile text:
//
//   - Every stored string is escaped by html/template; control characters
//     (ANSI escapes among them) and bidirectional overrides are shown as
//     visible symbols, never applied.
//   - A strict Content-Security-Policy on every response: default-src
//     'self', no inline script or style, no plugins, no framing.
//   - Read-only: only GET and HEAD are routed; every other method gets 405
//     before any handler runs, and no handler calls a store verb that
//     writes.
//   - Loopback by default. Bound to any other address the server needs a
//     random token (Options.Token): given once as ?token=, it becomes an
//     HttpOnly, SameSite=Strict cookie. On loopback without a token the
//     Host header must name a loopback host, so a web page cannot reach
//     the viewer by DNS rebinding.
//   - Only the embedded assets are served as files: /static/NAME looks NAME
//     up in a fixed table, so no path reaches the disk.
//   - Images: a data:image URL of PNG, JPEG, GIF or WebP is shown inline
//     (the CSP allows img-src data:); any other image URL (https:, file:,
//     a blob id) is shown as a link or as text and never fetched by the
//     page, so opening a transcript tells no remote server that it was
//     read. SVG data URLs are shown as text, not rendered.
//
// Live: the store has no change notification yet, so an open conversation
// at its newest page polls GET /s/ID/after?after=LAST every Options.Poll
// (2 s by default) for messages appended since, and appends them.
package ui
