-- Version 16: an index of the rewound messages alone.
--
-- A relevance search by words ranks a window of up to 2,000 matches, and
-- each had to be checked against its messages row (a b-tree descent into
-- the largest table) only to learn that it was not rewound and that its
-- session was not hidden. With no filter given and no session hidden (the
-- usual search), the window now asks this partial index instead: usually
-- empty, one page, and no cost to appending a message, which is active
-- (db/search_paths.go, docs/PERFORMANCE.md).

-- +goose Up
CREATE INDEX messages_rewound ON messages (id) WHERE state = 'rewound';

-- +goose Down
DROP INDEX messages_rewound;
