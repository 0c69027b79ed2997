package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// ModelSwitch is one change of a session's model mid-conversation.
type ModelSwitch struct {
	From, To string
	Provider string // "" when not given
	// AfterMessageID is the newest message written under the old model (0
	// when there was none): the messages after it are the new model's.
	AfterMessageID int64
	At             time.Time
}

// SetModel switches the session to model (and provider, when given) from
// its next turn on. The switch is recorded (ModelSwitches) with the newest
// message so far, so a transcript shows where it happened; the provider
// and model are merged into the session's model config, as Hermes does.
// Usage recorded without a model is counted under the session's model of
// the moment, so SessionUsage shows the switch too. Setting the model the
// session already has changes nothing and reports false.
func (s *Store) SetModel(ctx context.Context, id, model, provider string) (switched bool, err error) {
	const op = "set model"
	if err := firstErr(rules.CheckID("session id", id), rules.CheckLabel("model", model), rules.CheckLabel("provider", provider)); err != nil {
		return false, opErr(op, id, err)
	}
	if model == "" {
		return false, opErr(op, id, invalid("empty model"))
	}
	err = s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		switched = false // fresh on every (re)play
		row, err := tx.SessionGet(ctx, id)
		if err != nil {
			return err
		}
		if rules.Str(row.Model) == model {
			return nil
		}
		cfg := map[string]any{}
		if row.ModelConfigJson != nil {
			// Fail closed, leaving the cell as it is: sessiondb stores only
			// JSON objects here, so anything else is another program's
			// write, and replacing it would lose what it holds.
			if err := json.Unmarshal([]byte(*row.ModelConfigJson), &cfg); err != nil {
				return badStoredJSON("model config", err)
			} else if cfg == nil {
				return badStoredJSON("model config", errors.New("not an object"))
			}
		}
		cfg["model"] = model
		if provider != "" {
			cfg["provider"] = provider
		}
		b, err := json.Marshal(cfg)
		if err != nil {
			return err
		}
		if _, err := tx.SessionSetModel(ctx, driver.SessionSetModelParams{ID: id, Model: &model, ModelConfigJson: rules.Ptr(string(b))}); err != nil {
			return err
		}
		last, err := tx.SessionNewestMessageID(ctx, id)
		if err != nil {
			return err
		}
		switched = true
		return tx.ModelSwitchInsert(ctx, driver.ModelSwitchInsertParams{SessionID: id, FromModel: row.Model,
			ToModel: model, Provider: rules.Ptr(provider), AfterMessageID: last, SwitchedAt: now()})
	})
	return switched, err
}

// ModelSwitches returns the session's model switches, oldest first.
func (s *Store) ModelSwitches(ctx context.Context, id string) ([]ModelSwitch, error) {
	var out []ModelSwitch
	err := s.snapshot(ctx, "list model switches", id, func(q driver.Executor) error {
		if err := sessionMustExist(ctx, q, id); err != nil {
			return err
		}
		rows, err := q.ModelSwitchesBySession(ctx, id)
		if err != nil {
			return err
		}
		out = make([]ModelSwitch, len(rows))
		for i, r := range rows {
			out[i] = ModelSwitch{From: rules.Str(r.FromModel), To: r.ToModel, Provider: rules.Str(r.Provider),
				AfterMessageID: r.AfterMessageID, At: fromMillis(r.SwitchedAt)}
		}
		return nil
	})
	return out, err
}

// WorkspaceUpdate names the parts of a session's workspace to change: a
// nil field is left as it is, a pointer to "" clears it.
type WorkspaceUpdate struct {
	Cwd         *string
	GitBranch   *string
	GitRepoRoot *string
}

// SetWorkspace updates the session's working directory, git branch and
// repository root (an agent that cds, or checks out another branch).
func (s *Store) SetWorkspace(ctx context.Context, id string, w WorkspaceUpdate) error {
	const op = "set workspace"
	if err := rules.CheckID("session id", id); err != nil {
		return opErr(op, id, err)
	}
	p := driver.SessionSetWorkspaceParams{ID: id}
	for _, part := range []struct {
		what string
		v    *string
		set  *int64
		dst  **string
	}{
		{"cwd", w.Cwd, &p.SetCwd, &p.Cwd}, {"git branch", w.GitBranch, &p.SetBranch, &p.GitBranch},
		{"git repo root", w.GitRepoRoot, &p.SetRoot, &p.GitRepoRoot},
	} {
		if part.v == nil {
			continue
		}
		if err := rules.CheckLabel(part.what, *part.v); err != nil {
			return opErr(op, id, err)
		}
		*part.set, *part.dst = 1, rules.Ptr(*part.v)
	}
	return s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		return mustHaveRow(tx.SessionSetWorkspace(ctx, p))
	})
}

// SetSystemPrompt replaces the session's system prompt ("" clears it).
func (s *Store) SetSystemPrompt(ctx context.Context, id, prompt string) error {
	const op = "set system prompt"
	if err := firstErr(rules.CheckID("session id", id), rules.CheckText("system prompt", prompt)); err != nil {
		return opErr(op, id, err)
	}
	return s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		return mustHaveRow(tx.SessionSetSystemPrompt(ctx, driver.SessionSetSystemPromptParams{ID: id, SystemPrompt: rules.Ptr(prompt)}))
	})
}

// ReopenSession makes an ended session live again: its end time and reason
// are cleared (a session ended by mistake, or resumed after an automatic
// end). A session compressed into a continuation is refused with
// ErrSessionClosed — its conversation goes on in the child; reopen the
// compression tip instead. One ended "compression" that has no
// continuation is reopened like any other. A live session is left alone
// (false).
func (s *Store) ReopenSession(ctx context.Context, id string) (reopened bool, err error) {
	const op = "reopen session"
	if err := rules.CheckID("session id", id); err != nil {
		return false, opErr(op, id, err)
	}
	err = s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		reopened = false // fresh on every (re)play
		row, err := tx.SessionGet(ctx, id)
		if err != nil {
			return err
		}
		if row.EndedAt == nil {
			return nil
		}
		// Ended "compression" without a continuation (the compressor
		// stopped before it published one): nothing goes on elsewhere, so
		// it may be reopened, as the reference store allows.
		if _, err := tx.SessionContinuation(ctx, &id); err == nil {
			return fmt.Errorf("%w: its conversation continues in a compression child", ErrSessionClosed)
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		n, err := tx.SessionReopen(ctx, id)
		reopened = n == 1
		return err
	})
	return reopened, err
}

// CompressionFailed records that compressing the session failed: no
// compression lock is granted on it (AcquireCompressionLock gives
// ErrCoolingDown) until cooldown has passed, and errMsg is kept
// (Session.CompressionError). A second failure with a shorter cooldown
// never brings the retry forward: the later deadline wins.
func (s *Store) CompressionFailed(ctx context.Context, id string, cooldown time.Duration, errMsg string) error {
	const op = "record compression failure"
	if err := firstErr(rules.CheckID("session id", id), rules.CheckText("error", errMsg)); err != nil {
		return opErr(op, id, err)
	}
	if cooldown <= 0 {
		return opErr(op, id, invalid("cooldown must be positive, got %v", cooldown))
	}
	return s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		return mustHaveRow(tx.SessionCompressionCooldownSet(ctx, driver.SessionCompressionCooldownSetParams{
			ID: id, RetryAfter: now() + cooldown.Milliseconds(), Error: &errMsg}))
	})
}

// CompressionFellBack records that a compression of the session fell back
// (its summariser failed and a cruder method stood in: a truncation, a
// smaller model). A fallback now and then is fine; limit of them in a row
// mean the summariser is broken for this session, and the session then
// cools down as after a failure (CompressionFailed with cooldown and
// errMsg: no compression lock until it passes, the later deadline wins)
// and the streak starts again. A compression that works ends the streak
// (ClearCompressionFailure). It returns the streak after this fallback
// (0 when it started the cooldown) and whether it started the cooldown.
func (s *Store) CompressionFellBack(ctx context.Context, id string, limit int, cooldown time.Duration, errMsg string) (streak int64, coolingDown bool, err error) {
	const op = "record compression fallback"
	if err := firstErr(rules.CheckID("session id", id), rules.CheckText("error", errMsg)); err != nil {
		return 0, false, opErr(op, id, err)
	}
	if limit <= 0 || cooldown <= 0 {
		return 0, false, opErr(op, id, invalid("limit and cooldown must be positive, got %d and %v", limit, cooldown))
	}
	err = s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		streak, coolingDown = 0, false
		n, err := tx.SessionCompressionFellBack(ctx, id)
		if err != nil {
			return err
		}
		if n < int64(limit) {
			streak = n
			return nil
		}
		coolingDown = true
		if err := tx.SessionCompressionStreakReset(ctx, id); err != nil {
			return err
		}
		return mustHaveRow(tx.SessionCompressionCooldownSet(ctx, driver.SessionCompressionCooldownSetParams{
			ID: id, RetryAfter: now() + cooldown.Milliseconds(), Error: &errMsg}))
	})
	return streak, coolingDown, err
}

// ClearCompressionFailure lifts the cooldown, forgets the error and ends
// a fallback streak (after a compression succeeded, or by hand).
func (s *Store) ClearCompressionFailure(ctx context.Context, id string) error {
	const op = "clear compression failure"
	if err := rules.CheckID("session id", id); err != nil {
		return opErr(op, id, err)
	}
	return s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		return mustHaveRow(tx.SessionCompressionCooldownClear(ctx, id))
	})
}

// compressionCooling refuses a compression lock while the session's
// failure cooldown runs.
func compressionCooling(ctx context.Context, tx driver.Executor, id string) error {
	c, err := tx.SessionCompressionCooldownGet(ctx, id)
	if err != nil {
		return err
	}
	if c.CompressionRetryAfter != nil && *c.CompressionRetryAfter > now() {
		return fmt.Errorf("%w: the last compression failed (%s); retry after %s", ErrCoolingDown,
			rules.Str(c.CompressionError), fromMillis(*c.CompressionRetryAfter).Format(time.RFC3339))
	}
	return nil
}

// mustHaveRow turns an update that matched no session into ErrNotFound.
func mustHaveRow(n int64, err error) error {
	if err == nil && n == 0 {
		return ErrNotFound
	}
	return err
}
