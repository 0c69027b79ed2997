\timing on
CREATE SCHEMA trgm_exp;
CREATE TABLE trgm_exp.sessions AS SELECT id, source, model, started_at, hidden FROM bench_growth_1000000.sessions;
ALTER TABLE trgm_exp.sessions ADD PRIMARY KEY (id);
CREATE TABLE trgm_exp.src AS SELECT id, session_id, role, tool_name, created_at, state, content, tool_text FROM bench_growth_1000000.messages ORDER BY id;
ALTER TABLE trgm_exp.src ADD PRIMARY KEY (id);
SELECT pg_relation_size('trgm_exp.src'), pg_total_relation_size('trgm_exp.src');
