package db

import (
	"crypto/rand"
	"encoding/hex"
	"time"
	"unicode"
	"unicode/utf8"
)

// Input rules, checked before anything is written.
const (
	maxIDLen    = 256
	maxTitleLen = 100
	maxLabelLen = 1024 // source, reason, role-adjacent names, meta keys
)

// checkID accepts a non-empty, printable UTF-8 identifier.
func checkID(what, id string) error {
	switch {
	case id == "":
		return invalid("empty %s", what)
	case len(id) > maxIDLen:
		return invalid("%s longer than %d bytes", what, maxIDLen)
	case !utf8.ValidString(id):
		return invalid("%s is not valid UTF-8", what)
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return invalid("%s %q contains a control character", what, id)
		}
	}
	return nil
}

// checkLabel accepts an optional short UTF-8 string.
func checkLabel(what, s string) error {
	switch {
	case len(s) > maxLabelLen:
		return invalid("%s longer than %d bytes", what, maxLabelLen)
	case !utf8.ValidString(s):
		return invalid("%s is not valid UTF-8", what)
	}
	return nil
}

// checkText accepts any UTF-8 text, NUL bytes included: content is stored
// and returned byte-exact. Invalid UTF-8 is refused because SQLite TEXT,
// its FTS tokenizers and every other reader of the file (Python's sqlite3
// among them) assume UTF-8 and would mangle or reject it.
func checkText(what, s string) error {
	if !utf8.ValidString(s) {
		return invalid("%s is not valid UTF-8 (sessiondb stores UTF-8 text; encode binary data, e.g. base64)", what)
	}
	return nil
}

// newSessionID returns a readable, time-sortable, unique id:
// 20261129-211500-3f9a1c0b7d2e.
func newSessionID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405-") + hex.EncodeToString(b[:])
}

// ptr returns nil for an empty string: optional columns store NULL.
func ptr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// str returns "" for nil.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// b2i stores a bool as SQLite's 0/1.
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
