package jsondiff

import "testing"

func TestFirst(t *testing.T) {
	tests := []struct {
		name, a, b, want string
	}{
		{"Same", `{"a":1,"b":[1,2]}`, `{ "b" : [1, 2], "a": 1 }`, ""},
		{"Value", `[{"role":"user"}]`, `[{"role":"system"}]`, "[0].role"},
		{"MissingKey", `[{"text":"x","cache_control":{"type":"ephemeral"}}]`, `[{"text":"x"}]`, "[0].cache_control"},
		{"ExtraKey", `{"a":1}`, `{"a":1,"z":2}`, ".z"},
		{"LostKeyFirst", `{"b":1,"refusal":"no"}`, `{"a":"","b":2}`, ".refusal"},
		{"ShorterArray", `[1,2,3]`, `[1,2]`, "[2]"},
		{"NumberAsWritten", `{"n":1.0}`, `{"n":1}`, ".n"},
		{"Kind", `{"a":[]}`, `{"a":{}}`, ".a"},
		{"Root", `1`, `2`, "."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := First([]byte(tt.a), []byte(tt.b))
			if err != nil || got != tt.want {
				t.Errorf("First(%s, %s) = %q, %v; want %q", tt.a, tt.b, got, err, tt.want)
			}
		})
	}
	isError := Default{Key: "is_error", Value: false}
	for a, want := range map[string]string{`{"t":1,"is_error":false}`: "", `{"t":1,"is_error":true}`: ".is_error"} {
		if got, err := First([]byte(a), []byte(`{"t":1}`), isError); err != nil || got != want {
			t.Errorf("First(%s, {\"t\":1}, is_error default) = %q, %v; want %q", a, got, err, want)
		}
	}
	// An empty list as the default: a different list is still a difference.
	noAnnotations := Default{Key: "annotations", Value: []any{}}
	for a, want := range map[string]string{`{"t":1,"annotations":[]}`: "", `{"t":1,"annotations":[{"type":"url_citation"}]}`: ".annotations"} {
		if got, err := First([]byte(a), []byte(`{"t":1}`), noAnnotations); err != nil || got != want {
			t.Errorf("First(%s, {\"t\":1}, annotations default) = %q, %v; want %q", a, got, err, want)
		}
	}
	if _, err := First([]byte(`{`), []byte(`{}`)); err == nil {
		t.Error("First(invalid JSON) gave no error")
	}
}

func TestSplitIndex(t *testing.T) {
	for path, want := range map[string]struct {
		index int
		rest  string
		ok    bool
	}{
		"[2].content[0].type": {2, "content[0].type", true},
		"[0]":                 {0, "", true},
		".a":                  {0, ".a", false},
		"[x].a":               {0, "[x].a", false},
	} {
		i, rest, ok := SplitIndex(path)
		if i != want.index || rest != want.rest || ok != want.ok {
			t.Errorf("SplitIndex(%q) = %d, %q, %v; want %d, %q, %v", path, i, rest, ok, want.index, want.rest, want.ok)
		}
	}
}
