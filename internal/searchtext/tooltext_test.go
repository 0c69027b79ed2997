package searchtext

import "testing"

func TestToolText(t *testing.T) {
	for _, tt := range []struct {
		name, calls string
		want        *string
	}{
		{"OneCall", `[{"id":"c1","name":"shell","arguments":"{\"cmd\":\"ls -la\"}"}]`, ptr("shell\n{\"cmd\":\"ls -la\"}")},
		{"CallsInOrder", `[{"id":"a","name":"one","arguments":"x"},{"id":"b","name":"two","arguments":"y"}]`, ptr("one\nx\ntwo\ny")},
		{"EscapesAsWritten", `[{"name":"w","arguments":"{\"s\":\"a\\nb \\u00e9\"}"}]`, ptr("w\n{\"s\":\"a\\nb \\u00e9\"}")},
		{"NoArguments", `[{"id":"c","name":"noop"}]`, ptr("noop\n")},
		{"NullArguments", `[{"name":"n","arguments":null}]`, ptr("n\n")},
		{"ArgumentsAnObject", `[{"name":"o","arguments":{"q": "narwhal"}}]`, ptr("o\n{\"q\":\"narwhal\"}")},
		{"NoName", `[{"arguments":"only args"}]`, ptr("\nonly args")},
		{"NULAsSpace", "[{\"name\":\"n\",\"arguments\":\"a\\u0000b\"}]", ptr("n\na b")},
		{"Empty", `[]`, nil},
		{"NotJSON", `not json`, nil},
		{"NotAnArray", `{"name":"x"}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ToolText(tt.calls)
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("ToolText(%s) = %q, want %q", tt.calls, deref(got), deref(tt.want))
			}
		})
	}
}

func ptr(s string) *string { return &s }

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
