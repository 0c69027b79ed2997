package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/sessiondb/sessiondb/db"
)

func runInit(ctx context.Context, e *env, args []string) error {
	if _, err := e.parseArgs(flag.NewFlagSet("init", flag.ContinueOnError), args, 0, 0); err != nil {
		return err
	}
	if _, err := e.open(ctx); err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, map[string]string{"path": e.opened.where})
	}
	_, err := fmt.Fprintln(e.stdout, e.opened.where)
	return err
}

func runSession(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("session: expected new, show or end")
	}
	switch args[0] {
	case "new":
		return runSessionNew(ctx, e, args[1:])
	case "show":
		return runSessionShow(ctx, e, args[1:])
	case "end":
		return runSessionEnd(ctx, e, args[1:])
	}
	return usagef("session: unknown subcommand %q (expected new, show or end)", args[0])
}

func runSessionNew(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("session new", flag.ContinueOnError)
	var n db.NewSession
	fs.StringVar(&n.ID, "id", "", "session id (default: generated)")
	fs.StringVar(&n.Source, "source", "cli", "where the session comes from")
	fs.StringVar(&n.Title, "title", "", "title, unique per user (sessions without a user share one scope)")
	fs.StringVar(&n.ParentID, "parent", "", "parent session id")
	kind := fs.String("kind", "", "what the session is to its parent: branch, delegate, reset, tool")
	fs.StringVar(&n.Model, "model", "", "model name")
	if _, err := e.parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	n.Kind = db.ChildKind(*kind)
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	sess, err := s.CreateSession(ctx, n)
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, toSessionJSON(sess))
	}
	_, err = fmt.Fprintln(e.stdout, sess.ID)
	return err
}

func runSessionShow(ctx context.Context, e *env, args []string) error {
	s, id, err := openNamedSession(ctx, e, "session show", args)
	if err != nil {
		return err
	}
	sess, err := s.Session(ctx, id)
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, toSessionJSON(sess))
	}
	if err := printSession(e.stdout, sess); err != nil || sess.MessageCount == 0 {
		return err
	}
	// The last turns, for a look at where it stands; messages pages
	// through them all.
	last, err := s.Messages(ctx, id, db.MessageQuery{NewestFirst: true, Limit: showLastMessages})
	if err != nil {
		return err
	}
	slices.Reverse(last)
	head := fmt.Sprintf("\nthe last %d of %s (all of them: sessiondb messages %s):\n", len(last), plural(sess.MessageCount, "message"), oneLine(id))
	if int64(len(last)) == sess.MessageCount {
		head = fmt.Sprintf("\n%s:\n", plural(sess.MessageCount, "message"))
	}
	if _, err := io.WriteString(e.stdout, head); err != nil {
		return err
	}
	return printMessages(e.stdout, last)
}

// showLastMessages is how many of a session's messages session show
// prints after its details.
const showLastMessages = 5

func runSessionEnd(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("session end", flag.ContinueOnError)
	reason := fs.String("reason", "", "why the session ended (required; the first reason wins)")
	pos, err := e.parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *reason == "" {
		return usagef("session end: --reason is required")
	}
	s, err := e.openExisting(ctx)
	if err != nil {
		return err
	}
	ended, err := s.EndSession(ctx, pos[0], *reason)
	if err != nil {
		return err
	}
	sess, err := s.Session(ctx, pos[0])
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, toSessionJSON(sess))
	}
	if !ended {
		_, err = fmt.Fprintf(e.stdout, "already ended (%s)\n", sess.EndReason)
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "ended (%s)\n", sess.EndReason)
	return err
}

func runSessions(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("sessions", flag.ContinueOnError)
	var f db.SessionFilter
	fs.StringVar(&f.Source, "source", "", "only this source")
	fs.StringVar(&f.ParentID, "parent", "", "only children of this session")
	live := fs.Bool("live", false, "only sessions not ended")
	ended := fs.Bool("ended", false, "only ended sessions")
	fs.IntVar(&f.Limit, "limit", 50, "at most `N` sessions (max 1000)")
	fs.IntVar(&f.Offset, "offset", 0, "skip `N` sessions")
	all := fs.Bool("all", false, "every session from --offset on, fetched in pages (--limit is ignored)")
	if _, err := e.parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	switch {
	case *live && *ended:
		return usagef("sessions: --live and --ended exclude each other")
	case *live:
		f.Ended = new(false)
	case *ended:
		f.Ended = new(true)
	}
	s, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	if *all {
		f.Limit = maxSessionPage
		out := &jsonStream{w: e.stdout}
		err := streamPages(f.Limit, func(prev []db.Session) ([]db.Session, error) {
			f.Offset += len(prev)
			return s.ListSessions(ctx, f)
		}, func(page []db.Session, first bool) error {
			if e.json {
				for _, x := range page {
					out.add(toSessionJSON(x))
				}
				return out.err
			}
			return e.fitted(func(w io.Writer) error { return printSessionTable(w, page, first) })
		})
		if err != nil || !e.json {
			return err
		}
		return out.close()
	}
	f.Limit = min(cmp.Or(f.Limit, 50), maxSessionPage)
	ss, err := s.ListSessions(ctx, f)
	if err != nil {
		return err
	}
	if e.json {
		err = writeJSON(e.stdout, mapAll(ss, toSessionJSON))
	} else {
		err = e.fitted(func(w io.Writer) error { return printSessions(w, ss) })
	}
	if err != nil || len(ss) < f.Limit {
		return err
	}
	next := f
	next.Offset, next.Limit = f.Offset+len(ss), 1
	if probe, err := s.ListSessions(ctx, next); err != nil || len(probe) == 0 {
		return err
	}
	c := cursorOffset(next.Offset)
	if f.Source == "" && f.ParentID == "" && f.Ended == nil { // counted cheaply
		if n := e.sessionCount(ctx); n >= 0 {
			c.Remaining = n - int64(next.Offset)
		}
	}
	return e.printMore("sessions", c)
}

// maxSessionPage and maxMessagePage are the library's largest pages.
const (
	maxSessionPage = 1000
	maxMessagePage = 100000
)

func runAppend(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("append", flag.ContinueOnError)
	var m db.NewMessage
	role := fs.String("role", "", "system, user, assistant, tool or note (a note is kept with the session, never given to a model) (required)")
	content := fs.String("content", "", "message text")
	contentFile := fs.String("content-file", "", "read the text from `FILE` (- for standard input)")
	fs.StringVar(&m.ToolName, "tool-name", "", "tool name (for role tool)")
	fs.StringVar(&m.ToolCallID, "tool-call-id", "", "the tool call this message answers")
	fs.StringVar(&m.IdempotencyKey, "key", "", "idempotency key: appending the same key again prints the first id and inserts nothing")
	fs.StringVar(&m.Model, "model", "", "the model that wrote the message")
	fs.StringVar(&m.PlatformMessageID, "platform-id", "", "the chat platform's message id: a re-delivery prints the first id and inserts nothing")
	fs.StringVar(&m.Metadata, "metadata", "", "a JSON object kept with the message")
	createdAt := fs.String("created-at", "", "when the message was said (RFC 3339; default now)")
	partsFile := fs.String("parts-file", "", "read the content as parts, a JSON array, from `FILE` (- for standard input)")
	pos, err := e.parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	contentSet := false
	fs.Visit(func(f *flag.Flag) { contentSet = contentSet || f.Name == "content" })
	switch {
	case *role == "":
		return usagef("append: --role is required")
	case contentSet && *contentFile != "":
		return usagef("append: give --content or --content-file, not both")
	case !contentSet && *contentFile == "" && *partsFile == "":
		return usagef("append: --content, --content-file or --parts-file is required")
	case *contentFile == "-" && *partsFile == "-":
		return usagef("append: only one of --content-file and --parts-file can read standard input")
	}
	m.Role, m.Content = db.Role(*role), *content
	if *contentFile != "" {
		b, err := readContent(e.stdin, *contentFile)
		if err != nil {
			return err
		}
		m.Content = string(b)
	}
	if *partsFile != "" {
		b, err := readContent(e.stdin, *partsFile)
		if err != nil {
			return err
		}
		if m.Parts, err = decodeParts(b); err != nil {
			return err
		}
	}
	if *createdAt != "" {
		if m.CreatedAt, err = time.Parse(time.RFC3339Nano, *createdAt); err != nil {
			return usagef("append: --created-at %q is not an RFC 3339 time (2026-11-02T15:04:05Z)", *createdAt)
		}
	}
	s, err := e.openExisting(ctx)
	if err != nil {
		return err
	}
	id, err := s.AppendMessage(ctx, pos[0], m)
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, map[string]int64{"id": id})
	}
	_, err = fmt.Fprintln(e.stdout, id)
	return err
}

// decodeParts reads a JSON array of parts in the form messages --json
// prints them, refusing fields a part does not have.
func decodeParts(b []byte) ([]db.Part, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var parts []db.Part
	if err := d.Decode(&parts); err != nil {
		return nil, usagef("append: --parts-file is not a JSON array of parts: %v", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, usagef("append: --parts-file has more than one JSON array of parts")
	}
	return parts, nil
}

func readContent(stdin io.Reader, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read --content-file: %w", err)
	}
	return b, nil
}

func runMessages(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("messages", flag.ContinueOnError)
	var q db.MessageQuery
	fs.Int64Var(&q.AfterID, "after", 0, "only messages with id greater than `ID`")
	fs.Int64Var(&q.BeforeID, "before", 0, "only messages with id less than `ID` (the next page of --newest-first)")
	fs.IntVar(&q.Limit, "limit", 1000, "at most `N` messages (max 100000)")
	fs.BoolVar(&q.NewestFirst, "newest-first", false, "newest first")
	fs.BoolVar(&q.IncludeRewound, "include-rewound", false, "include rewound messages")
	all := fs.Bool("all", false, "every message (after --after, before --before), fetched in pages (--limit is ignored)")
	pos, err := e.parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	s, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	id, err := s.ResolveSessionID(ctx, pos[0]) // an id, or a unique prefix of one
	if err != nil {
		return err
	}
	// advance moves q past a page: ids only grow, so the cursor is the
	// last id shown, in whichever direction the listing runs.
	advance := func(q *db.MessageQuery, page []db.Message) {
		if len(page) == 0 {
			return
		}
		if last := page[len(page)-1].ID; q.NewestFirst {
			q.BeforeID = last
		} else {
			q.AfterID = last
		}
	}
	if *all {
		q.Limit = 1000
		out := &jsonStream{w: e.stdout}
		err := streamSeq(q.Limit, s.AllMessages(ctx, id, q), func(page []db.Message, _ bool) error {
			if e.json {
				for _, m := range page {
					out.add(toMessageJSON(m))
				}
				return out.err
			}
			return printMessages(e.stdout, page)
		})
		if err != nil || !e.json {
			return err
		}
		return out.close()
	}
	q.Limit = min(cmp.Or(q.Limit, 1000), maxMessagePage)
	ms, err := s.Messages(ctx, id, q)
	if err != nil {
		return err
	}
	if e.json {
		err = writeJSON(e.stdout, mapAll(ms, toMessageJSON))
	} else {
		err = printMessages(e.stdout, ms)
	}
	if err != nil || len(ms) < q.Limit {
		return err
	}
	next := q
	advance(&next, ms)
	next.Limit = 1
	if probe, err := s.Messages(ctx, id, next); err != nil || len(probe) == 0 {
		return err
	}
	if q.NewestFirst {
		return e.printMore("messages", cursorBefore(next.BeforeID))
	}
	return e.printMore("messages", cursorAfter(next.AfterID))
}

func runMeta(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("meta: expected get or set")
	}
	fs := flag.NewFlagSet("meta "+args[0], flag.ContinueOnError)
	switch args[0] {
	case "get":
		pos, err := e.parseArgs(fs, args[1:], 1, 1)
		if err != nil {
			return err
		}
		s, err := e.openRead(ctx)
		if err != nil {
			return err
		}
		v, err := s.Meta(ctx, pos[0])
		if err != nil {
			return err
		}
		if e.json {
			return writeJSON(e.stdout, map[string]string{"key": pos[0], "value": v})
		}
		_, err = fmt.Fprintln(e.stdout, v)
		return err
	case "set":
		pos, err := e.parseArgs(fs, args[1:], 2, 2)
		if err != nil {
			return err
		}
		s, err := e.open(ctx)
		if err != nil {
			return err
		}
		return s.SetMeta(ctx, pos[0], pos[1])
	}
	return usagef("meta: unknown subcommand %q (expected get or set)", args[0])
}
