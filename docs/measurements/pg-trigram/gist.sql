\timing on
SET max_parallel_maintenance_workers = 0;
CREATE TABLE trgm_exp.g0 WITH (autovacuum_enabled=off) AS SELECT * FROM trgm_exp.src WHERE id <= 100000 ORDER BY id; ALTER TABLE trgm_exp.g0 ADD PRIMARY KEY (id);
CREATE TABLE trgm_exp.ga WITH (autovacuum_enabled=off) AS SELECT * FROM trgm_exp.src WHERE id <= 100000 ORDER BY id; ALTER TABLE trgm_exp.ga ADD PRIMARY KEY (id);
CREATE TABLE trgm_exp.gc WITH (autovacuum_enabled=off) AS SELECT * FROM trgm_exp.src WHERE id <= 100000 ORDER BY id; ALTER TABLE trgm_exp.gc ADD PRIMARY KEY (id);
CREATE TABLE trgm_exp.gd WITH (autovacuum_enabled=off) AS SELECT * FROM trgm_exp.src WHERE id <= 100000 ORDER BY id; ALTER TABLE trgm_exp.gd ADD PRIMARY KEY (id);
VACUUM ANALYZE trgm_exp.g0; VACUUM ANALYZE trgm_exp.ga; VACUUM ANALYZE trgm_exp.gc; VACUUM ANALYZE trgm_exp.gd;
\! cat /proc/loadavg
CREATE INDEX ga_content ON trgm_exp.ga USING gin (content public.gin_trgm_ops);
CREATE INDEX ga_tool ON trgm_exp.ga USING gin (tool_text public.gin_trgm_ops);
\! cat /proc/loadavg
CREATE INDEX gc_content ON trgm_exp.gc USING gist (content public.gist_trgm_ops);
CREATE INDEX gc_tool ON trgm_exp.gc USING gist (tool_text public.gist_trgm_ops);
\! cat /proc/loadavg
CREATE INDEX gd_content ON trgm_exp.gd USING gist (content public.gist_trgm_ops(siglen=256));
CREATE INDEX gd_tool ON trgm_exp.gd USING gist (tool_text public.gist_trgm_ops(siglen=256));
\! cat /proc/loadavg
ANALYZE trgm_exp.ga; ANALYZE trgm_exp.gc; ANALYZE trgm_exp.gd;
SELECT c.relname, pg_relation_size(c.oid) AS bytes, round(pg_relation_size(c.oid)/1048576.0,2) AS mb, round(pg_relation_size(c.oid)/1e5,1) AS b_per_msg FROM pg_class c WHERE relnamespace='trgm_exp'::regnamespace AND relkind='i' AND relname ~ '^g' ORDER BY 1;
