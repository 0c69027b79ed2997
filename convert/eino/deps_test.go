package eino_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The converter reaches the store through package store alone: a gateway
// that converts messages does not link an engine it did not open.
func TestImportsNoEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	sawStore := false
	for _, d := range deps {
		switch {
		case d == "github.com/sessiondb/sessiondb/store":
			sawStore = true
		case d == "github.com/sessiondb/sessiondb/db", strings.HasPrefix(d, "github.com/sessiondb/sessiondb/db/"),
			strings.HasPrefix(d, "github.com/sessiondb/sessiondb/pg"), strings.HasPrefix(d, "github.com/ncruces/"),
			strings.HasPrefix(d, "github.com/jackc/"), strings.HasPrefix(d, "github.com/openai/"):
			t.Errorf("the converter depends on %s", d)
		}
	}
	if !sawStore {
		t.Errorf("go list -deps does not list package store:\n%s", out)
	}
}
