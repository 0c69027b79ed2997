package tests

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The CLI's dependencies (the MCP SDK, the progress bar, the terminal
// package, the PostgreSQL engine's pgx, the Prometheus client) are for the CLI: a program that
// imports only the store must not link them. The CLI binary is checked too, so the listing is known to
// show what a binary links.
func TestLibraryLinksOnlyTheStore(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "libconsumer")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/libconsumer").CombinedOutput(); err != nil {
		t.Fatalf("build the consumer: %v\n%s", err, out)
	}
	modules := func(bin string) string {
		out, err := exec.Command("go", "version", "-m", bin).CombinedOutput()
		if err != nil {
			t.Fatalf("go version -m %s: %v\n%s", bin, err, out)
		}
		return string(out)
	}
	cliOnly := []string{"github.com/modelcontextprotocol/go-sdk", "github.com/google/jsonschema-go",
		"github.com/schollz/progressbar", "golang.org/x/term", "github.com/jackc/pgx",
		"github.com/prometheus/client_golang"}
	lib := modules(bin)
	if !strings.Contains(lib, "github.com/ncruces/go-sqlite3") {
		t.Fatalf("the consumer's module list does not show the driver it links:\n%s", lib)
	}
	for _, m := range cliOnly {
		if strings.Contains(lib, m) {
			t.Errorf("a program importing only the store links %s:\n%s", m, lib)
		}
	}
	cli := modules(cliPath)
	for _, m := range []string{"github.com/modelcontextprotocol/go-sdk", "github.com/schollz/progressbar", "github.com/jackc/pgx/v5",
		"github.com/prometheus/client_golang"} {
		if !strings.Contains(cli, m) {
			t.Errorf("the CLI binary's module list lacks %s, so the check above proves nothing:\n%s", m, cli)
		}
	}
}
