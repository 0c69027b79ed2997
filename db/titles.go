package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sessiondb/sessiondb/db/gen"
)

// TitleRank says who chose a session's title. A title is only replaced
// automatically by one of strictly higher rank, so a name the user typed
// is never overwritten by a generated one.
type TitleRank int

// The title ranks, as stored in sessions.title_rank.
const (
	// TitleDerived: taken mechanically from the conversation (the first
	// user message, a file name).
	TitleDerived TitleRank = 0
	// TitleGenerated: written by a model.
	TitleGenerated TitleRank = 1
	// TitleUser: chosen by a person (SetTitle, or a title given to
	// CreateSession).
	TitleUser TitleRank = 2
)

func (r TitleRank) String() string {
	switch r {
	case TitleDerived:
		return "derived"
	case TitleGenerated:
		return "generated"
	case TitleUser:
		return "user"
	}
	return fmt.Sprintf("TitleRank(%d)", int(r))
}

// TitleInUseError reports a title already held by another session (titles
// are unique across the store). It matches ErrExists.
type TitleInUseError struct {
	Title     string
	SessionID string // the session holding it
}

func (e *TitleInUseError) Error() string {
	return fmt.Sprintf("title %q is already used by session %q", e.Title, e.SessionID)
}

func (e *TitleInUseError) Is(target error) bool { return target == ErrExists }

// normalizeTitle trims surrounding whitespace and refuses what cannot be a
// one-line name: invalid UTF-8, control characters, only whitespace, more
// than 100 characters. An empty title stays empty (no title).
func normalizeTitle(title string) (string, error) {
	if !utf8.ValidString(title) {
		return "", invalid("title is not valid UTF-8")
	}
	trimmed := strings.TrimSpace(title)
	switch {
	case title != "" && trimmed == "":
		return "", invalid("title is only whitespace (use an empty title to clear it)")
	case utf8.RuneCountInString(trimmed) > maxTitleLen:
		return "", invalid("title longer than %d characters", maxTitleLen)
	case strings.IndexFunc(trimmed, unicode.IsControl) >= 0:
		return "", invalid("title %q contains a control character", trimmed)
	}
	return trimmed, nil
}

// SetTitle gives the session a title chosen by the user (TitleUser); an
// empty title clears it (and lets automatic titles apply again).
// Surrounding whitespace is trimmed.
//
// Titles are unique across the store: a title held by another session
// fails with a *TitleInUseError (errors.Is ErrExists) — unless that session
// is a compression ancestor of id, in which case the title moves to id in
// the same transaction (the continuation carries the conversation's name).
// An unknown session gives ErrNotFound.
func (s *Store) SetTitle(ctx context.Context, id, title string) error {
	const op = "set title"
	if err := checkID("session id", id); err != nil {
		return opErr(op, id, err)
	}
	title, err := normalizeTitle(title)
	if err != nil {
		return opErr(op, id, err)
	}
	return s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx gen.DBTX) error {
		_, err := applyTitle(ctx, tx, id, title, TitleUser, true /* over any rank */)
		return err
	})
}

// SetAutoTitle sets a title produced by the program (rank TitleDerived or
// TitleGenerated), but only over no title or a title of strictly lower
// rank: it never replaces a user's title. applied says whether it did.
// Uniqueness works as in SetTitle; a title taken over from a compression
// ancestor keeps the higher of the two ranks.
func (s *Store) SetAutoTitle(ctx context.Context, id, title string, rank TitleRank) (applied bool, err error) {
	const op = "set auto title"
	if err := checkID("session id", id); err != nil {
		return false, opErr(op, id, err)
	}
	if rank != TitleDerived && rank != TitleGenerated {
		return false, opErr(op, id, invalid("automatic title rank %v (want derived or generated; use SetTitle for a user's title)", rank))
	}
	title, err = normalizeTitle(title)
	if err == nil && title == "" {
		err = invalid("empty automatic title")
	}
	if err != nil {
		return false, opErr(op, id, err)
	}
	err = s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx gen.DBTX) error {
		var err error
		applied, err = applyTitle(ctx, tx, id, title, rank, false /* only over a lower rank */)
		return err
	})
	return applied, err
}

// titleFree returns a *TitleInUseError when a session holds title (""
// is always free): a new session's title clashes like SetTitle's.
func titleFree(ctx context.Context, q gen.DBTX, title string) error {
	if title == "" {
		return nil
	}
	owner, err := queries.SessionTitleOwner(ctx, q, &title)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	return &TitleInUseError{Title: title, SessionID: owner.ID}
}

// applyTitle sets id's title at rank inside a write transaction. Unless
// force, it applies only over no title or a strictly lower rank. A title
// held by a compression ancestor of id moves here; held by anyone else it
// is a *TitleInUseError.
func applyTitle(ctx context.Context, tx gen.DBTX, id, title string, rank TitleRank, force bool) (applied bool, err error) {
	cur, err := queries.SessionTitleGet(ctx, tx, id)
	if err != nil {
		return false, err
	}
	if !force && cur.Title != nil && TitleRank(cur.TitleRank) >= rank {
		return false, nil
	}
	if title == "" {
		_, err := queries.SessionTitleSet(ctx, tx, gen.SessionTitleSetParams{ID: id, Title: nil, TitleRank: int64(TitleDerived)})
		return err == nil, err
	}
	owner, err := queries.SessionTitleOwner(ctx, tx, &title)
	switch {
	case errors.Is(err, sql.ErrNoRows): // free
	case err != nil:
		return false, err
	case owner.ID != id:
		ancestors, err := queries.SessionAncestors(ctx, tx, id)
		if err != nil {
			return false, err
		}
		if !slices.Contains(ancestors, owner.ID) {
			return false, &TitleInUseError{Title: title, SessionID: owner.ID}
		}
		if _, err := queries.SessionTitleSet(ctx, tx, gen.SessionTitleSetParams{
			ID: owner.ID, Title: nil, TitleRank: int64(TitleDerived)}); err != nil {
			return false, fmt.Errorf("take the title from compression ancestor %q: %w", owner.ID, err)
		}
		rank = max(rank, TitleRank(owner.TitleRank))
	}
	_, err = queries.SessionTitleSet(ctx, tx, gen.SessionTitleSetParams{ID: id, Title: &title, TitleRank: int64(rank)})
	return err == nil, err
}
