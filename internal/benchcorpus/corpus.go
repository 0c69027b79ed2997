// Package benchcorpus is the search benchmarks' corpus, shared by every
// engine so their figures describe the same rows and the same queries:
// realistic, varied conversations (a Zipf vocabulary of real words and
// technical tokens, a long tail of invented words, some CJK, tool output)
// and a fixed query mix.
package benchcorpus

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/sessiondb/sessiondb/store"
)

// Queries is the fixed query mix: frequent, middling and rare words,
// several words, a phrase, dotted and hyphenated terms, CJK (trigram and
// short-term scan), a word-index miss that falls back to the trigram
// index, and a miss everywhere.
var Queries = []string{
	"error", "timeout", "kubernetes", "goroutine", "database migration", `"connection refused"`,
	"os.ReadFile", "gpt-4o", "deploy failed", "vorakitu", "検索", "設定ファイル", "ubernete", "zzqxjv",
}

// Fill writes n messages into s over sessions of 40 to 160 messages
// (about n/100 sessions), each session one AppendMessages batch (at most
// 500 messages). The same n gives the same rows on every engine.
func Fill(ctx context.Context, s *store.Store, n int) error {
	return FillBatches(ctx, s, n, FillBatch)
}

// FillBatch is Fill's batch: at most this many messages an AppendMessages
// call, so a session of the corpus is one call.
const FillBatch = 500

// FillBatches is Fill with at most batchSize messages per AppendMessages
// call; the rows are Fill's whatever the batch size.
func FillBatches(ctx context.Context, s *store.Store, n, batchSize int) error {
	for c := range conversations(n, batchSize) {
		if err := c.write(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// FillParallel is FillBatches with the sessions shared among loaders
// goroutines, each creating its session and appending its batches, as a
// program bringing history with several workers would: the rows are
// FillBatches' (their ids' order aside). One goroutine draws them, so the
// text does not depend on loaders.
func FillParallel(ctx context.Context, s *store.Store, n, batchSize, loaders int) error {
	if loaders <= 1 {
		return FillBatches(ctx, s, n, batchSize)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	todo := make(chan conversation, loaders)
	var wg sync.WaitGroup
	for range loaders {
		wg.Go(func() {
			for c := range todo {
				if err := c.write(ctx, s); err != nil {
					cancel(err)
				}
			}
		})
	}
	for c := range conversations(n, batchSize) {
		select {
		case todo <- c:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break // a loader failed (or the caller gave up): draw no more
		}
	}
	close(todo)
	wg.Wait()
	return context.Cause(ctx)
}

// A conversation is one session of the corpus and its AppendMessages
// batches.
type conversation struct {
	session store.NewSession
	batches [][]store.NewMessage
}

func (c conversation) write(ctx context.Context, s *store.Store) error {
	if _, err := s.CreateSession(ctx, c.session); err != nil {
		return err
	}
	for _, batch := range c.batches {
		if _, err := s.AppendMessages(ctx, c.session.ID, batch); err != nil {
			return err
		}
	}
	return nil
}

// conversations draws the corpus's n messages: sessions of 40 to 160, in
// batches of at most batchSize.
func conversations(n, batchSize int) iter.Seq[conversation] {
	return func(yield func(conversation) bool) {
		rng := rand.New(rand.NewPCG(1, 2))
		words := NewWords(rng)
		sources := []string{"cli", "gateway", "cron", "telegram"}
		for sess, written := 0, 0; written < n; sess++ {
			c := conversation{session: store.NewSession{ID: fmt.Sprintf("bench-%05d", sess), Source: sources[sess%len(sources)], Model: "gpt-4o"}}
			size := min(n-written, 40+rng.IntN(121))
			var batch []store.NewMessage
			for j := range size {
				batch = append(batch, words.Message(rng, j))
				if len(batch) == batchSize || j == size-1 {
					c.batches = append(c.batches, batch)
					batch = nil
				}
			}
			if !yield(c) {
				return
			}
			written += size
		}
	}
}

// Words draws realistic text: a Zipf-distributed vocabulary of real
// words and technical tokens, then a long tail of invented words.
type Words struct {
	vocab []string
	zipf  *rand.Zipf
}

var head = strings.Fields(`the to a of and is in it that for you this with on be not
are can if as have we will error file function test build run code use at from
but your should it's value return type check by or need see what so all one new
config data server request response time call update change add fix issue
log output input path user make set get list start stop open close read write
timeout retry connection refused failed deploy database migration kubernetes
docker container pod service cluster node goroutine channel mutex deadlock
panic stack trace memory leak cache index query schema table column row
os.ReadFile http.Client json.Unmarshal context.Context gpt-4o claude-3.5 v1.2.3
api key token auth login session message model prompt tool result agent`)

var cjk = []string{
	"設定ファイルを検索する", "データベースの移行に失敗しました", "接続がタイムアウトしました",
	"日本語の文章を検索する", "搜索配置文件", "서버 연결이 거부되었습니다",
}

// NewWords builds the vocabulary from rng.
func NewWords(rng *rand.Rand) *Words {
	vocab := slices.Clone(head)
	syl := strings.Fields("ka ri to mo na su ve lo pi ra de xu ti zen bor qua ul im es or")
	for len(vocab) < 20000 {
		k := 2 + rng.IntN(3)
		var w strings.Builder
		for range k {
			w.WriteString(syl[rng.IntN(len(syl))])
		}
		vocab = append(vocab, w.String())
	}
	vocab = append(vocab, "vorakitu") // a rare word the queries look for
	return &Words{vocab: vocab, zipf: rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))}
}

func (w *Words) text(rng *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			if i%12 == 0 {
				b.WriteString(". ")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(w.vocab[w.zipf.Uint64()])
	}
	return b.String()
}

// Message is the j-th message of a session: user, assistant and tool
// turns in rotation, one in 40 a CJK user turn.
func (w *Words) Message(rng *rand.Rand, j int) store.NewMessage {
	switch {
	case rng.IntN(40) == 0:
		return store.NewMessage{Role: store.RoleUser, Content: cjk[rng.IntN(len(cjk))] + " " + w.text(rng, 3)}
	case j%3 == 0:
		return store.NewMessage{Role: store.RoleUser, Content: w.text(rng, 5+rng.IntN(30))}
	case j%3 == 1:
		return store.NewMessage{Role: store.RoleAssistant, Content: w.text(rng, 10+rng.IntN(90))}
	}
	tools := []string{"shell", "read_file", "grep", "web_search"}
	lines := make([]string, 1+rng.IntN(6))
	for i := range lines {
		lines[i] = fmt.Sprintf("/srv/app/%s.go:%d: %s", w.vocab[10+rng.IntN(200)], rng.IntN(900), w.text(rng, 4+rng.IntN(10)))
	}
	return store.NewMessage{Role: store.RoleTool, ToolName: tools[rng.IntN(len(tools))], Content: strings.Join(lines, "\n")}
}

// ToolExchange is the i-th tool exchange the append benchmarks of both
// engines write in one AppendMessages call: a user turn, an assistant
// calling two tools, both results, the answer.
func ToolExchange(i int) []store.NewMessage {
	return []store.NewMessage{
		{Role: store.RoleUser, Content: fmt.Sprintf("message %d: the quick brown fox jumps over the lazy dog", i)},
		{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{
			{ID: fmt.Sprintf("call_%d_a", i), Name: "grep", Arguments: `{"q":"fox"}`},
			{ID: fmt.Sprintf("call_%d_b", i), Name: "cat", Arguments: `{"path":"dog.txt"}`}}},
		{Role: store.RoleTool, ToolCallID: fmt.Sprintf("call_%d_a", i), ToolName: "grep", Content: "dog.txt:1: the lazy dog"},
		{Role: store.RoleTool, ToolCallID: fmt.Sprintf("call_%d_b", i), ToolName: "cat", Content: "the quick brown fox jumps over the lazy dog"},
		{Role: store.RoleAssistant, Content: "The fox jumps over the dog."},
	}
}
