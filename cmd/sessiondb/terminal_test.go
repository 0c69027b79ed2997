package main

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

func TestOneLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"line\none\r\ntwo\tthree\x00four", "line one two three four"},
		{"  padded  \n", "padded"},
		{"\x1b[31mred\x1b[0m text", "red text"},
		{"clear\x1b[2J\x1b[H screen", "clear screen"},
		{"title \x1b]0;pwned\x07 bell", "title bell"},
		{"title \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ st", "title link st"},
		{"dcs \x1bPq#0;2;0;0;0\x1b\\ end", "dcs end"},
		{"charset \x1b(B reset \x1bc ok", "charset reset ok"},
		{"c1 \u009b31m csi \u009d0;x\u009c osc", "c1 csi osc"},
		{"del\x7f bs\x08 bell\x07 nel\u0085 ls\u2028", "del bs bell nel ls"},
		{"cut short \x1b[31", "cut short"},
		{"cut short \x1b]0;title", "cut short"},
		{"trailing \x1b", "trailing"},
		{"kept: 日本語 é 🔥 \ufffd", "kept: 日本語 é 🔥 \ufffd"},
	}
	for _, tt := range tests {
		if got := oneLine(tt.in); got != tt.want {
			t.Errorf("oneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Stored text cannot drive the terminal through the table: no control
// character (ESC included) reaches the output, whether in a snippet, a
// neighbour or a tool name.
func TestStoredTextIsInert(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	for _, args := range [][]string{
		{"session", "new", "--id", "s1"},
		{"append", "s1", "--role", "user", "--content", "before \x1b]0;pwned\x07 \x1b[2J\u009b31m\r\nhidden"},
		{"append", "s1", "--role", "tool", "--tool-name", "sh\x1b[31mell", "--content", "\x1b[31mhostile\x1b[0m needle \x1b[2J"},
		{"append", "s1", "--role", "user", "--content", "after\x08\x08\x08\x7f \x1bc"},
	} {
		if code, _, stderr := cli(t, path, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	// Every text view of stored text is inert, not only the search table.
	for _, view := range []struct {
		args []string
		want []string
	}{
		{[]string{"search", "needle", "--context", "1"}, []string{"[0m needle [2J", "user: before", "user: after"}},
		{[]string{"search", "needle", "--marks"}, []string{"[0m >>>needle<<< [2J"}},
		{[]string{"messages", "s1"}, []string{"before", "hidden", "hostile needle", "(sh ell)"}},
		{[]string{"session", "show", "s1"}, []string{"id:"}},
		{[]string{"sessions"}, []string{"s1"}},
	} {
		code, stdout, stderr := cli(t, path, view.args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", view.args, code, stderr)
		}
		for _, r := range stdout {
			if r != '\n' && unicode.IsControl(r) {
				t.Fatalf("%v: control character %U in the output:\n%q", view.args, r, stdout)
			}
		}
		for _, w := range view.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%v: output lacks %q:\n%s", view.args, w, stdout)
			}
		}
	}
}
