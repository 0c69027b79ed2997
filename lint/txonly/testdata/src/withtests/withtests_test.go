package withtests

import (
	"context"
	"database/sql"
	"testing"
)

func TestHolder(t *testing.T) {
	var c *sql.Conn
	ctx := context.Background()
	//sessiondb:allow txonly -- plays another process holding the write lock
	c.ExecContext(ctx, "BEGIN IMMEDIATE")
	c.ExecContext(ctx, "ROLLBACK") //sessiondb:allow txonly -- ends the holder's transaction
	c.ExecContext(ctx, "COMMIT")   // want `\(COMMIT\)`
	//sessiondb:allow txonly // want `sessiondb:allow txonly needs a reason`
	c.ExecContext(ctx, "BEGIN") // want `\(BEGIN\)`
}
