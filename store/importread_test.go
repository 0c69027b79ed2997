package store

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decodeMessage decodes a message line in one pass only where recordType
// and decodeStrict would give the same record; every other line is theirs.
func TestDecodeMessage_OnePassOnlyWhereTwoAgree(t *testing.T) {
	tests := []struct {
		name string
		line string
		one  bool // decoded in one pass
	}{
		{"AsExported", `{"type":"message","session_id":"s","seq":1,"role":"user","content":"hi","created_at":1}`, true},
		{"TypeOverriddenLater", `{"type":"message","session_id":"s","seq":1,"role":"user","content":"hi","created_at":1,"type":"session"}`, false},
		{"NotUTF8", "{\"type\":\"message\",\"session_id\":\"s\",\"content\":\"caf\xe9\"}", false},
		{"UnknownField", `{"type":"message","session_id":"s","colour":"red"}`, false},
		{"TwoValues", `{"type":"message","session_id":"s"} {}`, false},
		{"NotJSON", `{"type":"message",`, false},
		{"SpacedDifferently", `{"type": "message","session_id":"s"}`, false},
		{"ASession", `{"type":"session","id":"s"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var one messageRecord
			ok := decodeMessage([]byte(tt.line), &one)
			if ok != tt.one {
				t.Fatalf("decodeMessage = %v, want %v", ok, tt.one)
			}
			if !ok {
				if diff := cmp.Diff(messageRecord{}, one); diff != "" {
					t.Errorf("a line left to the two passes left a record behind:\n%s", diff)
				}
				return
			}
			typ, err := recordType([]byte(tt.line))
			var two messageRecord
			if err == nil {
				err = decodeStrict([]byte(tt.line), &two)
			}
			if err != nil || typ != "message" {
				t.Fatalf("the two passes: type %q, %v; decodeMessage took the line", typ, err)
			}
			if diff := cmp.Diff(two, one); diff != "" {
				t.Errorf("one pass (+) against two (-):\n%s", diff)
			}
		})
	}
}
