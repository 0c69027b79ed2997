package storetest

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	. "github.com/sessiondb/sessiondb/store"
)

// startedLine is sessionLine with a start time.
func startedLine(id, parent, kind string, started int64) string {
	return strings.Replace(sessionLine(id, parent, kind), `"started_at":1`, fmt.Sprintf(`"started_at":%d`, started), 1)
}

// TestExport_KeepsEverySessionImportAccepts: import takes any int64 start
// time; export must write every such session (a cursor starting above the
// smallest dropped them), and the round trip is byte-identical.
func testExport_KeepsEverySessionImportAccepts(t *testing.T, open Opener) {
	ctx := t.Context()
	starts := []int64{math.MinInt64, math.MinInt64 + 1, -1<<62 - 1, -1 << 62, -1, 0, math.MaxInt64}
	file := header
	for i, at := range starts {
		file += startedLine(fmt.Sprintf("s%d", i), "", "", at)
	}
	s := open(t, Options{})
	if res, err := s.Import(ctx, strings.NewReader(file), ImportOptions{}); err != nil || res.Imported != len(starts) {
		t.Fatalf("import = %+v, %v", res, err)
	}
	var out bytes.Buffer
	res, err := s.Export(ctx, &out, ExportOptions{})
	if err != nil || res.Sessions != int64(len(starts)) {
		t.Fatalf("export wrote %d of %d sessions (%v)", res.Sessions, len(starts), err)
	}
	again := open(t, Options{})
	if _, err := again.Import(ctx, bytes.NewReader(out.Bytes()), ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	var out2 bytes.Buffer
	if _, err := again.Export(ctx, &out2, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), out2.Bytes()) {
		t.Errorf("the round trip changed the export:\n%s\n---\n%s", out.Bytes(), out2.Bytes())
	}
}
