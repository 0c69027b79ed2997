package dataurl

import "testing"

func TestParse(t *testing.T) {
	tests := []struct {
		url       string
		ok        bool
		want      Parsed
		b64, text string
	}{
		{"data:image/png;base64,iVBORw0KGgo=", true, Parsed{"image/png", true, "iVBORw0KGgo="}, "iVBORw0KGgo=", "\x89PNG\r\n\x1a\n"},
		{"data:text/plain;charset=utf-8,a%20b", true, Parsed{"text/plain;charset=utf-8", false, "a%20b"}, "YSBi", "a b"},
		{"data:,hi", true, Parsed{"", false, "hi"}, "aGk=", "hi"},
		{"https://example.com/a.png", false, Parsed{}, "", ""},
		{"data:image/png;base64", false, Parsed{}, "", ""},
	}
	for _, tt := range tests {
		got, ok := Parse(tt.url)
		if ok != tt.ok || got != tt.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", tt.url, got, ok, tt.want, tt.ok)
		}
		if !ok {
			continue
		}
		if b, err := got.Base64Data(); err != nil || b != tt.b64 {
			t.Errorf("Parse(%q).Base64Data() = %q, %v; want %q", tt.url, b, err, tt.b64)
		}
		if s, err := got.Text(); err != nil || s != tt.text {
			t.Errorf("Parse(%q).Text() = %q, %v; want %q", tt.url, s, err, tt.text)
		}
		if tt.want.Base64 {
			if back := Base64(got.MediaType, got.Data); back != tt.url {
				t.Errorf("Base64(Parse(%q)) = %q", tt.url, back)
			}
		}
	}
}
