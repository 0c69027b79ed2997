// Package dataurl reads and writes data: URLs (RFC 2397), the form in
// which the store's image and file parts carry inline bytes. The provider
// converters use it to turn a provider's base64 source into a part's URL
// and back, the base64 text kept as written.
package dataurl

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// Base64 is the data: URL of base64 text (as written, never re-encoded)
// with a media type.
func Base64(mediaType, data string) string {
	return "data:" + mediaType + ";base64," + data
}

// Parsed is a data: URL taken apart.
type Parsed struct {
	// MediaType is the URL's media type with its parameters other than
	// base64 ("text/plain;charset=utf-8"); "" when the URL names none.
	MediaType string
	// Base64 says Data is base64 text.
	Base64 bool
	// Data is the text after the comma, as written.
	Data string
}

// Parse takes a data: URL apart; ok is false for any other URL.
func Parse(u string) (p Parsed, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return p, false
	}
	head, data, found := strings.Cut(rest, ",")
	if !found {
		return p, false
	}
	p.MediaType, p.Base64 = strings.CutSuffix(head, ";base64")
	p.Data = data
	return p, true
}

// Base64Data is p's data as base64 text: as written when it already is,
// else percent-decoded and encoded.
func (p Parsed) Base64Data() (string, error) {
	if p.Base64 {
		return p.Data, nil
	}
	raw, err := url.PathUnescape(p.Data)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString([]byte(raw)), nil
}

// Text is p's data decoded to text.
func (p Parsed) Text() (string, error) {
	if !p.Base64 {
		return url.PathUnescape(p.Data)
	}
	raw, err := base64.StdEncoding.DecodeString(p.Data)
	return string(raw), err
}
