package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/sessiondb/sessiondb/store"
)

// sessionRef is how a command names one session: an id, a unique prefix
// of one, or (with --title, and --user for a user's titles) its title.
type sessionRef struct {
	title, user *string
}

func addSessionRefFlags(fs *flag.FlagSet) sessionRef {
	return sessionRef{
		title: fs.String("title", "", "name the session by its title instead of its id (a conversation's name finds its newest continuation)"),
		user:  fs.String("user", "", "with --title: the user whose titles to look in (default: sessions without a user)"),
	}
}

// resolve returns the session id the positional arguments or --title name.
func (r sessionRef) resolve(ctx context.Context, s *store.Store, cmd string, pos []string) (string, error) {
	switch {
	case *r.title != "" && len(pos) > 0:
		return "", usagef("%s: give a session id or --title, not both", cmd)
	case *r.title != "":
		sess, err := s.SessionByTitle(ctx, *r.user, *r.title)
		return sess.ID, err
	case len(pos) == 0:
		return "", usagef("%s: expected a session id (or a unique prefix of one) or --title", cmd)
	}
	return s.ResolveSessionID(ctx, pos[0])
}

// openNamedSession is the start of a read command that names one session
// (id, prefix or --title): its flags parsed first (as help's describe mode
// needs), the existing store opened for reading, the name resolved.
func openNamedSession(ctx context.Context, e *env, cmd string, args []string) (*store.Store, string, error) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	ref := addSessionRefFlags(fs)
	pos, err := e.parseArgs(fs, args, 0, 1)
	if err != nil {
		return nil, "", err
	}
	s, err := e.openRead(ctx)
	if err != nil {
		return nil, "", err
	}
	id, err := ref.resolve(ctx, s, cmd, pos)
	return s, id, err
}

func runResume(ctx context.Context, e *env, args []string) error {
	s, id, err := openNamedSession(ctx, e, "resume", args)
	if err != nil {
		return err
	}
	rp, err := s.Resume(ctx, id)
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, map[string]any{"tip": toSessionJSON(rp.Tip), "turns": toSessionJSON(rp.Turns)})
	}
	if _, err := fmt.Fprintf(e.stdout, "continue in: %s\n", rp.Tip.ID); err != nil {
		return err
	}
	if rp.Turns.ID != rp.Tip.ID {
		_, err = fmt.Fprintf(e.stdout, "last turns:  %s (the continuation holds only its summary so far)\n", rp.Turns.ID)
	}
	return err
}
