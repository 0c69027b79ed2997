-- The append path without the trigger's second UPDATE (issue 33).
--
-- messages_last_message_at updated the session row once for every
-- inserted message, in the transaction whose foreign-key check already
-- held a lock on that row and whose counter UPDATE rewrote it again: two
-- new versions of the session row a message, and under SERIALIZABLE with
-- concurrent appenders the server's own "new multixact has more than one
-- updating member" (XX000) about once in 3,000-4,500 appends. The
-- engine's writes now keep last_message_at in the statements that keep
-- the counters (SessionAddMessageCounts, SessionRecount: one row version
-- an append) and say so with the transaction-local setting
-- sessiondb.counts_last_message_at; the trigger stays for every other
-- writer (another program inserting rows by hand), which it still serves
-- as before.
--
-- fillfactor 70 leaves room on each page of sessions for the new version
-- of a row an append writes, so an update that changes no indexed column
-- (the counters alone) can be HOT; one that moves last_message_at, which
-- sessions_last_active indexes, cannot (docs/PERFORMANCE.md: the session
-- row's size). It applies to pages written from now on.

-- +goose Up
DROP TRIGGER messages_last_message_at ON messages;
CREATE TRIGGER messages_last_message_at AFTER INSERT ON messages
    FOR EACH ROW
    WHEN (current_setting('sessiondb.counts_last_message_at', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION messages_last_message_at();
ALTER TABLE sessions SET (fillfactor = 70);

-- +goose Down
ALTER TABLE sessions RESET (fillfactor);
DROP TRIGGER messages_last_message_at ON messages;
CREATE TRIGGER messages_last_message_at AFTER INSERT ON messages
    FOR EACH ROW EXECUTE FUNCTION messages_last_message_at();
