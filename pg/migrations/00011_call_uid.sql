-- A tool result's pairing kept by a copy (issue 35, digest §1), as
-- SQLite's migration 22.
--
-- A tool call's UID lives inside the calling message's stored calls
-- (tool_calls_json), minted at insert, and a result reads its call's UID
-- by pairing on read (store/toolpairs.go): an append stores nothing more.
-- messages.call_uid holds a result's call UID only where pairing on read
-- cannot find the call: a result rewritten by ReplaceMessages or imported
-- without the message that called it (Message.AsNew carries it). NULL
-- everywhere else; adding a nullable column rewrites no row.

-- +goose Up
ALTER TABLE messages ADD COLUMN call_uid text COLLATE "C";

-- +goose Down
ALTER TABLE messages DROP COLUMN call_uid;
