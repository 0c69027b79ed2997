package rules

import (
	"bytes"
	"encoding/json"

	"github.com/sessiondb/sessiondb/store/driver"
)

// CheckJSONObject accepts "" (none) or the text of one JSON object: a
// session's model config is read back as an object (lineage markers,
// SetModel's merge), and text that is not one would be dropped or break
// that read later, far from the call that stored it.
func CheckJSONObject(what, s string) error {
	if s == "" {
		return nil
	}
	if err := CheckText(what, s); err != nil {
		return err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &obj); err != nil || obj == nil || !json.Valid([]byte(s)) {
		return driver.Invalid("%s is not a JSON object: %.40q", what, string(bytes.TrimSpace([]byte(s))))
	}
	return nil
}
