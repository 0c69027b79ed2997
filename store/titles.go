package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
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

// TitleInUseError reports a title already held by another session of the
// same user (titles are unique per user; sessions without a user share one
// scope). It matches ErrExists.
type TitleInUseError struct {
	Title     string
	SessionID string // the session holding it
}

func (e *TitleInUseError) Error() string {
	return fmt.Sprintf("title %q is already used by session %q", e.Title, e.SessionID)
}

func (e *TitleInUseError) Is(target error) bool { return target == ErrExists }

// normalizeTitle is the stored form of a title: see sanitizeTitle.

// SetTitle gives the session a title chosen by the user (TitleUser); an
// empty title clears it (and lets automatic titles apply again).
// The title is stored sanitised (see the package documentation's
// Titles section): invisible and control characters are removed and
// whitespace is folded, so a title that is empty after that clears it.
//
// Titles are unique per user (sessions without a user share one scope),
// compared in that sanitised form: a title held by another session of the
// same user fails with a *TitleInUseError (errors.Is ErrExists) — unless that session
// is a compression ancestor of id, in which case the title moves to id in
// the same transaction (the continuation carries the conversation's name).
// An unknown session gives ErrNotFound.
func (s *Store) SetTitle(ctx context.Context, id, title string) error {
	const op = "set title"
	if err := rules.CheckID("session id", id); err != nil {
		return opErr(op, id, err)
	}
	title, err := rules.SanitizeTitle(title)
	if err != nil {
		return opErr(op, id, err)
	}
	return s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
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
	if err := rules.CheckID("session id", id); err != nil {
		return false, opErr(op, id, err)
	}
	if rank != TitleDerived && rank != TitleGenerated {
		return false, opErr(op, id, invalid("automatic title rank %v (want derived or generated; use SetTitle for a user's title)", rank))
	}
	title, err = rules.SanitizeTitle(title)
	if err == nil && title == "" {
		err = invalid("empty automatic title")
	}
	if err != nil {
		return false, opErr(op, id, err)
	}
	err = s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		var err error
		applied, err = applyTitle(ctx, tx, id, title, rank, false /* only over a lower rank */)
		return err
	})
	return applied, err
}

// titleFree returns a *TitleInUseError when a session of userID holds
// title ("" is always free): a new session's title clashes like SetTitle's.
func titleFree(ctx context.Context, q driver.Executor, userID, title string) error {
	if title == "" {
		return nil
	}
	owner, err := q.SessionTitleOwner(ctx, driver.SessionTitleOwnerParams{Title: &title, UserID: rules.Ptr(userID)})
	switch {
	case errors.Is(err, ErrNotFound):
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
func applyTitle(ctx context.Context, tx driver.Executor, id, title string, rank TitleRank, force bool) (applied bool, err error) {
	cur, err := tx.SessionTitleGet(ctx, id)
	if err != nil {
		return false, err
	}
	if !force && cur.Title != nil && TitleRank(cur.TitleRank) >= rank {
		return false, nil
	}
	if title == "" {
		_, err := tx.SessionTitleSet(ctx, driver.SessionTitleSetParams{ID: id, Title: nil, TitleRank: int64(TitleDerived)})
		return err == nil, err
	}
	owner, err := tx.SessionTitleOwner(ctx, driver.SessionTitleOwnerParams{Title: &title, UserID: cur.UserID})
	switch {
	case errors.Is(err, ErrNotFound): // free
	case err != nil:
		return false, err
	case owner.ID != id:
		ancestors, err := tx.SessionAncestors(ctx, id)
		if err != nil {
			return false, err
		}
		if !slices.Contains(ancestors, owner.ID) {
			return false, &TitleInUseError{Title: title, SessionID: owner.ID}
		}
		if _, err := tx.SessionTitleSet(ctx, driver.SessionTitleSetParams{
			ID: owner.ID, Title: nil, TitleRank: int64(TitleDerived)}); err != nil {
			return false, fmt.Errorf("take the title from compression ancestor %q: %w", owner.ID, err)
		}
		rank = max(rank, TitleRank(owner.TitleRank))
	}
	_, err = tx.SessionTitleSet(ctx, driver.SessionTitleSetParams{ID: id, Title: &title, TitleRank: int64(rank)})
	return err == nil, err
}

// continuationTitle is the title a new compression child of a session
// titled parentTitle takes: the conversation's name numbered one past the
// highest continuation of it the user has ("Fix the build" → "Fix the
// build #2", then "#3"). The parent keeps its own title, so every session
// of the lineage stays findable by name.
func continuationTitle(ctx context.Context, tx driver.Executor, userID *string, parentTitle string) (string, error) {
	base, _ := titleBase(parentTitle)
	rows, err := tx.SessionTitlesNumbered(ctx, driver.SessionTitlesNumberedParams{UserID: userID, Base: &base})
	if err != nil {
		return "", fmt.Errorf("number the continuation's title: %w", err)
	}
	highest := 1
	for _, r := range rows {
		if b, n := titleBase(rules.Str(r.Title)); b == base {
			highest = max(highest, n)
		}
	}
	return numberedTitle(base, highest+1), nil
}

// SessionByTitle finds a user's session by its title ("" is the scope of
// sessions without a user). The title is sanitised as SetTitle stores it.
// A conversation's name finds where it goes on now: "Fix the build"
// resolves to its newest numbered continuation ("Fix the build #3") when
// there is one, while "Fix the build #2" names that session exactly.
// An unknown title is ErrNotFound.
func (s *Store) SessionByTitle(ctx context.Context, userID, title string) (Session, error) {
	const op = "session by title"
	title, err := rules.SanitizeTitle(title)
	if err == nil && title == "" {
		err = invalid("empty title")
	}
	if err != nil {
		return Session{}, opErr(op, "", err)
	}
	var found Session
	err = s.read(ctx, op, "", func(q driver.Executor) error {
		rows, err := q.SessionTitlesNumbered(ctx, driver.SessionTitlesNumberedParams{UserID: &userID, Base: &title})
		if err != nil {
			return err
		}
		id, best := "", 0
		for _, r := range rows {
			t := rules.Str(r.Title)
			if t == title && best == 0 {
				id = r.ID // the exact title, unless a continuation is newer
			}
			if b, n := titleBase(t); b == title && n > best && t != title {
				id, best = r.ID, n
			}
		}
		if id == "" {
			return fmt.Errorf("no session titled %q: %w", title, ErrNotFound)
		}
		row, err := q.SessionGet(ctx, id)
		found = sessionFromRow(row)
		return err
	})
	return found, err
}
