// Package searchtext is search's text processing shared by every engine:
// the query sanitiser (any text in, literal terms out), the per-character
// rules of SQLite's unicode61 and trigram tokenizers (so a scan matches as
// the index does), and snippets with their marks.
package searchtext
