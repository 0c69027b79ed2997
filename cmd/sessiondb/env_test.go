package main

import (
	"errors"
	"flag"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolvePath(t *testing.T) {
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	tests := []struct {
		name string
		flag string
		env  map[string]string
		home func() (string, error)
		want string
		err  bool
	}{
		{"FlagWins", "/x.db", map[string]string{"SESSIONDB_PATH": "/env.db", "XDG_STATE_HOME": "/xdg"}, home, "/x.db", false},
		{"EnvPath", "", map[string]string{"SESSIONDB_PATH": "/env.db", "XDG_STATE_HOME": "/xdg"}, home, "/env.db", false},
		{"XDG", "", map[string]string{"XDG_STATE_HOME": "/xdg"}, home, filepath.Join("/xdg", "sessiondb", "state.db"), false},
		{"Home", "", nil, home, filepath.Join("/home/u", ".local", "state", "sessiondb", "state.db"), false},
		{"Nothing", "", nil, noHome, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolvePath(tt.flag, func(k string) string { return tt.env[k] }, tt.home)
			if (err != nil) != tt.err || got != tt.want {
				t.Errorf("resolvePath = %q, %v; want %q (error %v)", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestParseArgs_FlagsAnywhere(t *testing.T) {
	e := &env{}
	fs := flag.NewFlagSet("append", flag.ContinueOnError)
	role := fs.String("role", "", "")
	pos, err := e.parseArgs(fs, []string{"--role", "user", "s1", "--json", "--db", "/x.db"}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"s1"}, pos); diff != "" {
		t.Error(diff)
	}
	if *role != "user" || !e.json || e.dbPath != "/x.db" {
		t.Errorf("role %q json %v db %q", *role, e.json, e.dbPath)
	}
	var u usageError
	if _, err := e.parseArgs(flag.NewFlagSet("x", flag.ContinueOnError), []string{"a", "b"}, 1, 1); !errors.As(err, &u) {
		t.Errorf("too many arguments = %v, want a usage error", err)
	}
}
