package main

import (
	"context"
	"encoding/json"
	"flag"
	"strconv"

	"github.com/sessiondb/sessiondb/db"
)

// runFollow prints a session's messages as they are committed — by this
// machine's processes or, on PostgreSQL, any replica's — until
// interrupted (exit 0) or the store or session goes away (its error).
// By default it starts after the session's last message, as tail -f
// does; --after 0 prints the whole session first. --json writes one
// message per line (JSON Lines), so a pipe can read each as it comes.
func runFollow(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("follow", flag.ContinueOnError)
	afterFlag := fs.String("after", "", "start after message `ID` (0: the session's first; default: its last, so only new messages print)")
	metricsAddr := addMetricsFlag(fs)
	pos, err := e.parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	metricsListen, err := metricsListenAddr(*metricsAddr)
	if err != nil {
		return err
	}
	var after int64
	if *afterFlag != "" {
		if after, err = strconv.ParseInt(*afterFlag, 10, 64); err != nil || after < 0 {
			return usagef("follow: --after wants a message id (0 or more), not %q", *afterFlag)
		}
	}
	s, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	stopMetrics, err := serveMetrics(e, "follow", metricsListen, e.opened.metrics)
	if err != nil {
		return err
	}
	defer stopMetrics()
	id, err := s.ResolveSessionID(ctx, pos[0]) // an id, or a unique prefix of one
	if err != nil {
		return err
	}
	if *afterFlag == "" {
		last, err := s.Messages(ctx, id, db.MessageQuery{NewestFirst: true, Limit: 1})
		if err != nil {
			return err
		}
		if len(last) > 0 {
			after = last[0].ID
		}
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	for m, err := range s.WatchMessages(ctx, id, after) {
		if err != nil {
			return err
		}
		if e.json {
			err = enc.Encode(toMessageJSON(m))
		} else {
			err = printMessages(e.stdout, []db.Message{m})
		}
		if err != nil {
			return err
		}
	}
	return nil
}
