package store

import "fmt"

// SchemaStatus is where a store's schema stands against this build of
// sessiondb: what `sessiondb migrate --status` prints and a deploy
// pipeline checks before it rolls out a new build.
type SchemaStatus struct {
	// Where names the store: a file's path, or a server's schema.
	Where string
	// Version is the schema version the store is at; 0 when nothing has
	// been migrated there yet.
	Version int64
	// Latest is the newest schema version this build knows.
	Latest int64
}

// Current reports whether the store is at this build's version: an open
// with the engine's NoMigrate option succeeds.
func (s SchemaStatus) Current() bool { return s.Version == s.Latest }

// Behind reports whether the store needs migrating to this build.
func (s SchemaStatus) Behind() bool { return s.Version < s.Latest }

// Ahead reports whether a newer sessiondb migrated the store: this build
// refuses to open it (ErrSchemaTooNew).
func (s SchemaStatus) Ahead() bool { return s.Version > s.Latest }

// Migration is what one migrate step did: the schema went From one
// version To another (equal when it was current already).
type Migration struct {
	Where    string
	From, To int64
}

// Applied reports whether the step changed the schema.
func (m Migration) Applied() bool { return m.To != m.From }

// SchemaBehindError is ErrSchemaBehind with the versions: the store at
// Where is at Have, this build needs Want, and the open was not allowed
// to migrate (Reason says why: the caller's NoMigrate, a standby).
type SchemaBehindError struct {
	Where      string
	Have, Want int64
	Reason     string
}

func (e *SchemaBehindError) Error() string {
	return fmt.Sprintf("%s: %s is at schema version %d, this sessiondb needs %d, and %s; "+
		"run the migrate step first (sessiondb migrate --db …)", ErrSchemaBehind, e.Where, e.Have, e.Want, e.Reason)
}

// Is makes errors.Is(err, ErrSchemaBehind) match.
func (e *SchemaBehindError) Is(target error) bool { return target == ErrSchemaBehind }
