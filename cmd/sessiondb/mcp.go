package main

// mcp.go is `sessiondb mcp`: the store served to an agent over the Model
// Context Protocol on stdin/stdout, so any MCP client can search and read
// its own past sessions. stdout carries only JSON-RPC; logs go to stderr.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sessiondb/sessiondb/store"
)

const mcpUsage = "mcp [--allow-notes] [--notes-session ID]..."

// sessionFlags collects repeated session id flags.
type sessionFlags []string

func (f *sessionFlags) String() string { return strings.Join(*f, ",") }

func (f *sessionFlags) Set(v string) error {
	if v == "" {
		return errors.New("an empty session id")
	}
	*f = append(*f, v)
	return nil
}

func runMCP(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	allowNotes := fs.Bool("allow-notes", false, "offer the append_note tool, writing to the session "+mcpNotesID+
		" (the server is read-only without it or --notes-session)")
	var noteSessions sessionFlags
	fs.Var(&noteSessions, "notes-session", "also let notes go to this session `ID` (implies --allow-notes); repeat for several")
	if _, err := e.parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	// An existing store only (a mistyped path in a client's config must not
	// look like an empty memory), read-only where it cannot be written;
	// only notes write.
	s, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	server := newMCPServer(s, mcpConfig{allowNotes: *allowNotes || len(noteSessions) > 0, noteSessions: noteSessions, log: log})
	out := newLockedWriter(e.stdout)
	guard := newLineGuard(e.stdin, out)
	err = server.Run(ctx, &mcp.IOTransport{Reader: guard, Writer: out})
	if n := guard.skipped.Load(); n > 0 {
		log.Warn("mcp: answered lines that were not JSON-RPC messages", "lines", n)
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil // the client closed stdin, or an interrupt: a normal end
	}
	return fmt.Errorf("mcp: %w", err)
}

// mcpConfig is what the server is allowed and where it logs.
type mcpConfig struct {
	allowNotes bool
	// noteSessions are the sessions notes may go to besides mcpNotesID.
	noteSessions []string
	log          *slog.Logger
}

// newMCPServer builds the server and its tools over s.
func newMCPServer(s *store.Store, c mcpConfig) *mcp.Server {
	version := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "sessiondb", Title: "sessiondb: past agent sessions", Version: version},
		&mcp.ServerOptions{Logger: c.log, Capabilities: &mcp.ServerCapabilities{}, Instructions: mcpInstructions})
	t := &mcpTools{store: s, log: c.log, noteSessions: append([]string{mcpNotesID}, c.noteSessions...)}
	t.register(server, c.allowNotes)
	return server
}

const mcpInstructions = `Recall from past agent sessions stored in sessiondb. ` +
	`search_messages finds messages by their words (snippets mark matches between >>> and <<<); ` +
	`read_messages_around shows a hit in its conversation; read_conversation pages through a session; ` +
	`list_sessions lists recent sessions; session_lineage shows a conversation's compression chain. ` +
	`Results are capped in size and say when they were truncated and how to get the rest.`
