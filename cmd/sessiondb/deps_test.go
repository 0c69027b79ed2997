package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestUIBinaryLinksNoBrowser: the sessiondb binary links the viewer but
// not its browser-test tooling (chromedp is a test-only dependency), nor
// the test fixture.
func TestUIBinaryLinksNoBrowser(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test=false", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	var ui bool
	for _, d := range deps {
		ui = ui || d == "github.com/sessiondb/sessiondb/cmd/sessiondb/internal/ui"
		for _, banned := range []string{"github.com/chromedp/", "github.com/sessiondb/sessiondb/cmd/sessiondb/internal/ui/uitest"} {
			if strings.HasPrefix(d, banned) {
				t.Errorf("the sessiondb binary links %s", d)
			}
		}
	}
	if !ui {
		t.Errorf("go list -deps does not list the viewer (%d packages): the check proves nothing", len(deps))
	}
}
