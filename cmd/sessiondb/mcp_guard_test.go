package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The guard passes every well-formed message line on, byte for byte, and
// answers every other line itself.
func TestLineGuard(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":9,"method":"x","params":"` + strings.Repeat("a", maxMCPLine) + `"}`
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		``,
		`   `,
		`not json`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\r",
		`{"id":"s","no":"version"}`,
		`{"jsonrpc":"1.0","id":3,"method":"x"}`,
		`{"jsonrpc":"2.0","id":{"obj":1},"method":"x"}`,
		`[{"jsonrpc":"2.0","id":4,"method":"a"},{"jsonrpc":"2.0","method":"n"}]`,
		`[{"jsonrpc":"2.0","id":5,"method":"a"},{"bad":1}]`,
		`[]`,
		`{"jsonrpc":"2.0","id":6,"method":"a"}{"jsonrpc":"2.0","id":7,"method":"b"}`,
		long,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":8,"result":{}}`,
		`{"jsonrpc":"2.0","id":10,"method":"last, no newline"}`,
	}, "\n")
	var out bytes.Buffer
	w := newLockedWriter(&out)
	g := newLineGuard(strings.NewReader(in), w)
	g.patience = time.Millisecond // no server answers here: do not wait at EOF
	passed, err := io.ReadAll(g)
	if err != nil {
		t.Fatal(err)
	}
	wantPassed := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`[{"jsonrpc":"2.0","id":4,"method":"a"},{"jsonrpc":"2.0","method":"n"}]`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":8,"result":{}}`,
		`{"jsonrpc":"2.0","id":10,"method":"last, no newline"}`,
	}, "\n") + "\n"
	if diff := cmp.Diff(wantPassed, string(passed)); diff != "" {
		t.Errorf("passed to the transport (-want +got):\n%s", diff)
	}
	type answer struct {
		ID   string
		Code int
	}
	var got []answer
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var e rpcError
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.JSONRPC != "2.0" || e.Error.Message == "" {
			t.Fatalf("guard answer %q: %v", line, err)
		}
		got = append(got, answer{string(e.ID), e.Error.Code})
	}
	want := []answer{{"null", -32700}, {`"s"`, -32600}, {"3", -32600}, {"null", -32600}, {"null", -32600},
		{"null", -32600}, {"null", -32700}, {"null", -32600}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if n := g.skipped.Load(); n != int64(len(want)) {
		t.Errorf("skipped = %d, want %d", n, len(want))
	}
}

// At the end of stdin the guard waits until the calls it passed on are
// answered, so a client that closes its end early still gets them.
func TestLineGuard_EOFWaitsForAnswers(t *testing.T) {
	var out bytes.Buffer
	w := newLockedWriter(&out)
	g := newLineGuard(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"slow"}`+"\n"+
		`{"jsonrpc":"2.0","method":"note"}`+"\n"), w)
	buf := make([]byte, 4096)
	if _, err := g.Read(buf); err != nil {
		t.Fatal(err)
	}
	eof := make(chan error)
	go func() {
		for {
			if _, err := g.Read(buf); err != nil {
				eof <- err
				return
			}
		}
	}()
	select {
	case err := <-eof:
		t.Fatalf("EOF (%v) before the call was answered", err)
	case <-time.After(200 * time.Millisecond):
	}
	w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	if err := <-eof; err != io.EOF {
		t.Errorf("after the answer: %v, want EOF", err)
	}
}

// Whatever arrives, the transport only ever sees lines it can decode, and
// every other line gets exactly one JSON-RPC error.
func FuzzLineGuard(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"a"}`, "not json\n{}", `[{"jsonrpc":"2.0","id":1,"result":1}]`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\r\n\n\n[]", `{"jsonrpc":"2.0","id":1.5,"method":"a"} 1`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var out bytes.Buffer
		w := newLockedWriter(&out)
		g := newLineGuard(strings.NewReader(in), w)
		g.patience = 0
		passed, err := io.ReadAll(g)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		lines := 0
		for _, line := range strings.Split(string(passed), "\n") {
			if line == "" {
				continue
			}
			lines++
			if _, err := jsonrpc.DecodeMessage([]byte(line)); err != nil {
				var batch []json.RawMessage
				if json.Unmarshal([]byte(line), &batch) != nil || len(batch) == 0 {
					t.Fatalf("passed %q, which the transport cannot decode: %v", line, err)
				}
			}
		}
		answers := 0
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if line == "" {
				continue
			}
			answers++
			var e rpcError
			if err := json.Unmarshal([]byte(line), &e); err != nil || e.JSONRPC != "2.0" || (e.Error.Code != -32700 && e.Error.Code != -32600) {
				t.Fatalf("guard wrote %q", line)
			}
		}
		if int64(answers) != g.skipped.Load() {
			t.Fatalf("%d answers for %d skipped lines", answers, g.skipped.Load())
		}
	})
}
