package pg

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sessiondb/sessiondb/store/driver"
)

// TestImportBatch_ColumnsAreMessageImports: the COPY of an import writes
// the columns MessageImport inserts (pg/queries/export.sql), in its order,
// and a value for each of MessageImportParams' fields — a column added to
// the query and not here would be dropped silently by every bulk import.
func TestImportBatch_ColumnsAreMessageImports(t *testing.T) {
	src, err := os.ReadFile("queries/export.sql")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)-- name: MessageImport :one\s*INSERT INTO messages \((.*?)\) VALUES`).FindSubmatch(src)
	if m == nil {
		t.Fatal("MessageImport's INSERT not found in queries/export.sql")
	}
	var want []string
	for _, c := range strings.Split(string(m[1]), ",") {
		want = append(want, strings.TrimSpace(c))
	}
	if diff := cmp.Diff(want, importColumns); diff != "" {
		t.Errorf("importColumns against MessageImport's columns (-query +copy):\n%s", diff)
	}
	fields := reflect.TypeFor[driver.MessageImportParams]().NumField()
	if got := len(messageImportRow(driver.MessageImportParams{})); got != fields || got != len(importColumns) {
		t.Errorf("messageImportRow gives %d values; MessageImportParams has %d fields, importColumns %d", got, fields, len(importColumns))
	}
}
