package pg

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/sessiondb/sessiondb/pg/internal/pggen"
)

// recordingDB runs pggen's statements on a real connection and notes
// each query that the server accepted, by the name sqlc puts at the head
// of its SQL.
type recordingDB struct {
	db  pggen.DBTX
	mu  sync.Mutex
	ran map[string]int
}

var queryName = regexp.MustCompile(`^-- name: (\w+) :`)

func (r *recordingDB) note(sql string) {
	if m := queryName.FindStringSubmatch(sql); m != nil {
		r.mu.Lock()
		r.ran[m[1]]++
		r.mu.Unlock()
	}
}

func (r *recordingDB) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := r.db.Exec(ctx, sql, args...)
	if err == nil {
		r.note(sql)
	}
	return tag, err
}

// Query's errors can also surface while reading rows; the generated code
// returns them, and every call below fails the test on an error.
func (r *recordingDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := r.db.Query(ctx, sql, args...)
	if err == nil {
		r.note(sql)
	}
	return rows, err
}

func (r *recordingDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	r.note(sql)
	return r.db.QueryRow(ctx, sql, args...)
}

// failedCall is a query's error, with where the test made the call.
type failedCall struct {
	at  string
	err error
}

// must returns a query's value, or stops the test (through
// failOnPanic) naming the call: Go cannot pass a two-result call together
// with t to a helper.
func must[T any](v T, err error) T {
	if err != nil {
		_, file, line, _ := runtime.Caller(1)
		panic(failedCall{fmt.Sprintf("%s:%d", filepath.Base(file), line), err})
	}
	return v
}

func failOnPanic(t *testing.T) {
	if r := recover(); r != nil {
		f, ok := r.(failedCall)
		if !ok {
			panic(r)
		}
		t.Fatalf("%s: %v", f.at, f.err)
	}
}

func expect[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
}

func p[T any](v T) *T { return &v }

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// TestEveryQueryRunsOnPostgres executes every generated query on a real
// server with plausible arguments, checking the results that prove the
// translation (triggers, ON CONFLICT, JSON filters, GREATEST, null-safe
// comparisons), then fails if any pggen method was never run.
func TestEveryQueryRunsOnPostgres(t *testing.T) {
	defer failOnPanic(t)
	pool := migratedPool(t)
	ctx := context.Background()
	db := &recordingDB{db: pool, ran: map[string]int{}}
	q := pggen.New()
	const now = int64(1_700_000_000_000)

	// Sessions.
	insert := func(id string, parent, kind, user *string, title *string, started int64) {
		t.Helper()
		n := must(q.SessionInsert(ctx, db, pggen.SessionInsertParams{
			ID: id, Source: "cli", ParentSessionID: parent, ParentKind: kind, UserID: user,
			Cwd: p("/w/proj"), Title: title, StartedAt: started,
		}))
		expect(t, "SessionInsert "+id, n, int64(1))
	}
	insert("s1", nil, nil, p("u1"), p("Chat"), now)
	expect(t, "SessionInsert of an existing id", must(q.SessionInsert(ctx, db, pggen.SessionInsertParams{ID: "s1", Source: "x", StartedAt: now})), int64(0))
	expect(t, "SessionExists", must(q.SessionExists(ctx, db, "s1")), int64(1))
	if err := q.SessionFillUnset(ctx, db, pggen.SessionFillUnsetParams{Source: "cli", Model: p("m1"), Cwd: p("/other"), ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	s1 := must(q.SessionGet(ctx, db, "s1"))
	expect(t, "filled model", s1.Model, p("m1"))
	expect(t, "kept cwd", s1.Cwd, p("/w/proj"))

	// Messages, the idempotency index and the last_message_at trigger.
	id1 := must(q.MessageInsert(ctx, db, pggen.MessageInsertParams{
		SessionID: "s1", Role: "user", Content: "hello", IdempotencyKey: p("k1"), CreatedAt: now + 1,
	}))
	id2 := must(q.MessageInsert(ctx, db, pggen.MessageInsertParams{
		SessionID: "s1", Role: "assistant", Content: "hi", ToolCallsJson: p(`[{"id":"a"},{"id":"b"}]`), CreatedAt: now + 2,
	}))
	if _, err := q.MessageInsert(ctx, db, pggen.MessageInsertParams{
		SessionID: "s1", Role: "user", Content: "again", IdempotencyKey: p("k1"), CreatedAt: now + 3,
	}); !isUniqueViolation(err) {
		t.Errorf("a second message with key k1: %v, want a unique violation", err)
	}
	expect(t, "SessionAddMessageCounts", must(q.SessionAddMessageCounts(ctx, db, pggen.SessionAddMessageCountsParams{Messages: 2, ToolCalls: 0, ID: "s1"})), int64(1))
	// It counts nothing on a missing session or one closed by compression
	// (an append is then refused), and counts on one that ended otherwise.
	expect(t, "SessionAddMessageCounts on a missing session", must(q.SessionAddMessageCounts(ctx, db, pggen.SessionAddMessageCountsParams{Messages: 1, ID: "ghost"})), int64(0))
	for _, end := range []struct {
		reason  string
		counted int64
	}{{"compression", 0}, {"user_exit", 1}} {
		if _, err := pool.Exec(ctx, "UPDATE sessions SET end_reason = $1 WHERE id = 's1'", end.reason); err != nil {
			t.Fatal(err)
		}
		expect(t, "SessionAddMessageCounts on a session ended by "+end.reason, must(q.SessionAddMessageCounts(ctx, db, pggen.SessionAddMessageCountsParams{Messages: 0, ID: "s1"})), end.counted)
		expect(t, "SessionAddMessageCountsMany, a session ended by "+end.reason+" and a missing one",
			must(q.SessionAddMessageCountsMany(ctx, db, `[{"id":"s1","messages":0,"tool_calls":0,"appends":1,"newest":0},{"id":"ghost","messages":1,"tool_calls":0,"appends":1,"newest":1}]`)),
			map[int64][]string{0: nil, 1: {"s1"}}[end.counted])
		// The held counts' form (deferred.go) fails instead of counting 0.
		err := q.SessionAddMessageCountsAll(ctx, db, `[{"id":"s1","messages":0,"tool_calls":0,"appends":1,"newest":0}]`)
		if (err == nil) != (end.counted == 1) || (err != nil && sqlState(err) != "22012") {
			t.Errorf("SessionAddMessageCountsAll, a session ended by %s: %v; want it to fail (22012) only when it counts nothing", end.reason, err)
		}
	}
	if err := q.SessionAddMessageCountsAll(ctx, db, `[{"id":"ghost","messages":1,"tool_calls":0,"appends":1,"newest":1}]`); sqlState(err) != "22012" {
		t.Errorf("SessionAddMessageCountsAll on a missing session: %v; want it to fail (22012)", err)
	}
	if _, err := pool.Exec(ctx, "UPDATE sessions SET end_reason = NULL WHERE id = 's1'"); err != nil {
		t.Fatal(err)
	}
	expect(t, "MessageIDByIdempotencyKey", must(q.MessageIDByIdempotencyKey(ctx, db, pggen.MessageIDByIdempotencyKeyParams{SessionID: "s1", IdempotencyKey: p("k1")})), id1)

	// The platform message id: unique per session, its own index (the row
	// is deleted after, so that the counts below stay the test's).
	idP := must(q.MessageInsert(ctx, db, pggen.MessageInsertParams{
		SessionID: "s1", Role: "user", Content: "from chat", PlatformMessageID: p("tg-1"), Model: p("m1"),
		PartsJson: p(`[{"type":"text","text":"from chat"}]`), MetadataJson: p(`{"a": 1}`), CreatedAt: now + 2,
	}))
	expect(t, "MessageIDByPlatformID", must(q.MessageIDByPlatformID(ctx, db, pggen.MessageIDByPlatformIDParams{SessionID: "s1", PlatformMessageID: p("tg-1")})), idP)
	if _, err := q.MessageInsert(ctx, db, pggen.MessageInsertParams{
		SessionID: "s1", Role: "user", Content: "again", PlatformMessageID: p("tg-1"), CreatedAt: now + 2,
	}); !isUniqueViolation(err) {
		t.Errorf("a second message with platform id tg-1: %v, want a unique violation", err)
	}
	if _, err := pool.Exec(ctx, "DELETE FROM messages WHERE id = $1", idP); err != nil {
		t.Fatal(err)
	}
	// Many rows in one statement, ids in the array's order (deleted after
	// too); a used key fails the whole statement.
	many := must(q.MessageInsertMany(ctx, db, `[{"session_id":"s1","role":"user","content":"m1","created_at":5,"is_summary":0,"observed":0},
		{"session_id":"s1","role":"tool","content":"m2 \u00e9","tool_name":"shell","token_count":3,"created_at":6,"is_summary":0,"observed":1}]`))
	if len(many) != 2 || many[0] <= idP || many[1] <= many[0] {
		t.Errorf("MessageInsertMany ids %v, want two ascending after %d", many, idP)
	}
	var contents []string
	if err := pool.QueryRow(ctx, "SELECT array_agg(content || '/' || COALESCE(tool_name, '') || '/' || observed ORDER BY id) FROM messages WHERE id = ANY($1)", many).Scan(&contents); err != nil {
		t.Fatal(err)
	}
	expect(t, "MessageInsertMany rows", strings.Join(contents, "|"), "m1//0|m2 é/shell/1")
	if _, err := q.MessageInsertMany(ctx, db, `[{"session_id":"s1","role":"user","content":"x","idempotency_key":"k1","created_at":7,"is_summary":0,"observed":0}]`); !isUniqueViolation(err) {
		t.Errorf("MessageInsertMany with the used key k1: %v, want a unique violation", err)
	}
	if _, err := pool.Exec(ctx, "DELETE FROM messages WHERE id = ANY($1)", many); err != nil {
		t.Fatal(err)
	}
	s1 = must(q.SessionGet(ctx, db, "s1"))
	expect(t, "last_message_at (trigger)", s1.LastMessageAt, p(now+2))
	if err := q.SessionRecount(ctx, db, "s1"); err != nil {
		t.Fatal(err)
	}
	s1 = must(q.SessionGet(ctx, db, "s1"))
	expect(t, "recounted messages", s1.MessageCount, int64(2))
	expect(t, "recounted tool calls (json_array_length)", s1.ToolCallCount, int64(2))

	ids := func(ms []pggen.Message) []int64 {
		var out []int64
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	list := pggen.MessageListAscendingParams{SessionID: "s1", AfterID: 0, BeforeID: math.MaxInt64, RowLimit: 10}
	expect(t, "MessageListAscending", ids(must(q.MessageListAscending(ctx, db, list))), []int64{id1, id2})
	expect(t, "MessageListDescending", ids(must(q.MessageListDescending(ctx, db, pggen.MessageListDescendingParams(list)))), []int64{id2, id1})
	expect(t, "MessageGet content", must(q.MessageGet(ctx, db, id1)).Content, "hello")
	expect(t, "MessageActiveIDs", must(q.MessageActiveIDs(ctx, db, "s1")), []int64{id1, id2})
	expect(t, "MessageSeq", must(q.MessageSeq(ctx, db, id2)), pggen.MessageSeqRow{SessionID: "s1", Seq: 2})
	expect(t, "MessageIDBySeq", must(q.MessageIDBySeq(ctx, db, pggen.MessageIDBySeqParams{SessionID: "s1", SeqOffset: 1})), id2)
	expect(t, "MessageCount", must(q.MessageCount(ctx, db)), int64(2))
	expect(t, "SessionNewestMessageID", must(q.SessionNewestMessageID(ctx, db, "s1")), id2)
	expect(t, "SessionHasRealTurns", must(q.SessionHasRealTurns(ctx, db, "s1")), true)
	expect(t, "MessageContextBefore", must(q.MessageContextBefore(ctx, db, pggen.MessageContextBeforeParams{MaxChars: 3, SessionID: "s1", ID: id2, RowLimit: 5})),
		[]pggen.MessageContextBeforeRow{{ID: id1, Role: "user", Content: "hel"}})
	expect(t, "MessageContextAfter", must(q.MessageContextAfter(ctx, db, pggen.MessageContextAfterParams{MaxChars: 10, SessionID: "s1", ID: id1, RowLimit: 5})),
		[]pggen.MessageContextAfterRow{{ID: id2, Role: "assistant", Content: "hi"}})

	// Compression: a continuation s2 carries s1 on.
	insert("s2", p("s1"), p("compression"), p("u1"), nil, now+10)
	expect(t, "MessageActiveWatermark", must(q.MessageActiveWatermark(ctx, db, "s1")), id2)
	id3 := must(q.MessageCopy(ctx, db, pggen.MessageCopyParams{SessionID: "s2", IdempotencyKey: p("k1"), SourceID: id1}))
	expect(t, "copy's origin", must(q.MessageGet(ctx, db, id3)).OriginID, &id1)
	if err := q.MessageRetire(ctx, db, id1); err != nil {
		t.Fatal(err)
	}
	expect(t, "MessageCompactUpTo", must(q.MessageCompactUpTo(ctx, db, pggen.MessageCompactUpToParams{SessionID: "s1", Watermark: id2})), int64(1))
	expect(t, "MessageActiveAbove", len(must(q.MessageActiveAbove(ctx, db, pggen.MessageActiveAboveParams{SessionID: "s1", Watermark: 0}))), 0)
	expect(t, "SessionEndForCompression", must(q.SessionEndForCompression(ctx, db, pggen.SessionEndForCompressionParams{EndedAt: p(now + 11), ID: "s1"})), int64(1))
	expect(t, "SessionEndReason", must(q.SessionEndReason(ctx, db, "s1")), p("compression"))
	expect(t, "SessionReopen of a compressed parent", must(q.SessionReopen(ctx, db, "s1")), int64(0))

	// Lineage.
	expect(t, "SessionConversationRoot", must(q.SessionConversationRoot(ctx, db, "s2")), "s1")
	expect(t, "SessionAncestors", must(q.SessionAncestors(ctx, db, "s2")), []string{"s1"})
	expect(t, "SessionContinuation", must(q.SessionContinuation(ctx, db, p("s1"))), "s2")
	expect(t, "SessionChildren", must(q.SessionChildren(ctx, db, p("s1"))), []pggen.SessionChildrenRow{{ID: "s2", ParentKind: p("compression")}})
	expect(t, "SessionParentOf", must(q.SessionParentOf(ctx, db, "s2")), p("s1"))

	// Flags (s1 pinned and unread), copied to the continuation.
	expect(t, "SessionSetFlags", must(q.SessionSetFlags(ctx, db, pggen.SessionSetFlagsParams{Pinned: p(int64(1)), Read: p(int64(0)), ReadAt: p(now), ID: "s1"})), int64(1))
	if err := q.SessionCopyFlags(ctx, db, pggen.SessionCopyFlagsParams{ParentID: "s1", ID: "s2"}); err != nil {
		t.Fatal(err)
	}
	s2 := must(q.SessionGet(ctx, db, "s2"))
	expect(t, "copied pin", s2.Pinned, int64(1))
	expect(t, "s1 unread", must(q.SessionGet(ctx, db, "s1")).LastReadAt, p(int64(0)))

	// Ending and reopening; a NULL end reason is not 'compression'.
	insert("s3", nil, nil, p("u1"), nil, now+20)
	expect(t, "SessionEnd", must(q.SessionEnd(ctx, db, pggen.SessionEndParams{EndedAt: p(now + 21), ID: "s3"})), int64(1))
	expect(t, "SessionEnd twice", must(q.SessionEnd(ctx, db, pggen.SessionEndParams{EndedAt: p(now + 22), EndReason: p("x"), ID: "s3"})), int64(0))
	expect(t, "SessionReopen with a NULL end reason", must(q.SessionReopen(ctx, db, "s3")), int64(1))
	if err := q.SessionLink(ctx, db, pggen.SessionLinkParams{ParentID: p("s1"), ParentKind: p("branch"), ID: "s3"}); err != nil {
		t.Fatal(err)
	}
	insert("s4", nil, nil, nil, nil, now+30)
	must(q.SessionEnd(ctx, db, pggen.SessionEndParams{EndedAt: p(now + 31), EndReason: p("agent_close"), ID: "s4"}))
	expect(t, "SessionList ended", len(must(q.SessionList(ctx, db, pggen.SessionListParams{Source: p("cli"), Ended: p(int64(1)), RowLimit: 10}))), 2)
	expect(t, "SessionList children of s1", len(must(q.SessionList(ctx, db, pggen.SessionListParams{ParentSessionID: p("s1"), RowLimit: 10}))), 2)

	// Titles, per user.
	expect(t, "SessionTitleGet", must(q.SessionTitleGet(ctx, db, "s1")), pggen.SessionTitleGetRow{Title: p("Chat"), TitleRank: 0, UserID: p("u1")})
	expect(t, "SessionTitleSet", must(q.SessionTitleSet(ctx, db, pggen.SessionTitleSetParams{Title: p("Chat #2"), TitleRank: 1, ID: "s3"})), int64(1))
	if _, err := q.SessionTitleSet(ctx, db, pggen.SessionTitleSetParams{Title: p("Chat"), TitleRank: 1, ID: "s2"}); !isUniqueViolation(err) {
		t.Errorf("a user's second session titled Chat: %v, want a unique violation", err)
	}
	expect(t, "SessionTitleSet for another scope", must(q.SessionTitleSet(ctx, db, pggen.SessionTitleSetParams{Title: p("Chat"), TitleRank: 1, ID: "s4"})), int64(1))
	expect(t, "SessionTitleOwner", must(q.SessionTitleOwner(ctx, db, pggen.SessionTitleOwnerParams{Title: p("Chat"), UserID: p("u1")})), pggen.SessionTitleOwnerRow{ID: "s1", TitleRank: 0})
	expect(t, "SessionTitlesNumbered", len(must(q.SessionTitlesNumbered(ctx, db, pggen.SessionTitlesNumberedParams{UserID: p("u1"), Base: p("Chat")}))), 2)

	// Activity only moves forward.
	expect(t, "SessionActivityTouch", must(q.SessionActivityTouch(ctx, db, pggen.SessionActivityTouchParams{At: p(now + 5), Description: p("typing"), Provenance: p("ui"), ID: "s1"})), int64(1))
	expect(t, "SessionActivityTouch older", must(q.SessionActivityTouch(ctx, db, pggen.SessionActivityTouchParams{At: p(now + 4), ID: "s1"})), int64(0))
	expect(t, "SessionActivityClearLabels", must(q.SessionActivityClearLabels(ctx, db, "s1")), int64(1))

	// Handoffs.
	expect(t, "SessionHandoffRequest", must(q.SessionHandoffRequest(ctx, db, pggen.SessionHandoffRequestParams{Platform: p("tg"), UpdatedAt: p(now), ID: "s2"})), int64(1))
	expect(t, "SessionHandoffClaim", must(q.SessionHandoffClaim(ctx, db, pggen.SessionHandoffClaimParams{Holder: p("h1"), UpdatedAt: p(now + 1), ID: "s2"})), int64(1))
	expect(t, "SessionHandoffClaim twice", must(q.SessionHandoffClaim(ctx, db, pggen.SessionHandoffClaimParams{Holder: p("h2"), UpdatedAt: p(now + 1), ID: "s2"})), int64(0))
	expect(t, "SessionHandoffFinish", must(q.SessionHandoffFinish(ctx, db, pggen.SessionHandoffFinishParams{State: p("completed"), UpdatedAt: p(now + 2), ID: "s2", Holder: p("h1")})), int64(1))
	expect(t, "SessionHandoffGet", must(q.SessionHandoffGet(ctx, db, "s2")).HandoffState, p("completed"))
	must(q.SessionHandoffRequest(ctx, db, pggen.SessionHandoffRequestParams{Platform: p("tg"), UpdatedAt: p(now + 3), ID: "s2"}))
	must(q.SessionHandoffClaim(ctx, db, pggen.SessionHandoffClaimParams{Holder: p("h1"), UpdatedAt: p(now + 4), ID: "s2"}))
	expect(t, "SessionHandoffReclaimStale", must(q.SessionHandoffReclaimStale(ctx, db, pggen.SessionHandoffReclaimStaleParams{UpdatedAt: p(now + 100), Cutoff: p(now + 50)})), int64(1))

	// Metadata and the compression cooldown (the later deadline wins).
	expect(t, "SessionSetModel", must(q.SessionSetModel(ctx, db, pggen.SessionSetModelParams{Model: p("m2"), ID: "s2"})), int64(1))
	if err := q.ModelSwitchInsert(ctx, db, pggen.ModelSwitchInsertParams{SessionID: "s2", FromModel: p("m1"), ToModel: "m2", AfterMessageID: id3, SwitchedAt: now}); err != nil {
		t.Fatal(err)
	}
	expect(t, "ModelSwitchesBySession", len(must(q.ModelSwitchesBySession(ctx, db, "s2"))), 1)
	expect(t, "SessionSetWorkspace", must(q.SessionSetWorkspace(ctx, db, pggen.SessionSetWorkspaceParams{SetCwd: 1, Cwd: p("/w/proj/sub"), SetBranch: 1, GitBranch: p("main"), ID: "s2"})), int64(1))
	s2 = must(q.SessionGet(ctx, db, "s2"))
	expect(t, "workspace", []*string{s2.Cwd, s2.GitBranch, s2.GitRepoRoot}, []*string{p("/w/proj/sub"), p("main"), nil})
	expect(t, "SessionSetSystemPrompt", must(q.SessionSetSystemPrompt(ctx, db, pggen.SessionSetSystemPromptParams{SystemPrompt: p("be brief"), ID: "s2"})), int64(1))
	must(q.SessionCompressionCooldownSet(ctx, db, pggen.SessionCompressionCooldownSetParams{RetryAfter: now + 1000, Error: p("e1"), ID: "s2"}))
	must(q.SessionCompressionCooldownSet(ctx, db, pggen.SessionCompressionCooldownSetParams{RetryAfter: now + 500, Error: p("e2"), ID: "s2"}))
	expect(t, "SessionCompressionCooldownGet", must(q.SessionCompressionCooldownGet(ctx, db, "s2")), pggen.SessionCompressionCooldownGetRow{CompressionRetryAfter: p(now + 1000), CompressionError: p("e2")})
	expect(t, "SessionCompressionCooldownClear", must(q.SessionCompressionCooldownClear(ctx, db, "s2")), int64(1))

	// Usage.
	usage := pggen.SessionUsageAddParams{InputTokens: 10, OutputTokens: 5, ApiCallCount: 1, EstimatedCostUsd: 0.25, ID: "s2"}
	expect(t, "SessionUsageAdd", must(q.SessionUsageAdd(ctx, db, usage)), int64(1))
	expect(t, "SessionUsageAdd", must(q.SessionUsageAdd(ctx, db, usage)), int64(1))
	expect(t, "SessionUsageGet", must(q.SessionUsageGet(ctx, db, "s2")), pggen.SessionUsageGetRow{InputTokens: 20, OutputTokens: 10, ApiCallCount: 2, EstimatedCostUsd: 0.5})
	expect(t, "SessionUsageSet", must(q.SessionUsageSet(ctx, db, pggen.SessionUsageSetParams{InputTokens: 7, ID: "s4"})), int64(1))
	for _, seen := range []int64{now + 7, now + 3} {
		if err := q.ModelUsageAdd(ctx, db, pggen.ModelUsageAddParams{SessionID: "s2", Model: "m2", Task: "main", InputTokens: 10, ApiCallCount: 1, ActualCostUsd: 0.5, SeenAt: seen}); err != nil {
			t.Fatal(err)
		}
	}
	byModel := must(q.ModelUsageBySession(ctx, db, "s2"))
	expect(t, "ModelUsageBySession", byModel, []pggen.ModelUsageBySessionRow{{Model: "m2", Task: "main", InputTokens: 20, ApiCallCount: 2, ActualCostUsd: 1, FirstSeenAt: now + 7, LastSeenAt: now + 7}})
	expect(t, "UsageTotals", must(q.UsageTotals(ctx, db, pggen.UsageTotalsParams{Since: 0})), pggen.UsageTotalsRow{InputTokens: 27, OutputTokens: 10, ApiCallCount: 2, EstimatedCostUsd: 0.5})
	totals := must(q.ModelUsageTotals(ctx, db, pggen.ModelUsageTotalsParams{Source: p("cli"), Since: now}))
	expect(t, "ModelUsageTotals", totals, []pggen.ModelUsageTotalsRow(asTotalsRows(byModel)))
	byProvider := must(q.UsageByProvider(ctx, db, pggen.UsageByProviderParams{Source: p("cli"), Since: now}))
	expect(t, "UsageByProvider", len(byProvider), 1)
	expect(t, "UsageByProvider", [3]any{byProvider[0].Provider, byProvider[0].InputTokens, byProvider[0].ApiCallCount}, [3]any{"", int64(20), int64(2)})

	// Leases: one holder at a time.
	lock := pggen.CompressionLockInsertParams{SessionID: "s2", Holder: "h1", AcquiredAt: now, ExpiresAt: now + 60_000}
	expect(t, "CompressionLockInsert", must(q.CompressionLockInsert(ctx, db, lock)), int64(1))
	lock.Holder = "h2"
	expect(t, "CompressionLockInsert taken", must(q.CompressionLockInsert(ctx, db, lock)), int64(0))
	expect(t, "CompressionLockGet", must(q.CompressionLockGet(ctx, db, "s2")).Holder, "h1")
	expect(t, "CompressionLockExtend", must(q.CompressionLockExtend(ctx, db, pggen.CompressionLockExtendParams{ExpiresAt: now + 120_000, SessionID: "s2", Holder: "h1"})), int64(1))
	expect(t, "CompressionLockDelete by another", must(q.CompressionLockDelete(ctx, db, pggen.CompressionLockDeleteParams{SessionID: "s2", Holder: "h2"})), int64(0))
	expect(t, "CompressionLockDelete", must(q.CompressionLockDelete(ctx, db, pggen.CompressionLockDeleteParams{SessionID: "s2", Holder: "h1"})), int64(1))
	lease := pggen.TurnLeaseInsertParams{ConversationID: "s1", Holder: "h1", AcquiredAt: now, ExpiresAt: now + 1000}
	expect(t, "TurnLeaseInsert", must(q.TurnLeaseInsert(ctx, db, lease)), int64(1))
	lease.Holder = "h2"
	expect(t, "TurnLeaseInsert taken", must(q.TurnLeaseInsert(ctx, db, lease)), int64(0))
	expect(t, "TurnLeaseGet", must(q.TurnLeaseGet(ctx, db, "s1")).Holder, "h1")
	expect(t, "TurnLeaseExtend", must(q.TurnLeaseExtend(ctx, db, pggen.TurnLeaseExtendParams{ExpiresAt: now + 2000, ConversationID: "s1", Holder: "h1"})), int64(1))
	expect(t, "TurnLeaseDelete by another", must(q.TurnLeaseDelete(ctx, db, pggen.TurnLeaseDeleteParams{ConversationID: "s1", Holder: "h2"})), int64(0))
	expect(t, "TurnLeaseSweep", must(q.TurnLeaseSweep(ctx, db, now+3000)), int64(1))
	expect(t, "TurnLeaseDelete after the sweep", must(q.TurnLeaseDelete(ctx, db, pggen.TurnLeaseDeleteParams{ConversationID: "s1", Holder: "h1"})), int64(0))

	// Meta.
	for _, v := range []string{"v1", "v2"} {
		if err := q.MetaUpsert(ctx, db, pggen.MetaUpsertParams{Key: "k", Value: v, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.MetaInsertIfAbsent(ctx, db, pggen.MetaInsertIfAbsentParams{Key: "k", Value: "v3", UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	expect(t, "MetaGet", must(q.MetaGet(ctx, db, "k")), "v2")
	expect(t, "MetaDelete", must(q.MetaDelete(ctx, db, "k")), int64(1))

	// Export and import.
	page := must(q.SessionExportPage(ctx, db, pggen.SessionExportPageParams{AfterStarted: now, AfterID: "s1", RowLimit: 2}))
	expect(t, "SessionExportPage after s1", []string{page[0].ID, page[1].ID}, []string{"s2", "s3"})
	expect(t, "MessageExportPage", ids(must(q.MessageExportPage(ctx, db, pggen.MessageExportPageParams{SessionID: "s1", AfterID: id1, RowLimit: 10}))), []int64{id2})
	imp := pggen.SessionImportParams{ID: "s9", Source: "import", StartedAt: now - 1000, Title: p("Imported"), InputTokens: 3, Archived: 1}
	expect(t, "SessionImport", must(q.SessionImport(ctx, db, imp)), int64(1))
	expect(t, "SessionImport again", must(q.SessionImport(ctx, db, imp)), int64(0))
	id9 := must(q.MessageImport(ctx, db, pggen.MessageImportParams{SessionID: "s9", Role: "user", Content: "old", State: "active", CreatedAt: now - 999}))
	if err := q.MessageSetOrigin(ctx, db, pggen.MessageSetOriginParams{OriginID: &id1, ID: id9}); err != nil {
		t.Fatal(err)
	}
	mu := pggen.ModelUsageImportParams{SessionID: "s9", Model: "m1", InputTokens: 3, FirstSeenAt: now - 1000, LastSeenAt: now - 999}
	for range 2 {
		if err := q.ModelUsageImport(ctx, db, mu); err != nil {
			t.Fatal(err)
		}
	}
	expect(t, "imported usage counted once", must(q.ModelUsageBySession(ctx, db, "s9"))[0].InputTokens, int64(3))
	expect(t, "imported last_message_at (trigger)", must(q.SessionGet(ctx, db, "s9")).LastMessageAt, p(now-999))

	// Bulk and prune candidates.
	bulk := must(q.SessionBulkCandidates(ctx, db, pggen.SessionBulkCandidatesParams{AfterID: "s3", ArchivedOnly: 0, RowLimit: 10}))
	expect(t, "SessionBulkCandidates after s3", len(bulk), 2)
	expect(t, "archived only", len(must(q.SessionBulkCandidates(ctx, db, pggen.SessionBulkCandidatesParams{ArchivedOnly: 1, RowLimit: 10}))), 1)
	expect(t, "empty and ended only", len(must(q.SessionBulkCandidates(ctx, db, pggen.SessionBulkCandidatesParams{EndedOnly: 1, EmptyOnly: 1, RowLimit: 10}))), 1)
	facts := must(q.SessionBulkFacts(ctx, db, "s1"))
	expect(t, "SessionBulkFacts", []int64{facts.LastAlive, facts.HasMessages, facts.Pinned}, []int64{now + 11, 1, 1})
	prune := must(q.SessionPruneCandidates(ctx, db, pggen.SessionPruneCandidatesParams{Cutoff: p(now + 1_000_000), AfterEnded: p(int64(0)), AfterID: "", RowLimit: 10}))
	expect(t, "SessionPruneCandidates (s1 is pinned)", prune, []pggen.SessionPruneCandidatesRow{{ID: "s4", EndedAt: p(now + 31)}})
	expect(t, "SessionCount", must(q.SessionCount(ctx, db)), int64(5))

	// Sidebar: JSON source lists, the cwd prefix and keyset paging.
	recent := pggen.SessionRecentParams{Sources: p(`["cli"]`), Cwd: p("/w/proj"), IncludeHidden: 1, IncludeChildren: 1, RowLimit: 10}
	rows := must(q.SessionRecent(ctx, db, recent))
	var order []string
	for _, r := range rows {
		order = append(order, r.ID)
	}
	// s2 continues s1 (compression): it carries the conversation's
	// activity, never behind its parent's, and wins the tie by id.
	expect(t, "SessionRecent order (by the conversation's activity, else start)", order, []string{"s4", "s3", "s2", "s1"})
	expect(t, "s2's preview (its copied user turn)", rows[2].Preview, "hello")
	expect(t, "s1's preview (its user turn was retired)", rows[3].Preview, "")
	recent.AfterAt, recent.AfterID = p(rows[1].ActiveAt), rows[1].ID
	expect(t, "SessionRecent second page", len(must(q.SessionRecent(ctx, db, recent))), 2)
	expect(t, "SessionRecent excluding cli", len(must(q.SessionRecent(ctx, db, pggen.SessionRecentParams{ExcludeSources: p(`["cli"]`), IncludeHidden: 1, IncludeChildren: 1, RowLimit: 10}))), 1)
	expect(t, "SessionRecent tips only", len(must(q.SessionRecent(ctx, db, pggen.SessionRecentParams{TipsOnly: 1, IncludeHidden: 1, IncludeChildren: 1, RowLimit: 10}))), 4)
	counts := must(q.SessionRecentCounts(ctx, db, pggen.SessionRecentCountsParams{Sources: p(`["cli","import"]`), IncludeHidden: 1, IncludeChildren: 1}))
	var total int64
	for _, c := range counts {
		total += c.Sessions
	}
	expect(t, "SessionRecentCounts total", total, int64(5))

	// Resolving an id prefix: bytewise ranges.
	insert("sé", nil, nil, nil, nil, now+40)
	expect(t, "SessionIDsInRange", must(q.SessionIDsInRange(ctx, db, pggen.SessionIDsInRangeParams{Lo: "s", Hi: "t", MaxRows: 10})), []string{"s1", "s2", "s3", "s4", "s9", "sé"})
	expect(t, "SessionIDsInRange sé", must(q.SessionIDsInRange(ctx, db, pggen.SessionIDsInRangeParams{Lo: "sé", Hi: "sê", MaxRows: 10})), []string{"sé"})
	// db/resume.go makes hi by raising the prefix's last byte. When that
	// byte is 0xBF (a character ending a code-point block, like "ÿ" =
	// C3 BF) the result is not UTF-8, which PostgreSQL refuses where SQLite
	// compares bytes. The Postgres driver must raise the last code point
	// instead ("sÿ" -> "sĀ"): the same range in UTF-8's byte order.
	var pgErr *pgconn.PgError
	if _, err := q.SessionIDsInRange(ctx, db, pggen.SessionIDsInRangeParams{Lo: "sÿ", Hi: "s\xc3\xc0", MaxRows: 10}); !errors.As(err, &pgErr) || pgErr.Code != "22021" {
		t.Errorf("SessionIDsInRange with a non-UTF-8 bound: %v, want SQLSTATE 22021", err)
	}
	expect(t, "SessionIDsInRange sÿ", must(q.SessionIDsInRange(ctx, db, pggen.SessionIDsInRangeParams{Lo: "sÿ", Hi: "sĀ", MaxRows: 10})), []string{})

	// Rewind.
	expect(t, "MessageRewindFrom", must(q.MessageRewindFrom(ctx, db, pggen.MessageRewindFromParams{SessionID: "s2", FromID: id3})), int64(1))
	if err := q.SessionCountRewind(ctx, db, "s2"); err != nil {
		t.Fatal(err)
	}
	expect(t, "rewind_count", must(q.SessionGet(ctx, db, "s2")).RewindCount, int64(1))

	// Delete: children lose the link, messages go with the session.
	expect(t, "SessionOrphanChildren", must(q.SessionOrphanChildren(ctx, db, p("s1"))), int64(2))
	expect(t, "SessionDelete", must(q.SessionDelete(ctx, db, "s1")), int64(1))
	if _, err := q.MessageGet(ctx, db, id2); !errors.Is(err, pgx.ErrNoRows) {
		t.Errorf("a deleted session's message: %v, want no rows", err)
	}

	// Importing another store's sessions (package hermes): the session as
	// the source had it, once; a refresh only ends it once and only grows
	// its usage.
	foreign := pggen.ForeignSessionInsertParams{
		ID: "h1", Source: "hermes", UserID: p("u1"), Model: p("m1"), Cwd: p("/h/repo"), GitRepoRoot: p("/h"),
		StartedAt: now + 50, Title: p("From Hermes"), InputTokens: 10, ApiCallCount: 2, EstimatedCostUsd: 0.5,
		BillingProvider: p("openrouter"), RewindCount: 1,
	}
	expect(t, "ForeignSessionInsert", must(q.ForeignSessionInsert(ctx, db, foreign)), int64(1))
	foreign.Title = p("Changed")
	expect(t, "ForeignSessionInsert of an existing id", must(q.ForeignSessionInsert(ctx, db, foreign)), int64(0))
	expect(t, "ForeignSessionInsert kept the first title", must(q.SessionGet(ctx, db, "h1")).Title, p("From Hermes"))
	refresh := pggen.ForeignSessionRefreshParams{
		EndedAt: p(now + 60), EndReason: p("user_exit"), InputTokens: 5, OutputTokens: 7, ApiCallCount: 3,
		EstimatedCostUsd: 0.25, ActualCostUsd: 1, RewindCount: 0, ID: "h1",
	}
	if err := q.ForeignSessionRefresh(ctx, db, refresh); err != nil {
		t.Fatal(err)
	}
	refresh.EndedAt, refresh.EndReason = p(now+70), p("other")
	if err := q.ForeignSessionRefresh(ctx, db, refresh); err != nil {
		t.Fatal(err)
	}
	h1 := must(q.SessionGet(ctx, db, "h1"))
	expect(t, "ForeignSessionRefresh ends once", []any{h1.EndedAt, h1.EndReason, h1.RewindCount}, []any{p(now + 60), p("user_exit"), int64(1)})
	expect(t, "ForeignSessionRefresh usage (GREATEST)", must(q.SessionUsageGet(ctx, db, "h1")),
		pggen.SessionUsageGetRow{InputTokens: 10, OutputTokens: 7, ApiCallCount: 3, EstimatedCostUsd: 0.5, ActualCostUsd: 1})
	if _, err := q.ImportedSessionGet(ctx, db, "h1"); !errors.Is(err, pgx.ErrNoRows) {
		t.Errorf("ImportedSessionGet before a put: %v, want no rows", err)
	}
	must(0, q.ImportedSessionPut(ctx, db, pggen.ImportedSessionPutParams{SessionID: "h1", Origin: "hermes:/a/state.db", Fingerprint: "f1", At: now}))
	expect(t, "ImportedSessionGet", must(q.ImportedSessionGet(ctx, db, "h1")), pggen.ImportedSessionGetRow{Origin: "hermes:/a/state.db", Fingerprint: "f1"})
	must(0, q.ImportedSessionPut(ctx, db, pggen.ImportedSessionPutParams{SessionID: "h1", Origin: "hermes:/b/state.db", Fingerprint: "f2", At: now + 1}))
	expect(t, "ImportedSessionPut again (new fingerprint, origin kept)", must(q.ImportedSessionGet(ctx, db, "h1")), pggen.ImportedSessionGetRow{Origin: "hermes:/a/state.db", Fingerprint: "f2"})
	idH := must(q.ForeignMessageInsert(ctx, db, pggen.ForeignMessageInsertParams{
		SessionID: "h1", Role: "user", Content: "from hermes", State: "active", IdempotencyKey: p("hermes:1"), CreatedAt: now + 51,
	}))
	expect(t, "ForeignMessageInsert", must(q.MessageGet(ctx, db, idH)).Content, "from hermes")
	if _, err := q.ForeignMessageInsert(ctx, db, pggen.ForeignMessageInsertParams{
		SessionID: "h1", Role: "user", Content: "twice", State: "active", IdempotencyKey: p("hermes:1"), CreatedAt: now + 52,
	}); !isUniqueViolation(err) {
		t.Errorf("ForeignMessageInsert of key hermes:1 twice: %v, want a unique violation", err)
	}
	key := pggen.MessageStateByKeyParams{SessionID: "h1", IdempotencyKey: p("hermes:1")}
	expect(t, "MessageStateByKey", must(q.MessageStateByKey(ctx, db, key)), pggen.MessageStateByKeyRow{ID: idH, State: "active"})
	must(0, q.MessageSetState(ctx, db, pggen.MessageSetStateParams{State: "compacted", ID: idH}))
	expect(t, "MessageSetState", must(q.MessageStateByKey(ctx, db, key)), pggen.MessageStateByKeyRow{ID: idH, State: "compacted"})
	if _, err := q.MessageStateByKey(ctx, db, pggen.MessageStateByKeyParams{SessionID: "s2", IdempotencyKey: p("hermes:1")}); !errors.Is(err, pgx.ErrNoRows) {
		t.Errorf("MessageStateByKey in another session: %v, want no rows", err)
	}
	expect(t, "MessageStatesByKeys", must(q.MessageStatesByKeys(ctx, db, pggen.MessageStatesByKeysParams{SessionID: "h1", Keys: `["hermes:0","hermes:1","é"]`})),
		[]pggen.MessageStatesByKeysRow{{IdempotencyKey: p("hermes:1"), ID: idH, State: "compacted"}})
	expect(t, "MessageStatesByKeys in another session", len(must(q.MessageStatesByKeys(ctx, db, pggen.MessageStatesByKeysParams{SessionID: "s2", Keys: `["hermes:1"]`}))), 0)
	if _, err := pool.Exec(ctx, "UPDATE messages SET platform_message_id = 'tg-h' WHERE id = $1", idH); err != nil {
		t.Fatal(err)
	}
	expect(t, "MessagePlatformIDsHeld", must(q.MessagePlatformIDsHeld(ctx, db, pggen.MessagePlatformIDsHeldParams{SessionID: "h1", Pids: `["tg-x","tg-h"]`})), []*string{p("tg-h")})
	expect(t, "MessagePlatformIDsHeld of none", len(must(q.MessagePlatformIDsHeld(ctx, db, pggen.MessagePlatformIDsHeldParams{SessionID: "h1", Pids: `[]`}))), 0)
	put := pggen.ForeignModelUsagePutParams{SessionID: "h1", Model: "m1", Task: "main", InputTokens: 10, ApiCallCount: 1, FirstSeenAt: now + 51, LastSeenAt: now + 52, BillingProvider: "openrouter"}
	must(0, q.ForeignModelUsagePut(ctx, db, put))
	put.InputTokens, put.FirstSeenAt, put.LastSeenAt, put.CostStatus = 12, now+53, now+50, p("actual")
	must(0, q.ForeignModelUsagePut(ctx, db, put))
	put.BillingProvider, put.InputTokens = "direct", 5
	must(0, q.ForeignModelUsagePut(ctx, db, put))
	expect(t, "ForeignModelUsagePut twice (set, not added; seen range widened only), another route its own row", must(q.ModelUsageBySession(ctx, db, "h1")),
		[]pggen.ModelUsageBySessionRow{
			{Model: "m1", Task: "main", BillingProvider: "direct", CostStatus: p("actual"), InputTokens: 5, ApiCallCount: 1, FirstSeenAt: now + 53, LastSeenAt: now + 50},
			{Model: "m1", Task: "main", BillingProvider: "openrouter", CostStatus: p("actual"), InputTokens: 12, ApiCallCount: 1, FirstSeenAt: now + 51, LastSeenAt: now + 52}})

	// Filling what a session lacks, never what it has. Sessions now: s2
	// (u1, /w/proj/sub), s3 (u1, /w/proj), s4 and sé (no user, /w/proj),
	// s9 (no cwd), h1 (u1, /h/repo, root /h, model m1, billed).
	expect(t, "SessionModelFill", must(q.SessionModelFill(ctx, db, pggen.SessionModelFillParams{Model: p("m3"), ID: "s3"})), int64(1))
	expect(t, "SessionModelFill over a set model", must(q.SessionModelFill(ctx, db, pggen.SessionModelFillParams{Model: p("m4"), ID: "s3"})), int64(0))
	expect(t, "SessionModelFill kept", must(q.SessionGet(ctx, db, "s3")).Model, p("m3"))
	if _, err := pool.Exec(ctx, "UPDATE sessions SET model = '' WHERE id = 's4'"); err != nil {
		t.Fatal(err)
	}
	expect(t, "SessionModelFill of an empty model", must(q.SessionModelFill(ctx, db, pggen.SessionModelFillParams{Model: p("m3"), ID: "s4"})), int64(1))
	route := func(id string) []*string {
		s := must(q.SessionGet(ctx, db, id))
		return []*string{s.BillingProvider, s.BillingBaseUrl, s.BillingMode}
	}
	expect(t, "SessionBillingRouteSet", must(q.SessionBillingRouteSet(ctx, db, pggen.SessionBillingRouteSetParams{BillingProvider: p("p1"), BillingBaseUrl: p("https://p1"), BillingMode: p("api"), ID: "s3"})), int64(1))
	expect(t, "route set whole", route("s3"), []*string{p("p1"), p("https://p1"), p("api")})
	expect(t, "SessionBillingRouteSet", must(q.SessionBillingRouteSet(ctx, db, pggen.SessionBillingRouteSetParams{BillingProvider: p("p2"), ID: "s3"})), int64(1))
	expect(t, "route set", route("s3"), []*string{p("p2"), nil, nil})
	expect(t, "SessionBillingRouteSet on a missing session", must(q.SessionBillingRouteSet(ctx, db, pggen.SessionBillingRouteSetParams{BillingProvider: p("p2"), ID: "ghost"})), int64(0))
	expect(t, "SessionCwdsOfUser (distinct, newest start first)", must(q.SessionCwdsOfUser(ctx, db, pggen.SessionCwdsOfUserParams{UserID: p("u1"), MaxRows: 10})),
		[]*string{p("/h/repo"), p("/w/proj"), p("/w/proj/sub")})
	expect(t, "SessionCwdsOfUser limited", must(q.SessionCwdsOfUser(ctx, db, pggen.SessionCwdsOfUserParams{UserID: p("u1"), MaxRows: 1})), []*string{p("/h/repo")})
	expect(t, "SessionCwdsOfUser of no user", must(q.SessionCwdsOfUser(ctx, db, pggen.SessionCwdsOfUserParams{UserID: p(""), MaxRows: 10})), []*string{p("/w/proj")})
	noRoot := pggen.SessionCwdsWithoutRepoRootParams{AfterCwd: p(""), MaxRows: 10}
	expect(t, "SessionCwdsWithoutRepoRoot", must(q.SessionCwdsWithoutRepoRoot(ctx, db, noRoot)), []*string{p("/w/proj"), p("/w/proj/sub")})
	expect(t, "SessionCwdsWithoutRepoRoot next page", must(q.SessionCwdsWithoutRepoRoot(ctx, db, pggen.SessionCwdsWithoutRepoRootParams{AfterCwd: p("/w/proj"), MaxRows: 1})), []*string{p("/w/proj/sub")})
	expect(t, "SessionRepoRootFill", must(q.SessionRepoRootFill(ctx, db, pggen.SessionRepoRootFillParams{GitRepoRoot: p("/w"), Cwd: p("/w/proj")})), int64(3))
	expect(t, "SessionRepoRootFill again", must(q.SessionRepoRootFill(ctx, db, pggen.SessionRepoRootFillParams{GitRepoRoot: p("/x"), Cwd: p("/w/proj")})), int64(0))
	expect(t, "SessionRepoRootFill over a set root", must(q.SessionRepoRootFill(ctx, db, pggen.SessionRepoRootFillParams{GitRepoRoot: p("/x"), Cwd: p("/h/repo")})), int64(0))
	expect(t, "roots kept", []*string{must(q.SessionGet(ctx, db, "s4")).GitRepoRoot, must(q.SessionGet(ctx, db, "h1")).GitRepoRoot}, []*string{p("/w"), p("/h")})
	expect(t, "SessionCwdsWithoutRepoRoot after the fill", must(q.SessionCwdsWithoutRepoRoot(ctx, db, noRoot)), []*string{p("/w/proj/sub")})

	// An id holding a needle, literally (a LIKE would take _ for any
	// character), newest start first.
	expect(t, "SessionIDsContaining s", must(q.SessionIDsContaining(ctx, db, pggen.SessionIDsContainingParams{Needle: "s", MaxRows: 3})), []string{"sé", "s4", "s3"})
	expect(t, "SessionIDsContaining é", must(q.SessionIDsContaining(ctx, db, pggen.SessionIDsContainingParams{Needle: "é", MaxRows: 10})), []string{"sé"})
	expect(t, "SessionIDsContaining _", must(q.SessionIDsContaining(ctx, db, pggen.SessionIDsContainingParams{Needle: "_", MaxRows: 10})), []string{})

	// The display transcript, the picker's observations, a fork, a scrub
	// and the compression fallback streak (issues 34 and 35).
	insert("dr", nil, nil, nil, nil, now+100)
	m1 := must(q.MessageInsert(ctx, db, pggen.MessageInsertParams{SessionID: "dr", Role: "user", Content: "keep <memory-context>x</memory-context> this", CreatedAt: now + 101}))
	m2 := must(q.MessageInsert(ctx, db, pggen.MessageInsertParams{SessionID: "dr", Role: "assistant", Content: "ok", CreatedAt: now + 102}))
	expect(t, "MessageLastID", must(q.MessageLastID(ctx, db, "dr")), m2)
	held := must(q.MessagesHoldingText(ctx, db, pggen.MessagesHoldingTextParams{SessionID: "dr", Needle: "<memory-context>", PartsNeedle: "<memory-context>"}))
	expect(t, "MessagesHoldingText", len(held) == 1 && held[0].ID == m1, true)
	if err := q.MessageSetContent(ctx, db, pggen.MessageSetContentParams{Content: "keep  this", ID: m1}); err != nil {
		t.Fatal(err)
	}
	expect(t, "MessagesHoldingText after MessageSetContent", len(must(q.MessagesHoldingText(ctx, db, pggen.MessagesHoldingTextParams{SessionID: "dr", Needle: "<memory-context>", PartsNeedle: "<memory-context>"}))), 0)
	before := must(q.SessionDisplayRevision(ctx, db, "dr")).DisplayRevision
	if err := q.SessionBumpDisplayRevision(ctx, db, "dr"); err != nil {
		t.Fatal(err)
	}
	expect(t, "SessionBumpDisplayRevision", must(q.SessionDisplayRevision(ctx, db, "dr")).DisplayRevision, before+1)
	expect(t, "CommandReceiptInsert", must(q.CommandReceiptInsert(ctx, db, pggen.CommandReceiptInsertParams{ReceiptID: "r1", SessionID: "dr", Command: "/model", Output: "m2", AfterMessageID: m2, CreatedAt: now + 103})), int64(1))
	expect(t, "CommandReceiptGet", must(q.CommandReceiptGet(ctx, db, "r1")).Command, "/model")
	expect(t, "CommandReceiptList", len(must(q.CommandReceiptList(ctx, db, "dr"))), 1)
	expect(t, "CommandReceiptDeleteSession", must(q.CommandReceiptDeleteSession(ctx, db, "dr")), int64(1))
	expect(t, "SessionCompressionFellBack", must(q.SessionCompressionFellBack(ctx, db, "dr")), int64(1))
	if err := q.SessionCompressionStreakReset(ctx, db, "dr"); err != nil {
		t.Fatal(err)
	}
	byStart := must(q.SessionRecentByStart(ctx, db, pggen.SessionRecentByStartParams{IncludeHidden: 1, IncludeChildren: 1, RowLimit: 100}))
	expect(t, "SessionRecentByStart lists dr", slices.ContainsFunc(byStart, func(r pggen.SessionRecentByStartRow) bool { return r.ID == "dr" }), true)
	turn := p("t1")
	if err := q.TurnObservationAdmit(ctx, db, pggen.TurnObservationAdmitParams{ConversationID: "dr", Holder: "h", AdmittedAt: now + 104}); err != nil {
		t.Fatal(err)
	}
	if err := q.TurnObservationBegin(ctx, db, pggen.TurnObservationBeginParams{ConversationID: "dr", Holder: "h", AdmittedAt: now + 104, TurnID: turn}); err != nil {
		t.Fatal(err)
	}
	expect(t, "TurnObservationOpenAttention", must(q.TurnObservationOpenAttention(ctx, db, pggen.TurnObservationOpenAttentionParams{AttentionKind: p("approval"), AttentionRequestID: p("a1"), AttentionOpenedAt: p(now + 105), ConversationID: "dr", TurnID: turn})), int64(1))
	expect(t, "TurnObservationResolveAttention", must(q.TurnObservationResolveAttention(ctx, db, pggen.TurnObservationResolveAttentionParams{ConversationID: "dr", TurnID: turn, AttentionRequestID: p("a1")})), int64(1))
	expect(t, "TurnObservationFinish", must(q.TurnObservationFinish(ctx, db, pggen.TurnObservationFinishParams{Result: p("complete"), FinishedAt: p(now + 106), ConversationID: "dr", TurnID: turn})), int64(1))
	expect(t, "TurnObservationFinish twice", must(q.TurnObservationFinish(ctx, db, pggen.TurnObservationFinishParams{Result: p("error"), FinishedAt: p(now + 107), ConversationID: "dr", TurnID: turn})), int64(0))
	expect(t, "TurnObservationGet", must(q.TurnObservationGet(ctx, db, "dr")).Result, p("complete"))
	expect(t, "SessionAutoArchive", must(q.SessionAutoArchive(ctx, db, "dr")), int64(1))
	expect(t, "SessionAutoArchive of an archived session", must(q.SessionAutoArchive(ctx, db, "dr")), int64(0))
	expect(t, "SessionReactivate", must(q.SessionReactivate(ctx, db, "dr")), int64(1))
	expect(t, "SessionReactivate of a live session", must(q.SessionReactivate(ctx, db, "dr")), int64(0))
	if err := q.SessionConversationActivitySet(ctx, db, pggen.SessionConversationActivitySetParams{At: p(now + 200), ID: "dr"}); err != nil {
		t.Fatal(err)
	}
	expect(t, "SessionConversationActivitySet", must(q.SessionGet(ctx, db, "dr")).ConversationActiveAt, p(now+200))
	expect(t, "DelegationTreeRoot", must(q.DelegationTreeRoot(ctx, db, "dr")), "dr")
	expect(t, "DelegationTreeMembers", must(q.DelegationTreeMembers(ctx, db, "dr")), []string{"dr"})
	expect(t, "DelegationTreeUsage", must(q.DelegationTreeUsage(ctx, db, "dr")).InputTokens, int64(0))
	expect(t, "DelegationTreeModelUsage", len(must(q.DelegationTreeModelUsage(ctx, db, "dr"))), 0)
	expect(t, "MessageCallsBefore (no call holds the id)", len(must(q.MessageCallsBefore(ctx, db, pggen.MessageCallsBeforeParams{Position: m2, Needle: `"id":"none"`}))), 0)
	expect(t, "MessageRetireActive", must(q.MessageRetireActive(ctx, db, "dr")), int64(2))
	expect(t, "MessageDeleteSession", must(q.MessageDeleteSession(ctx, db, "dr")), int64(2))

	// Every generated query ran, and the server accepted it.
	var missing []string
	queries := reflect.TypeOf(q)
	for i := range queries.NumMethod() {
		if name := queries.Method(i).Name; db.ran[name] == 0 {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("pggen queries never run on the server: %v", missing)
	}
	t.Logf("%d of %d generated queries ran on PostgreSQL", len(db.ran), queries.NumMethod())
}

// asTotalsRows converts one session's usage rows into the totals a filter
// selecting only that session must give (the two share their columns).
func asTotalsRows(rows []pggen.ModelUsageBySessionRow) []pggen.ModelUsageTotalsRow {
	out := make([]pggen.ModelUsageTotalsRow, len(rows))
	for i, r := range rows {
		out[i] = pggen.ModelUsageTotalsRow{Model: r.Model, Task: r.Task, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
			CacheReadTokens: r.CacheReadTokens, CacheWriteTokens: r.CacheWriteTokens, ReasoningTokens: r.ReasoningTokens,
			ApiCallCount: r.ApiCallCount, EstimatedCostUsd: r.EstimatedCostUsd, ActualCostUsd: r.ActualCostUsd,
			FirstSeenAt: r.FirstSeenAt, LastSeenAt: r.LastSeenAt}
	}
	return out
}
