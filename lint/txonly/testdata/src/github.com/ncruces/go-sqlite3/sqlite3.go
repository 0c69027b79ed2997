// Package sqlite3 is a stub of the ncruces driver's API for the tests.
package sqlite3

type Conn struct{}
type Txn struct{}
type Savepoint struct{}

func (c *Conn) Begin() Txn                    { return Txn{} }
func (c *Conn) BeginImmediate() (Txn, error)  { return Txn{}, nil }
func (c *Conn) BeginExclusive() (Txn, error)  { return Txn{}, nil }
func (c *Conn) BeginConcurrent() (Txn, error) { return Txn{}, nil }
func (c *Conn) Savepoint() Savepoint          { return Savepoint{} }
func (c *Conn) Exec(sql string) error         { return nil }
