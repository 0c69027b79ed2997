package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sync"

	"github.com/sessiondb/sessiondb/db"
)

// demoScript is one scripted agent conversation.
type demoScript struct {
	id, title, model string
	turns            []db.NewMessage
}

func demoScripts() []demoScript {
	call := func(id, name, args string) []db.ToolCall {
		return []db.ToolCall{{ID: id, Name: name, Arguments: args}}
	}
	return []demoScript{
		{id: "demo-flaky-test", title: "Fix the flaky checkout test", model: "gpt-5",
			turns: []db.NewMessage{
				{Role: db.RoleSystem, Content: "You are a careful coding agent working in /src/shop."},
				{Role: db.RoleUser, Content: "TestCheckout fails about one run in ten. Can you find out why?"},
				{Role: db.RoleAssistant, Content: "Let me run it a few times to see the failure.",
					ToolCalls: call("call_1", "shell", `{"cmd":"go test -run TestCheckout -count=20 ./checkout"}`)},
				{Role: db.RoleTool, ToolName: "shell", ToolCallID: "call_1",
					Content: "--- FAIL: TestCheckout (0.02s)\n    checkout_test.go:41: total = 19.99, want 20.00\nFAIL"},
				{Role: db.RoleAssistant, Content: "The total is summed from a map, so the float order varies.",
					ToolCalls: call("call_2", "read_file", `{"path":"checkout/total.go"}`)},
				{Role: db.RoleTool, ToolName: "read_file", ToolCallID: "call_2",
					Content: "func Total(items map[string]float64) float64 {\n\tvar t float64\n\tfor _, p := range items { t += p }\n\treturn t\n}"},
				{Role: db.RoleAssistant, Content: "Prices should be integer cents; summing float64 in map order is not deterministic. I will switch Total to int64 cents.", FinishReason: "stop"},
			}},
		{id: "demo-trip", title: "Plan a weekend in Lisbon", model: "claude-sonnet",
			turns: []db.NewMessage{
				{Role: db.RoleUser, Content: "Plan a two-day trip to Lisbon in March, trams and food."},
				{Role: db.RoleAssistant, Content: "Checking the weather first.",
					ToolCalls: call("call_w", "weather", `{"city":"Lisbon","month":"March"}`)},
				{Role: db.RoleTool, ToolName: "weather", ToolCallID: "call_w", Content: `{"avg_high_c":19,"rain_days":9}`},
				{Role: db.RoleAssistant, Content: "Day 1: tram 28 through Alfama, lunch at Time Out Market. Day 2: Belém, pastéis de nata, sunset at Miradouro da Senhora do Monte. Pack a rain jacket.", FinishReason: "stop"},
				{Role: db.RoleUser, Content: "Obrigado! 谢谢 — and where for fado?"},
				{Role: db.RoleAssistant, Content: "Try a small tasca in Mouraria on Day 1 evening.", FinishReason: "stop"},
			}},
		{id: "demo-paper", title: "Summarise the WAL paper", model: "gpt-5-mini",
			turns: []db.NewMessage{
				{Role: db.RoleUser, Content: "Summarise how SQLite's write-ahead log gives readers a snapshot."},
				{Role: db.RoleAssistant, Content: "Fetching the documentation.",
					ToolCalls: call("call_d", "fetch", `{"url":"https://sqlite.org/wal.html"}`)},
				{Role: db.RoleTool, ToolName: "fetch", ToolCallID: "call_d", Content: "Readers use the wal-index to find the last valid commit frame at the start of their transaction..."},
				{Role: db.RoleAssistant, Content: "Each reader records the last commit frame when it starts and ignores later frames; writers append, and a checkpoint copies frames back without disturbing active readers.", FinishReason: "stop"},
			}},
	}
}

// usage is what the conversation's model would have reported: its
// assistant turns as API calls, the text before each as input tokens and
// its own as output (a token taken as four bytes), at a made-up price.
func (sc demoScript) usage() db.UsageUpdate {
	var u db.Usage
	var context int64
	for _, m := range sc.turns {
		n := int64(len(m.Content)+3) / 4
		if m.Role == db.RoleAssistant {
			u.APICalls++
			u.InputTokens += context
			u.OutputTokens += n
		}
		context += n
	}
	u.EstimatedCostUSD = float64(u.InputTokens)*2.5e-6 + float64(u.OutputTokens)*10e-6
	return db.UsageUpdate{Model: sc.model, Usage: u}
}

// runDemo writes the demo conversations from concurrent writers (one
// goroutine per session, each message with an idempotency key, so running
// the demo twice changes nothing) and then shows them.
func runDemo(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	writers := fs.Int("writers", 3, "concurrent writers per conversation")
	if _, err := e.parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	if *writers < 1 || *writers > 64 {
		return usagef("demo: --writers must be between 1 and 64")
	}
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	scripts := demoScripts()
	turns := 0
	for _, sc := range scripts {
		turns += len(sc.turns) * *writers
	}
	bar := e.bar(int64(turns), "demo")
	var wg sync.WaitGroup
	errs := make([]error, len(scripts)*(*writers))
	var before int64 // messages the demo's sessions held already
	var created []demoScript
	for i, sc := range scripts {
		sess, isNew, err := s.EnsureSession(ctx, db.NewSession{ID: sc.id, Source: "demo", Title: sc.title, Model: sc.model})
		if err != nil {
			return err
		}
		before += sess.MessageCount
		if isNew {
			created = append(created, sc)
		}
		// Several writers race to append the same turns, as retries from a
		// flaky gateway would: idempotency keys keep each turn exactly once,
		// and the turn order is kept by appending in script order.
		for w := range *writers {
			wg.Go(func() {
				for n, m := range sc.turns {
					m.IdempotencyKey = fmt.Sprintf("%s/turn-%02d", sc.id, n)
					if _, err := s.AppendMessage(ctx, sc.id, m); err != nil {
						errs[i*(*writers)+w] = err
						return
					}
					bar.Add(1)
				}
			})
		}
	}
	wg.Wait()
	bar.Finish()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// A model's usage, recorded once, by the run that created the session
	// (a usage report is a delta: a second run must not add it again).
	for _, sc := range created {
		if err := s.RecordUsage(ctx, sc.id, sc.usage()); err != nil {
			return err
		}
	}
	ss, err := s.ListSessions(ctx, db.SessionFilter{Source: "demo"})
	if err != nil {
		return err
	}
	var after int64
	for _, x := range ss {
		after += x.MessageCount
	}
	if e.json {
		type convo struct {
			Session  sessionJSON   `json:"session"`
			Messages []messageJSON `json:"messages"`
		}
		out := []convo{}
		for _, x := range ss {
			ms, err := s.Messages(ctx, x.ID, db.MessageQuery{})
			if err != nil {
				return err
			}
			out = append(out, convo{Session: toSessionJSON(x), Messages: mapAll(ms, toMessageJSON)})
		}
		return writeJSON(e.stdout, out)
	}
	if written := after - before; written > 0 {
		fmt.Fprintf(e.stdout, "%s: %s written by %s each (%s)\n\n", e.opened.where, plural(int64(len(ss)), "conversation"),
			plural(int64(*writers), "concurrent writer"), plural(written, "new message"))
	} else {
		fmt.Fprintf(e.stdout, "%s: nothing written: the %s were there already (each turn carries an idempotency key, so the repeats of all %s stored nothing)\n\n",
			e.opened.where, plural(int64(len(ss)), "demo conversation"), plural(int64(*writers), "writer"))
	}
	if err := printSessions(e.stdout, ss); err != nil {
		return err
	}
	for _, x := range ss {
		ms, err := s.Messages(ctx, x.ID, db.MessageQuery{})
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "\n== %s — %s (%s, %s)\n", oneLine(x.ID), oneLine(x.Title), plural(x.MessageCount, "message"), plural(x.ToolCallCount, "tool call"))
		if err := printMessages(e.stdout, ms); err != nil {
			return err
		}
	}
	return nil
}
