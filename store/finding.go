package store

import (
	"context"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// maxFound caps the lists SessionsByIDSubstring and UserCwds return.
const maxFound = 1000

// SessionsByIDSubstring returns the ids of the sessions whose id contains
// text anywhere — taken literally, no character of it a pattern — newest
// start first, at most limit of them (0: 50; at most 1000). It finds a
// session by the part of its id a person remembers or a log shows, where
// ResolveSessionID needs the id's beginning.
func (s *Store) SessionsByIDSubstring(ctx context.Context, text string, limit int) ([]string, error) {
	const op = "find sessions by id"
	switch err := rules.CheckLabel("id text", text); {
	case err != nil:
		return nil, opErr(op, "", err)
	case text == "":
		return nil, opErr(op, "", invalid("empty id text: it would match every session"))
	}
	limit, err := foundLimit(limit)
	if err != nil {
		return nil, opErr(op, "", err)
	}
	var ids []string
	err = s.read(ctx, op, "", func(q driver.Executor) error {
		ids, err = q.SessionIDsContaining(ctx, driver.SessionIDsContainingParams{Needle: text, MaxRows: int64(limit)})
		return err
	})
	return ids, err
}

// UserCwds returns the distinct working directories of userID's sessions
// ("" for the sessions without a user), the most recently started first,
// at most limit of them (0: 50; at most 1000): where that user works, for
// a picker of projects.
func (s *Store) UserCwds(ctx context.Context, userID string, limit int) ([]string, error) {
	const op = "list user cwds"
	if err := rules.CheckLabel("user id", userID); err != nil {
		return nil, opErr(op, "", err)
	}
	limit, err := foundLimit(limit)
	if err != nil {
		return nil, opErr(op, "", err)
	}
	var cwds []string
	err = s.read(ctx, op, "", func(q driver.Executor) error {
		rows, err := q.SessionCwdsOfUser(ctx, driver.SessionCwdsOfUserParams{UserID: &userID, MaxRows: int64(limit)})
		cwds = make([]string, 0, len(rows))
		for _, c := range rows {
			cwds = append(cwds, rules.Str(c))
		}
		return err
	})
	return cwds, err
}

func foundLimit(n int) (int, error) {
	switch {
	case n < 0:
		return 0, invalid("negative limit %d", n)
	case n == 0:
		return 50, nil
	}
	return min(n, maxFound), nil
}
