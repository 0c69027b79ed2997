package main

// mcp_guard.go keeps the MCP server serving through bad input. The SDK's
// stdio transport stops reading at the first line that is not a JSON-RPC
// message (its decoder cannot resynchronise), which would end the session
// over one stray line. lineGuard sits between stdin and the transport: it
// passes each well-formed message line through and answers every other
// line itself, with the JSON-RPC error the spec names (-32700 for text
// that is not JSON, -32600 for JSON that is not a message), on the same
// locked stdout the server writes to.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxMCPLine caps one inbound line; a longer one is answered -32600 and
// skipped, so a runaway client cannot make the server buffer without end.
const maxMCPLine = 4 << 20

// lockedWriter serialises whole writes: the SDK writes one message per
// Write, and so does the guard, so lines never interleave. It also counts
// the calls still unanswered (the guard adds the ones it passes on, each
// response written settles one), so that the end of stdin can wait for
// them: a client that writes its requests and closes its end still gets
// every answer.
type lockedWriter struct {
	mu sync.Mutex
	// +checklocks:mu
	w io.Writer
	// +checklocks:mu
	calls int
	// +checklocks:mu
	settled *sync.Cond
}

// +checklocksignore: the writer is not shared yet.
func newLockedWriter(w io.Writer) *lockedWriter {
	l := &lockedWriter{w: w}
	l.settled = sync.NewCond(&l.mu)
	return l
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := responses(p); n > 0 {
		l.calls = max(0, l.calls-n)
		l.settled.Broadcast()
	}
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// writeOwn writes a line the guard made (not an answer to a passed call).
func (l *lockedWriter) writeOwn(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(p)
}

func (l *lockedWriter) addCalls(n int) {
	l.mu.Lock()
	l.calls += n
	l.mu.Unlock()
}

// drain waits until every passed call is answered, or for patience.
func (l *lockedWriter) drain(patience time.Duration) {
	timer := time.AfterFunc(patience, func() {
		l.mu.Lock()
		l.calls = 0
		l.settled.Broadcast()
		l.mu.Unlock()
	})
	defer timer.Stop()
	l.mu.Lock()
	for l.calls > 0 {
		l.settled.Wait()
	}
	l.mu.Unlock()
}

// wireMsg is what the guard reads of a message to count calls and answers.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
}

// isCall: a request with an id (a notification gets no answer).
func (m wireMsg) isCall() bool { return m.Method != nil && len(m.ID) > 0 && string(m.ID) != "null" }

// isResponse: an answer to a call.
func (m wireMsg) isResponse() bool { return m.Method == nil && len(m.ID) > 0 }

// messages decodes a line (one message or a batch) for counting.
func messages(line []byte) []wireMsg {
	var one wireMsg
	if json.Unmarshal(line, &one) == nil {
		return []wireMsg{one}
	}
	var batch []wireMsg
	json.Unmarshal(line, &batch)
	return batch
}

func responses(line []byte) (n int) {
	for _, m := range messages(line) {
		if m.isResponse() {
			n++
		}
	}
	return n
}

// lineGuard is the reader the transport reads: only well-formed lines.
type lineGuard struct {
	in      *bufio.Reader
	out     *lockedWriter
	pending []byte
	skipped atomic.Int64 // lines answered with an error (for the log; read after the transport stops)
	// patience bounds how long the end of stdin waits for the answers to
	// calls still running.
	patience time.Duration
}

func newLineGuard(in io.Reader, out *lockedWriter) *lineGuard {
	return &lineGuard{in: bufio.NewReaderSize(in, 64<<10), out: out, patience: 30 * time.Second}
}

func (g *lineGuard) Close() error { return nil }

func (g *lineGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		line, tooLong, err := g.readLine()
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if g.admit(line, tooLong) {
				g.pending = append(line, '\n')
				calls := 0
				for _, m := range messages(line) {
					if m.isCall() {
						calls++
					}
				}
				g.out.addCalls(calls)
			}
		}
		if err != nil && len(g.pending) == 0 {
			g.out.drain(g.patience)
			return 0, err
		}
		if err != nil {
			break
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// readLine returns the next line without its line ending; a line over
// maxMCPLine is read to its end and dropped (tooLong).
func (g *lineGuard) readLine() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := g.in.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > maxMCPLine+2 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// admit reports whether line is a message the transport can decode (a
// request, notification or response, or a batch of them); otherwise it
// answers the line itself.
func (g *lineGuard) admit(line []byte, tooLong bool) bool {
	switch {
	case tooLong:
		g.reject(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: line longer than %d bytes", maxMCPLine))
		return false
	case !json.Valid(line):
		g.reject(nil, jsonrpc.CodeParseError, "Parse error: the line is not JSON")
		return false
	}
	var batch []json.RawMessage
	if json.Unmarshal(line, &batch) == nil {
		ok := len(batch) > 0
		for _, m := range batch {
			if _, err := jsonrpc.DecodeMessage(m); err != nil {
				ok = false
			}
		}
		if !ok {
			g.reject(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: a batch must hold JSON-RPC 2.0 messages")
		}
		return ok
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(line, &probe)
		g.reject(probe.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message")
		return false
	}
	return true
}

// rpcError is a JSON-RPC error response written by the guard.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// reject writes an error response to a line the transport never sees; id
// is the request's when it had a usable one (a string or a number), else
// null.
func (g *lineGuard) reject(id json.RawMessage, code int, msg string) {
	g.skipped.Add(1)
	var v any
	if json.Unmarshal(id, &v) != nil {
		v = nil
	}
	switch v.(type) {
	case string, float64:
	default:
		id = json.RawMessage("null")
	}
	e := rpcError{JSONRPC: "2.0", ID: id}
	e.Error.Code, e.Error.Message = code, msg
	b, _ := json.Marshal(e)
	g.out.writeOwn(append(b, '\n'))
}
