// Package rules holds the input rules every layer applies the same way:
// identifiers, labels and text (checked before anything is written),
// title sanitising, and the small conversions to nullable columns.
package rules

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sessiondb/sessiondb/store/driver"
)

// Input rules, checked before anything is written.
const (
	MaxIDLen    = 256
	MaxTitleLen = 100
	MaxLabelLen = 1024 // source, reason, role-adjacent names, meta keys
)

// CheckID accepts a non-empty, printable UTF-8 identifier.
func CheckID(what, id string) error {
	switch {
	case id == "":
		return driver.Invalid("empty %s", what)
	case len(id) > MaxIDLen:
		return driver.Invalid("%s longer than %d bytes", what, MaxIDLen)
	case !utf8.ValidString(id):
		return driver.Invalid("%s is not valid UTF-8", what)
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return driver.Invalid("%s %q contains a control character", what, id)
		}
	}
	return nil
}

// CheckLabel accepts an optional short UTF-8 string.
func CheckLabel(what, s string) error {
	switch {
	case len(s) > MaxLabelLen:
		return driver.Invalid("%s longer than %d bytes", what, MaxLabelLen)
	case !utf8.ValidString(s):
		return driver.Invalid("%s is not valid UTF-8", what)
	}
	return nil
}

// CheckText accepts any UTF-8 text, NUL bytes included: content is stored
// and returned byte-exact. Invalid UTF-8 is refused because SQLite TEXT,
// its FTS tokenizers and every other reader of the file (Python's sqlite3
// among them) assume UTF-8 and would mangle or reject it.
func CheckText(what, s string) error {
	if !utf8.ValidString(s) {
		return driver.Invalid("%s is not valid UTF-8 (sessiondb stores UTF-8 text; encode binary data, e.g. base64)", what)
	}
	return nil
}

// JSONExact reports whether s goes through a JSON string to either
// engine unchanged: UTF-8 (encoding/json replaces other bytes) without a
// NUL byte (PostgreSQL refuses \u0000 as text). A statement that takes
// many values as one JSON parameter sends the others its own way.
func JSONExact(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }

// Ptr returns nil for an empty string: optional columns store NULL.
func Ptr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Str returns "" for nil.
func Str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// B2I stores a bool as SQLite's 0/1.
func B2I(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Field is one named value to check. Checks take fields in order, so the
// one reported among several bad ones is always the first.
type Field struct{ Name, Value string }

// CheckLabels is CheckLabel of each field, in order: the first error.
func CheckLabels(fs []Field) error {
	for _, f := range fs {
		if err := CheckLabel(f.Name, f.Value); err != nil {
			return err
		}
	}
	return nil
}

// CheckTexts is CheckText of each field, in order: the first error.
func CheckTexts(fs []Field) error {
	for _, f := range fs {
		if err := CheckText(f.Name, f.Value); err != nil {
			return err
		}
	}
	return nil
}
