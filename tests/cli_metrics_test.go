package tests

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scrapeText fetches a Prometheus text exposition and returns its samples
// by series ("name" or "name{labels}"). The text format is parsed here by
// hand: the library's module must not require the Prometheus client.
func scrapeText(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v\n%s", url, resp.Status, err, body)
	}
	samples := map[string]float64{}
	for line := range strings.Lines(string(body)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			t.Fatalf("GET %s: not a sample line: %q", url, line)
		}
		samples[line[:i]] = v
	}
	return samples
}

// freeLoopbackPort is a port no one listens on now, for a process that
// cannot print its own (the MCP server's stderr is read only at the end).
func freeLoopbackPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// waitScrape scrapes url until the server answers (it starts after the
// store opens), for up to 20 s.
func waitScrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return scrapeText(t, url)
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing answered at %s in 20 s: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCLI_MetricsAddrOnMCP: `sessiondb mcp --metrics-addr` (a real
// process) serves the store's metrics while it runs, and they move when
// the server appends (a note through MCP).
func TestCLI_MetricsAddrOnMCP(t *testing.T) {
	path := mcpStore(t)
	url := "http://127.0.0.1:" + freeLoopbackPort(t) + "/metrics"
	c := startMCP(t, path, "--allow-notes", "--metrics-addr", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/metrics"))
	c.initialize()
	before := waitScrape(t, url)
	for series, want := range map[string]float64{`sessiondb_store_info{engine="sqlite"}`: 1, "sessiondb_appends_total": 0, "sessiondb_writes_total": 0} {
		if got, ok := before[series]; !ok || got != want {
			t.Errorf("before any note: %s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	if _, ok := before["go_goroutines"]; !ok {
		t.Error("go_goroutines missing: the runtime's metrics are not served beside the store's")
	}
	c.tool("append_note", map[string]any{"content": "metrics move", "idempotency_key": "m1"}, nil)
	after := scrapeText(t, url)
	for _, series := range []string{"sessiondb_appends_total", "sessiondb_writes_total", "sessiondb_batches_total", "sessiondb_commit_duration_seconds_count"} {
		if after[series] < 1 {
			t.Errorf("after a note: %s = %v, want ≥ 1", series, after[series])
		}
	}
	if after["sessiondb_appends_total"] != 1 {
		t.Errorf("after one note: sessiondb_appends_total = %v, want 1", after["sessiondb_appends_total"])
	}
}

// TestCLI_MetricsAddrBarePortIsLoopback: `ui --metrics-addr :0` and
// `follow ID --metrics-addr :0` (real processes) listen on 127.0.0.1,
// never every interface, print where on stderr, and serve the store's
// metrics there.
func TestCLI_MetricsAddrBarePortIsLoopback(t *testing.T) {
	path := mcpStore(t)
	for _, command := range [][]string{{"ui"}, {"follow", "demo-paper"}} {
		t.Run(command[0], func(t *testing.T) {
			cmd := exec.Command(cliPath, append(append([]string{"--db", path}, command...), "--metrics-addr", ":0")...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
			found := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					if m := regexp.MustCompile(`metrics at (http://\S+/metrics)`).FindStringSubmatch(sc.Text()); m != nil {
						found <- m[1]
					}
				}
				close(found)
			}()
			var url string
			select {
			case url = <-found:
			case <-time.After(20 * time.Second):
				t.Fatalf("sessiondb %s printed no metrics address in 20 s", command[0])
			}
			if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/metrics$`).MatchString(url) {
				t.Fatalf("metrics at %s, want 127.0.0.1", url)
			}
			if got := scrapeText(t, url)[`sessiondb_store_info{engine="sqlite"}`]; got != 1 {
				t.Errorf(`sessiondb_store_info{engine="sqlite"} = %v, want 1`, got)
			}
		})
	}
}

// TestCLI_MetricsAddrBadInput: an address that is not host:port is a
// usage error (exit 2) naming the flag, given before the store is
// touched; one already taken is an error naming the flag; neither leaves
// a server behind or changes the store.
func TestCLI_MetricsAddrBadInput(t *testing.T) {
	path := mcpStore(t)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if r := cli(t, nil, "", "--db", path, "mcp", "--metrics-addr", "nonsense"); r.code != 2 || !strings.Contains(r.stderr, "--metrics-addr") {
		t.Errorf("mcp --metrics-addr nonsense: exit %d, stderr %q; want 2 naming --metrics-addr", r.code, r.stderr)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	if r := cli(t, nil, "", "--db", path, "ui", "--metrics-addr", taken.Addr().String()); r.code == 0 ||
		!strings.Contains(r.stderr, "--metrics-addr") || !strings.Contains(r.stderr, "address already in use") {
		t.Errorf("ui --metrics-addr on a taken port: exit %d, stderr %q; want an error naming the flag and the cause", r.code, r.stderr)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Error("the store's file changed after commands that failed")
	}
}
