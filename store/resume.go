package store

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// maxPrefixCandidates is how many sessions an ambiguous prefix lists.
const maxPrefixCandidates = 10

// AmbiguousIDError reports an id prefix that more than one session starts
// with. It matches ErrInvalidInput: the input does not name one session.
type AmbiguousIDError struct {
	Prefix string
	// Candidates are the first sessions the prefix matches, in id order;
	// More says there are others beyond them.
	Candidates []string
	More       bool
}

func (e *AmbiguousIDError) Error() string {
	more := ""
	if e.More {
		more = ", …"
	}
	return fmt.Sprintf("%q names more than one session (%s%s); give more of the id", e.Prefix, strings.Join(e.Candidates, ", "), more)
}

func (e *AmbiguousIDError) Is(target error) bool { return target == ErrInvalidInput }

// ResolveSessionID turns what a person typed into a session id: the id
// itself when a session has it, else the one session whose id starts with
// it. A prefix that several sessions share is an *AmbiguousIDError listing
// them; one no session has is ErrNotFound.
func (s *Store) ResolveSessionID(ctx context.Context, idOrPrefix string) (string, error) {
	const op = "resolve session id"
	if err := rules.CheckID("session id", idOrPrefix); err != nil {
		return "", opErr(op, idOrPrefix, err)
	}
	var id string
	err := s.read(ctx, op, idOrPrefix, func(q driver.Executor) error {
		var err error
		id, err = resolveID(ctx, q, idOrPrefix)
		return err
	})
	return id, err
}

func resolveID(ctx context.Context, q driver.Executor, prefix string) (string, error) {
	ids, err := q.SessionIDsInRange(ctx, driver.SessionIDsInRangeParams{Lo: prefix, Hi: prefixEnd(prefix), MaxRows: maxPrefixCandidates + 1})
	switch {
	case err != nil:
		return "", err
	case len(ids) == 0:
		return "", fmt.Errorf("no session id starts with %q: %w", prefix, ErrNotFound)
	case ids[0] == prefix || len(ids) == 1: // an exact id sorts first
		return ids[0], nil
	}
	amb := &AmbiguousIDError{Prefix: prefix, Candidates: ids, More: len(ids) > maxPrefixCandidates}
	if amb.More {
		amb.Candidates = ids[:maxPrefixCandidates]
	}
	return "", amb
}

// ResumePoint is where "resume this conversation" goes on.
type ResumePoint struct {
	// Tip is the conversation's compression tip: new turns are appended
	// here (its ancestors were ended by compression and take no more).
	Tip Session
	// Turns is the last session of the lineage that holds real turns —
	// a visible message that is not a compression summary — to load or
	// show. It is Tip unless compression has just continued the
	// conversation in a child that so far holds only its summary; then it
	// is the ancestor whose turns the summary stands for, so a person
	// resuming sees their conversation rather than a lone summary. When no
	// session of the lineage holds a real turn it is the lineage's root.
	Turns Session
}

// Resume resolves "resume X", where X is a session id or a unique prefix
// of one (see ResolveSessionID), to the point the conversation goes on
// from (see ResumePoint). To resume by title, find the session with
// SessionByTitle first.
func (s *Store) Resume(ctx context.Context, idOrPrefix string) (ResumePoint, error) {
	const op = "resume"
	if err := rules.CheckID("session id", idOrPrefix); err != nil {
		return ResumePoint{}, opErr(op, idOrPrefix, err)
	}
	var rp ResumePoint
	err := s.snapshot(ctx, op, idOrPrefix, func(q driver.Executor) error {
		id, err := resolveID(ctx, q, idOrPrefix)
		if err != nil {
			return err
		}
		ids, err := lineageIDs(ctx, q, id)
		if err != nil {
			return err
		}
		// No session holds a real turn (a root compressed before its first
		// one): the conversation is still where it began, as the reference
		// store resumes it, not in a child that holds only a summary.
		turns := ids[0]
		for i := len(ids) - 1; i >= 0; i-- {
			real, err := q.SessionHasRealTurns(ctx, ids[i])
			if err != nil {
				return err
			}
			if real {
				turns = ids[i]
				break
			}
		}
		tip, err := q.SessionGet(ctx, ids[len(ids)-1])
		if err != nil {
			return err
		}
		rp.Tip, rp.Turns = sessionFromRow(tip), sessionFromRow(tip)
		if turns != tip.ID {
			row, err := q.SessionGet(ctx, turns)
			if err != nil {
				return err
			}
			rp.Turns = sessionFromRow(row)
		}
		return nil
	})
	if err != nil {
		return ResumePoint{}, err
	}
	return rp, nil
}

// prefixEnd is the least valid UTF-8 string above every id that starts
// with prefix: prefix with its last character raised by one code point.
// Ids compare bytewise on every engine, and UTF-8's byte order is code
// point order, so [prefix, prefixEnd(prefix)) is exactly the ids with that
// prefix. Raising the last byte instead would be the same bound, but not
// always valid UTF-8, which PostgreSQL refuses as a text parameter. The
// surrogates are no characters and are skipped; a last character at
// U+10FFFF carries into the one before it, and a prefix made of nothing
// else is bounded by a string longer than any id.
func prefixEnd(prefix string) string {
	for prefix != "" {
		r, size := utf8.DecodeLastRuneInString(prefix)
		prefix = prefix[:len(prefix)-size]
		switch {
		case r == 0xD7FF:
			return prefix + "\uE000"
		case r < utf8.MaxRune:
			return prefix + string(r+1)
		}
	}
	return strings.Repeat(string(utf8.MaxRune), rules.MaxIDLen/utf8.UTFMax+1)
}
