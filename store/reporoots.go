package store

import (
	"context"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// repoRootPage is how many working directories one BackfillRepoRoots
// read lists.
const repoRootPage = 200

// BackfillRepoRoots gives sessions that have a working directory but no
// repository root one: resolve is asked once per such directory (outside
// any transaction: it may run git or walk the filesystem) and returns the
// directory's repository root, or "" when it has none or cannot tell; a
// root is written to every session in that directory that still has none,
// in one transaction per directory, and a root already set is never
// changed. It returns how many sessions were given one. Sessions created
// since then by a caller that knew their root are left alone.
func (s *Store) BackfillRepoRoots(ctx context.Context, resolve func(cwd string) string) (int64, error) {
	const op = "backfill repo roots"
	if resolve == nil {
		return 0, opErr(op, "", invalid("no resolver"))
	}
	var filled int64
	after := ""
	for {
		var cwds []*string
		err := s.read(ctx, op, "", func(q driver.Executor) error {
			var err error
			cwds, err = q.SessionCwdsWithoutRepoRoot(ctx, driver.SessionCwdsWithoutRepoRootParams{AfterCwd: &after, MaxRows: repoRootPage})
			return err
		})
		if err != nil {
			return filled, err
		}
		for _, c := range cwds {
			cwd := rules.Str(c)
			after = cwd
			root := resolve(cwd)
			if root == "" {
				continue
			}
			if err := rules.CheckText("repo root", root); err != nil {
				return filled, opErr(op, "", err)
			}
			var n int64
			err := s.write(ctx, op, "", s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
				var err error
				n, err = tx.SessionRepoRootFill(ctx, driver.SessionRepoRootFillParams{GitRepoRoot: &root, Cwd: &cwd})
				return err
			})
			if err != nil {
				return filled, err
			}
			filled += n
		}
		if len(cwds) < repoRootPage {
			return filled, nil
		}
		if err := ctx.Err(); err != nil {
			return filled, opErr(op, "", err)
		}
	}
}
