package main

import (
	"context"
	"flag"
	"fmt"
	"runtime/debug"
)

type versionJSON struct {
	Module    string `json:"module"`
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
}

// buildVersion reads the module version and the VCS stamp Go writes into
// the binary: a tagged `go install …@v1.2.3` has the version, a build
// from a clone has "(devel)" and the revision it was built from.
func buildVersion() versionJSON {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return versionJSON{Module: "github.com/sessiondb/sessiondb/cmd/sessiondb", Version: "unknown"}
	}
	v := versionJSON{Module: bi.Main.Path, Version: bi.Main.Version, GoVersion: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	return v
}

func runVersion(_ context.Context, e *env, args []string) error {
	if _, err := e.parseArgs(flag.NewFlagSet("version", flag.ContinueOnError), args, 0, 0); err != nil {
		return err
	}
	v := buildVersion()
	if e.json {
		return writeJSON(e.stdout, v)
	}
	line := "sessiondb " + v.Version
	if v.Revision != "" {
		line += " (revision " + v.Revision
		if v.Time != "" {
			line += ", " + v.Time
		}
		if v.Modified {
			line += ", with local changes"
		}
		line += ")"
	}
	_, err := fmt.Fprintf(e.stdout, "%s %s\n", line, v.GoVersion)
	return err
}
