// Package jsondiff finds where two JSON documents first differ. The
// provider converters use it to prove a conversion kept everything: they
// convert a provider's messages into the store's, back again, and refuse
// the input when the two encodings differ, naming the first field the
// store could not keep rather than dropping it.
package jsondiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Default is an object member that means the same as its absence (an SDK
// that writes "is_error": false, or "annotations": [], where another
// leaves it out).
type Default struct {
	Key   string
	Value any // as decoded: string, bool, json.Number, nil, []any, map[string]any
}

// First returns the path of the first place where a and b differ as JSON
// values (object key order and insignificant whitespace do not count, nor
// a member equal to one of defaults), or "" when they are the same value.
// Within an object, a member a has and b lacks is named before any other
// difference. Paths read like "[2].content[0].type".
func First(a, b []byte, defaults ...Default) (string, error) {
	va, err := decode(a)
	if err != nil {
		return "", err
	}
	vb, err := decode(b)
	if err != nil {
		return "", err
	}
	return first(va, vb, "", defaults), nil
}

func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // compare numbers as written, never through float64
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("jsondiff: %w", err)
	}
	return v, nil
}

func first(a, b any, path string, defaults []Default) string {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok {
			return orRoot(path)
		}
		keys := make([]string, 0, len(a)+len(b))
		for k := range a {
			keys = append(keys, k)
		}
		for k := range b {
			if _, ok := a[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		// A member a has and b lacks first: it names what a conversion lost.
		for _, k := range keys {
			if va, ok := a[k]; ok && !isDefault(k, va, defaults) {
				if vb, ok := b[k]; !ok || isDefault(k, vb, defaults) {
					return path + "." + k
				}
			}
		}
		for _, k := range keys {
			va, okA := a[k]
			vb, okB := b[k]
			okA = okA && !isDefault(k, va, defaults)
			okB = okB && !isDefault(k, vb, defaults)
			if !okA && !okB {
				continue
			}
			if !okA || !okB {
				return path + "." + k
			}
			if p := first(va, vb, path+"."+k, defaults); p != "" {
				return p
			}
		}
		return ""
	case []any:
		b, ok := b.([]any)
		if !ok {
			return orRoot(path)
		}
		for i := range min(len(a), len(b)) {
			if p := first(a[i], b[i], path+"["+strconv.Itoa(i)+"]", defaults); p != "" {
				return p
			}
		}
		if len(a) != len(b) {
			return path + "[" + strconv.Itoa(min(len(a), len(b))) + "]"
		}
		return ""
	default:
		if a != b {
			return orRoot(path)
		}
		return ""
	}
}

func orRoot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

func isDefault(key string, v any, defaults []Default) bool {
	for _, d := range defaults {
		if d.Key == key && reflect.DeepEqual(d.Value, v) {
			return true
		}
	}
	return false
}

// SplitIndex splits a path that starts at an array element ("[2].content")
// into the element's index and the rest ("content"); ok is false for a
// path that does not start with an index.
func SplitIndex(path string) (index int, rest string, ok bool) {
	end := strings.IndexByte(path, ']')
	if !strings.HasPrefix(path, "[") || end < 0 {
		return 0, path, false
	}
	n, err := strconv.Atoi(path[1:end])
	if err != nil {
		return 0, path, false
	}
	return n, strings.TrimPrefix(path[end+1:], "."), true
}
