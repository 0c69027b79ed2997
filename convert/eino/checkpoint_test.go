package eino_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/cloudwego/eino/compose"

	einoconv "github.com/sessiondb/sessiondb/convert/eino"
)

var _ compose.CheckPointStore = einoconv.CheckPoints{}

// TestCheckPoints_SetGet: a checkpoint comes back byte-exact (binary
// bytes too), a later Set replaces it, an unknown id is absent.
func TestCheckPoints_SetGet(t *testing.T) {
	ctx := t.Context()
	cp := einoconv.CheckPoints{Store: openStore(t, "")}
	if b, ok, err := cp.Get(ctx, "none"); b != nil || ok || err != nil {
		t.Errorf("unknown id: %q %v %v, want absent", b, ok, err)
	}
	for _, v := range [][]byte{{0, 0xff, 0xfe, '\n'}, []byte("second")} {
		if err := cp.Set(ctx, "c1", v); err != nil {
			t.Fatal(err)
		}
		if b, ok, err := cp.Get(ctx, "c1"); !bytes.Equal(b, v) || !ok || err != nil {
			t.Errorf("Get after Set(%q): %q %v %v", v, b, ok, err)
		}
	}
}

// graph is two steps with an interrupt between them, checkpointed in
// store at path.
func graph(t *testing.T, path string) compose.Runnable[string, string] {
	t.Helper()
	g := compose.NewGraph[string, string]()
	step := func(suffix string) *compose.Lambda {
		return compose.InvokableLambda(func(_ context.Context, in string) (string, error) { return in + suffix, nil })
	}
	for _, err := range []error{
		g.AddLambdaNode("plan", step(" planned")),
		g.AddLambdaNode("act", step(" acted")),
		g.AddEdge(compose.START, "plan"),
		g.AddEdge("plan", "act"),
		g.AddEdge("act", compose.END),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	r, err := g.Compile(t.Context(), compose.WithCheckPointStore(einoconv.CheckPoints{Store: openStore(t, path)}),
		compose.WithInterruptBeforeNodes([]string{"act"}))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCheckPoints_ResumeInAnotherStore: a graph interrupted before a step
// resumes from its checkpoint through a second store opened on the same
// file (as another process would), and finishes the run.
func TestCheckPoints_ResumeInAnotherStore(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	_, err := graph(t, path).Invoke(ctx, "task", compose.WithCheckPointID("run-1"))
	info, interrupted := compose.ExtractInterruptInfo(err)
	if !interrupted || len(info.BeforeNodes) != 1 || info.BeforeNodes[0] != "act" {
		t.Fatalf("first run: %v, want an interrupt before act", err)
	}
	if v, err := openStore(t, path).Meta(ctx, "eino/checkpoint/run-1"); err != nil || v == "" {
		t.Fatalf("the checkpoint is not in the store: %q %v", v, err)
	}
	out, err := graph(t, path).Invoke(ctx, "task", compose.WithCheckPointID("run-1"))
	if err != nil || out != "task planned acted" {
		t.Errorf("resumed run: %q %v, want %q", out, err, "task planned acted")
	}
}
