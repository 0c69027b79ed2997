package bench

// The Python peer runs next to sessiondb's own benchmarks (bench_test.go),
// so both are measured in the same run:
//
//	go test -run '^$' -bench . -benchtime 2000x ./bench/

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sessiondb/sessiondb/internal/needs"
)

// BenchmarkPythonPeer runs python_peer.py with b.N appends and reports
// its own timing (the interpreter's start-up is not counted).
func BenchmarkPythonPeer(b *testing.B) {
	for _, threads := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			py, err := exec.LookPath("python3")
			if err != nil {
				b.Fatal("python3 is required for the peer benchmark")
			}
			out, err := exec.Command(py, "python_peer.py", "../schema/schema.sql",
				filepath.Join(b.TempDir(), "peer.db"), fmt.Sprint(b.N), fmt.Sprint(threads), fmt.Sprint(*contentBytes)).Output()
			if err != nil {
				b.Fatalf("python peer: %v", err)
			}
			var r struct {
				MsgsPerS float64 `json:"msgs_per_s"`
				P50      float64 `json:"p50_ms"`
				P99      float64 `json:"p99_ms"`
			}
			if err := json.Unmarshal(out, &r); err != nil {
				b.Fatalf("python peer output %q: %v", out, err)
			}
			b.ReportMetric(r.MsgsPerS, "msgs/s")
			b.ReportMetric(r.P50, "p50-ms")
			b.ReportMetric(r.P99, "p99-ms")
			b.ReportMetric(0, "ns/op") // the peer's time is its own, above
		})
	}
}

// The Python peer pads its messages as appendedMessage does, so that a
// run with -bench.content compares the same texts.
func TestPythonPeer_PadsAsTheGoBenchmarks(t *testing.T) {
	py := needs.Program(t, "python3", "python3")
	defer func(was int) { *contentBytes = was }(*contentBytes)
	for _, size := range []int{0, 20, 55, 56, 1000} {
		*contentBytes = size
		for _, i := range []int{0, 7, 12345} {
			out, err := exec.Command(py, "-B", "-c", fmt.Sprintf("import python_peer, sys; sys.stdout.write(python_peer.content(%d, %d))", i, size)).Output()
			if err != nil {
				t.Fatalf("python peer content(%d, %d): %v", i, size, err)
			}
			if want := appendedMessage(i).Content; string(out) != want {
				t.Errorf("content(%d, %d):\n python %q\n     go %q", i, size, out, want)
			}
		}
	}
}
