package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/store"
)

func runLineage(ctx context.Context, e *env, args []string) error {
	pos, err := e.parseArgs(flag.NewFlagSet("lineage", flag.ContinueOnError), args, 1, 1)
	if err != nil {
		return err
	}
	s, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	chain, err := s.Lineage(ctx, pos[0])
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, mapAll(chain, toSessionJSON))
	}
	return e.fitted(func(w io.Writer) error { return printSessions(w, chain) })
}

func runConversation(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("conversation", flag.ContinueOnError)
	var o db.ConversationOptions
	fs.BoolVar(&o.Lineage, "lineage", false, "the whole lineage, root to tip, each turn once")
	fs.BoolVar(&o.IncludeCompacted, "compacted", false, "include rows summarised away by compression")
	fs.BoolVar(&o.IncludeNotes, "notes", false, "include the notes kept with it (a model is never given them)")
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
	ms, err := s.Conversation(ctx, id, o)
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, mapAll(ms, toMessageJSON))
	}
	return printMessages(e.stdout, ms)
}

func runRewind(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("rewind", flag.ContinueOnError)
	to := fs.Int64("to", 0, "the user message `ID` to rewind to (it is rewound too)")
	expect := fs.String("expect-content", "", "refuse unless the target's content is exactly `TEXT`")
	var o db.RewindOptions
	fs.StringVar(&o.LeaseHolder, "holder", "", "your lease holder: a lease you hold does not block the rewind")
	pos, err := e.parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *to <= 0 {
		return usagef("rewind: --to MESSAGE_ID is required")
	}
	if isSet(fs, "expect-content") {
		o.ExpectedContent = expect
	}
	s, err := e.openExisting(ctx)
	if err != nil {
		return err
	}
	res, err := s.RewindTo(ctx, pos[0], *to, o)
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, map[string]any{"rewound": res.Rewound, "head_id": res.HeadID,
			"target": toMessageJSON(res.Target)})
	}
	_, err = fmt.Fprintf(e.stdout, "rewound %s; the conversation now ends at #%d\n", plural(int64(res.Rewound), "message"), res.HeadID)
	return err
}

// flagSetters are the flag command's verbs.
var flagSetters = map[string]func(s *store.Store, ctx context.Context, id string) (int, error){
	"archive": func(s *store.Store, ctx context.Context, id string) (int, error) { return s.SetArchived(ctx, id, true) },
	"unarchive": func(s *store.Store, ctx context.Context, id string) (int, error) {
		return s.SetArchived(ctx, id, false)
	},
	"pin":    func(s *store.Store, ctx context.Context, id string) (int, error) { return s.SetPinned(ctx, id, true) },
	"unpin":  func(s *store.Store, ctx context.Context, id string) (int, error) { return s.SetPinned(ctx, id, false) },
	"hide":   func(s *store.Store, ctx context.Context, id string) (int, error) { return s.SetHidden(ctx, id, true) },
	"unhide": func(s *store.Store, ctx context.Context, id string) (int, error) { return s.SetHidden(ctx, id, false) },
	"read":   func(s *store.Store, ctx context.Context, id string) (int, error) { return s.MarkRead(ctx, id, true) },
	"unread": func(s *store.Store, ctx context.Context, id string) (int, error) { return s.MarkRead(ctx, id, false) },
}

func runFlag(ctx context.Context, e *env, args []string) error {
	pos, err := e.parseArgs(flag.NewFlagSet("flag", flag.ContinueOnError), args, 2, 2)
	if err != nil {
		return err
	}
	set, ok := flagSetters[pos[1]]
	if !ok {
		return usagef("flag: unknown flag %q (archive, unarchive, pin, unpin, hide, unhide, read, unread)", pos[1])
	}
	s, err := e.openExisting(ctx)
	if err != nil {
		return err
	}
	n, err := set(s, ctx, pos[0])
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, map[string]any{"flag": pos[1], "sessions_changed": n})
	}
	_, err = fmt.Fprintf(e.stdout, "%s: %s changed\n", pos[1], plural(int64(n), "session"))
	return err
}

func runDelete(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("delete", flag.ContinueOnError)
	yes := fs.Bool("yes", false, "delete (without it, only show what would be deleted)")
	pos, err := e.parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	s, err := e.openExisting(ctx)
	if err != nil {
		return err
	}
	set, err := s.DeletionSet(ctx, pos[0])
	if err != nil {
		return err
	}
	if !*yes {
		if e.json {
			return writeJSON(e.stdout, map[string]any{"would_delete": set, "deleted": []string{}})
		}
		_, err = fmt.Fprintf(e.stdout, "would delete %s: %s\n(run again with --yes to delete them)\n", plural(int64(len(set)), "session"), oneLine(strings.Join(set, ", ")))
		return err
	}
	// The set shown is the set deleted: if it changed meanwhile, refuse.
	deleted, err := s.DeleteSession(ctx, pos[0], db.DeleteOptions{ExpectedIDs: set})
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, map[string]any{"deleted": deleted})
	}
	_, err = fmt.Fprintf(e.stdout, "deleted %s: %s\n", plural(int64(len(deleted)), "session"), oneLine(strings.Join(deleted, ", ")))
	return err
}

type leaseJSON struct {
	Key        string `json:"key"`
	Holder     string `json:"holder"`
	AcquiredAt string `json:"acquired_at"`
	ExpiresAt  string `json:"expires_at"`
	Live       bool   `json:"live"`
}

func toLeaseJSON(l db.Lease) *leaseJSON {
	if l.Holder == "" {
		return nil
	}
	return &leaseJSON{Key: l.Key, Holder: l.Holder, AcquiredAt: stamp(l.AcquiredAt),
		ExpiresAt: stamp(l.ExpiresAt), Live: l.Live(time.Now())}
}

func runLocks(ctx context.Context, e *env, args []string) error {
	pos, err := e.parseArgs(flag.NewFlagSet("locks", flag.ContinueOnError), args, 1, 1)
	if err != nil {
		return err
	}
	s, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	lock, err := s.CompressionLock(ctx, pos[0])
	if err != nil {
		return err
	}
	lease, err := s.TurnLease(ctx, pos[0])
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, map[string]*leaseJSON{"compression_lock": toLeaseJSON(lock), "turn_lease": toLeaseJSON(lease)})
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tKEY\tHOLDER\tEXPIRES\tSTATE")
	for _, r := range []struct {
		kind string
		l    db.Lease
	}{{"compression lock", lock}, {"turn lease", lease}} {
		if r.l.Holder == "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\tfree\n", r.kind)
			continue
		}
		state := "expired"
		if r.l.Live(time.Now()) {
			state = "live, " + strconv.Itoa(int(time.Until(r.l.ExpiresAt).Seconds())) + "s left"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.kind, oneLine(r.l.Key), oneLine(r.l.Holder), stamp(r.l.ExpiresAt), state)
	}
	return tw.Flush()
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
