// Package sqlite3 is a stub of the ncruces driver's API for the tests.
package sqlite3

import "context"

type Conn struct{}

type OpenFlag int

func Open(filename string) (*Conn, error)                             { return nil, nil }
func OpenContext(ctx context.Context, filename string) (*Conn, error) { return nil, nil }
func OpenFlags(filename string, flags OpenFlag) (*Conn, error)        { return nil, nil }

func (c *Conn) Exec(sql string) error { return nil }
func (c *Conn) Close() error          { return nil }
