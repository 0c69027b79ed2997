-- Version 7: titles are unique per user, not across the store.
--
-- Two people sharing a gateway both call a chat "New chat"; the store must
-- not refuse the second. Sessions without a user (user_id NULL) share one
-- scope, so a single-user store behaves as before. Titles are compared in
-- their sanitised form (db/titles.go sanitizeTitle strips invisible and
-- control characters before storing), so the stored column is the
-- comparison key. Titles stored by earlier versions keep their form until
-- they are next set.

-- +goose Up
DROP INDEX sessions_title_unique;
CREATE UNIQUE INDEX sessions_title_unique ON sessions (COALESCE(user_id, ''), title) WHERE title IS NOT NULL;

-- +goose Down
DROP INDEX sessions_title_unique;
CREATE UNIQUE INDEX sessions_title_unique ON sessions (title) WHERE title IS NOT NULL;
