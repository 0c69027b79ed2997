package store

import "errors"

// Retryable reports whether the call that returned err may be made again,
// unchanged, after a pause: the store wrote nothing, and what stood in the
// way passes by itself. That is
//
//   - [ErrLocked]: another process held the write lock past the call's
//     patience; the database is healthy;
//   - [ErrLeaseHeld]: another holder's live lease stood in the way; it is
//     released or expires;
//   - [ErrCoolingDown]: the session's compression cooldown has not passed;
//   - [ErrDiskFull] (unless with [ErrCommitUnknown]): the write was
//     refused whole and goes through once there is room;
//   - [ErrTooManyOpenFiles]: the process ran out of descriptors for a
//     moment; the database is fine.
//
// Every other error is not retryable as it stands: the input, the state
// or the file must change first (re-read after [ErrConflict], write to the
// tip after [ErrSessionClosed], split the content after [ErrTooLarge],
// check the path after [ErrNotAStore], migrate the store after
// [ErrSchemaBehind], reopen after [ErrIO] or [ErrInternal]), or the
// caller's context ended. [ErrCommitUnknown] is not retryable in general: the
// write may have committed, and repeating it may write it twice. The
// exception is a call idempotent by key — an append whose every message
// carries an IdempotencyKey (or a PlatformMessageID): repeated after a
// commit that did land, it returns the first append's ids and writes
// nothing. [RetryableKeyed] says so for such calls.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, ErrCommitUnknown) {
		return false
	}
	for _, transient := range []error{ErrLocked, ErrLeaseHeld, ErrCoolingDown, ErrDiskFull, ErrTooManyOpenFiles} {
		if errors.Is(err, transient) {
			return true
		}
	}
	return false
}

// RetryableKeyed is [Retryable] for a call idempotent by key: an
// AppendMessage, AppendMessages or AppendMessagesUnderLease whose every
// message carries an IdempotencyKey (or a PlatformMessageID). For those,
// [ErrCommitUnknown] is retryable too: the store answers a repeat of an
// append that did commit with the first append's ids and writes nothing,
// and one that did not commit is simply written.
func RetryableKeyed(err error) bool {
	return errors.Is(err, ErrCommitUnknown) || Retryable(err)
}
