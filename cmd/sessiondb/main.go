// Command sessiondb inspects and edits a sessiondb store from the shell.
//
//	sessiondb [--db PATH] [--json] COMMAND [ARGS]
//
// The database is --db (a file path, or a postgres:// URL for the
// PostgreSQL engine), else $SESSIONDB_PATH, else
// $XDG_STATE_HOME/sessiondb/state.db, else ~/.local/state/sessiondb/state.db.
//
// Exit codes: 0 ok, 1 error, 2 usage (bad flags or input), 3 not found, 75 the write lock was
// held by another process for longer than the patience, or a live lease stood in the way
// (EX_TEMPFAIL: try again later).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
)

const (
	exitOK       = 0
	exitError    = 1
	exitUsage    = 2
	exitNotFound = 3
	// exitNotAStore: the path holds something that is not a sessiondb
	// store (another program's database, a text file, a directory): the
	// wrong path, not damage. Nothing was changed.
	exitNotAStore = 4
	exitLocked    = 75
)

// command is one CLI verb.
type command struct {
	name    string
	usage   string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

func commands() []command {
	return []command{
		{"init", "init", "create the database (and its directory) if needed and apply migrations", runInit},
		{"session", "session new [--id ID] [--source S] [--title T] [--parent ID --kind K] [--model M] | show ID|PREFIX [--title T] [--user U] | end ID --reason R", "create, show or end one session", runSession},
		{"resume", "resume ID|PREFIX [--title T] [--user U]", "where a conversation goes on: its compression tip, and the last session with real turns", runResume},
		{"sessions", "sessions [--source S] [--parent ID] [--live|--ended] [--limit N] [--offset N] [--all]", "list sessions, newest first", runSessions},
		{"append", "append SESSION_ID --role ROLE (--content TEXT | --content-file F|- | --parts-file F|-) [--tool-name N] [--tool-call-id C] [--key K] [--model M] [--platform-id P] [--metadata JSON] [--created-at T]", "append a message; prints its id", runAppend},
		{"messages", "messages ID|PREFIX [--after ID] [--before ID] [--limit N] [--all] [--newest-first] [--include-rewound]", "list a session's messages", runMessages},
		{"follow", "follow ID|PREFIX [--after ID] [--metrics-addr HOST:PORT]", "print a session's new messages as they are committed, by any process or replica, until interrupted (--json: one per line)", runFollow},
		{"search", searchUsage, "find messages by their words (any text is a valid query)", runSearch},
		{"lineage", "lineage SESSION_ID", "show the conversation a session belongs to, root to compression tip", runLineage},
		{"conversation", "conversation ID|PREFIX [--lineage] [--compacted] [--notes]", "show a conversation: the active rows a model sees, or the whole lineage with each turn once", runConversation},
		{"mcp", mcpUsage, "serve the store to an agent over MCP on stdin/stdout: search and read past sessions (read-only unless --allow-notes or --notes-session)", runMCP},
		{"rewind", "rewind SESSION_ID --to MESSAGE_ID [--expect-content TEXT] [--holder H]", "undo a conversation back to before a user message (soft: the rows are kept, hidden)", runRewind},
		{"flag", "flag SESSION_ID archive|unarchive|pin|unpin|hide|unhide|read|unread", "set a flag on a session's whole lineage", runFlag},
		{"delete", "delete SESSION_ID [--yes]", "delete a session and its delegate sessions (other children are kept, unlinked); without --yes only show what would go", runDelete},
		{"locks", "locks SESSION_ID", "show the session's compression lock and its conversation's turn lease", runLocks},
		{"title", "title SESSION_ID [TITLE]", "show a session's title, or set it (an empty TITLE clears it)", runTitle},
		{"usage", "usage [SESSION_ID [--tree]] [--source S] [--since 24h|DATE] [--by model|provider]", "token and cost usage of one session (per model, task and billing route; --tree: its whole delegation tree), or totals per model (or billing provider) across the store", runUsage},
		{"handoff", "handoff SESSION_ID", "show a session's handoff state", runHandoff},
		{"meta", "meta get KEY | meta set KEY VALUE", "read or write a store-wide key/value", runMeta},
		{"export", "export [--session ID [--lineage]] [-o FILE]", "write sessions, messages and usage as JSON Lines (stdout, or FILE written whole)", runExport},
		{"import", "import [--from sessiondb|hermes] FILE|-", "read an export (checked whole first; nothing is written if any line is bad; existing sessions are skipped), or with --from hermes a Hermes state.db, read-only; a second run imports only what is new", runImportFrom},
		{"copy", "copy --from SRC --to DST", "copy every session, with its messages, usage and lineage, from one store to another (a file or a postgres:// URL, either way); a second run copies only what is new", runCopy},
		{"prune", "prune [--older-than 90d]", "delete sessions ended long ago (pinned conversations, live continuations and leased sessions are spared)", runPrune},
		{"bulk", "bulk prune [FLAGS] | bulk archive [FLAGS] | bulk auto-archive --older-than AGE [FLAGS] | bulk delete [FLAGS] | bulk ghosts [FLAGS]", "act on many sessions at once (pinned, leased and continued conversations are spared); --dry-run lists what would go", runBulk},
		{"vacuum", "vacuum", "compact the file (refused while other processes have it open)", runVacuum},
		{"stats", "stats", "what is in the store: sessions, messages, file and WAL size, free pages, index state, schema, last prune/vacuum", runStats},
		{"migrate", migrateUsage, "the deploy step: migrate the store (a file, created when missing, or a postgres:// schema) to this sessiondb's schema; --status only prints the version (exit 0 current, 1 behind or ahead)", runMigrate},
		{"verify", "verify", "check the database without changing it (exit 0 verified or empty, 1 damaged or absent, 2 could not check: locked, no permission, read-only medium, disk full)", runVerify},
		{"repair", "repair [--no-backup] [--force]", "repair a damaged database in place, after a backup (exit 0 repaired or healthy, 1 not repaired)", runRepair},
		{"bench", "bench [--appends N] [--appenders 1,4,16,64] [--rows N] [--dir D]", "measure appends (serial, concurrent, batched), reads and open against the raw driver, on scratch databases", runBench},
		{"ui", "ui [--addr 127.0.0.1:0] [--open] [--metrics-addr HOST:PORT]", "serve a read-only conversation viewer in the browser: sessions, conversations, search, lineage, usage (prints the URL; a token is required off loopback)", runUI},
		{"demo", "demo [--writers N]", "fill the database with a realistic multi-session conversation from concurrent writers, then show it", runDemo},
		{"help", "help [COMMAND [SUBCOMMAND]]", "show the commands, or one command's usage with its flags and their defaults", runHelp},
		{"version", "version", "print the module version and the VCS revision it was built from", runVersion},
		{"completion", "completion bash|zsh|fish", "print a shell completion script (e.g. source <(sessiondb completion bash))", runCompletion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	rest, err := e.parseGlobal(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(stdout)
		return exitOK
	case err != nil:
		return report(e, usagef("%v; `sessiondb help` lists the global flags", err))
	case e.version:
		return report(e, runVersion(ctx, e, nil))
	case len(rest) == 0:
		printUsage(stderr)
		return exitUsage
	}
	c, ok := lookup(rest[0])
	if !ok {
		return report(e, unknownCommand(rest[0]))
	}
	if len(c.subcommands()) > 0 && len(rest) > 1 && slices.Contains([]string{"-h", "-help", "--help"}, rest[1]) {
		return report(e, printCommandHelp(stdout, c, ""))
	}
	err = c.run(ctx, e, rest[1:])
	e.closeStore()
	return report(e, err)
}

// usageError marks a mistake in the command line (exit 2).
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// report prints err (if any) and maps it to an exit code.
func report(e *env, err error) int {
	if err == nil || errors.Is(err, errHelpShown) {
		return exitOK
	}
	var v verifyExit
	if errors.As(err, &v) {
		return v.code
	}
	printError(e.stderr, e.json, err)
	_, code := classify(err)
	return code
}
