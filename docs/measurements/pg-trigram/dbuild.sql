\timing on
SET max_parallel_maintenance_workers = 0;
CREATE TABLE trgm_exp.d0 WITH (autovacuum_enabled=off) AS SELECT * FROM trgm_exp.dsrc ORDER BY id; ALTER TABLE trgm_exp.d0 ADD PRIMARY KEY (id);
CREATE TABLE trgm_exp.da WITH (autovacuum_enabled=off) AS SELECT * FROM trgm_exp.dsrc ORDER BY id; ALTER TABLE trgm_exp.da ADD PRIMARY KEY (id);
CREATE TABLE trgm_exp.db WITH (autovacuum_enabled=off) AS SELECT * FROM trgm_exp.dsrc ORDER BY id; ALTER TABLE trgm_exp.db ADD PRIMARY KEY (id);
CREATE TABLE trgm_exp.dc2 WITH (autovacuum_enabled=off) AS SELECT * FROM trgm_exp.dsrc ORDER BY id; ALTER TABLE trgm_exp.dc2 ADD PRIMARY KEY (id);
CREATE TABLE trgm_exp.dc8 WITH (autovacuum_enabled=off) AS SELECT * FROM trgm_exp.dsrc ORDER BY id; ALTER TABLE trgm_exp.dc8 ADD PRIMARY KEY (id);
VACUUM ANALYZE trgm_exp.dsrc; VACUUM ANALYZE trgm_exp.d0; VACUUM ANALYZE trgm_exp.da; VACUUM ANALYZE trgm_exp.db; VACUUM ANALYZE trgm_exp.dc2; VACUUM ANALYZE trgm_exp.dc8;
\! cat /proc/loadavg
CREATE INDEX da_content ON trgm_exp.da USING gin (content public.gin_trgm_ops);
\! cat /proc/loadavg
CREATE INDEX da_tool ON trgm_exp.da USING gin (tool_text public.gin_trgm_ops);
\! cat /proc/loadavg
CREATE INDEX db_both ON trgm_exp.db USING gin ((content || E'\n' || coalesce(tool_text, '')) public.gin_trgm_ops);
\! cat /proc/loadavg
CREATE INDEX dc2_content ON trgm_exp.dc2 USING gin (left(content, 2048) public.gin_trgm_ops);
CREATE INDEX dc2_tool ON trgm_exp.dc2 USING gin (tool_text public.gin_trgm_ops);
CREATE INDEX dc2_long ON trgm_exp.dc2 (id) WHERE length(content) > 2048;
\! cat /proc/loadavg
CREATE INDEX dc8_content ON trgm_exp.dc8 USING gin (left(content, 8192) public.gin_trgm_ops);
CREATE INDEX dc8_tool ON trgm_exp.dc8 USING gin (tool_text public.gin_trgm_ops);
CREATE INDEX dc8_long ON trgm_exp.dc8 (id) WHERE length(content) > 8192;
\! cat /proc/loadavg
ANALYZE trgm_exp.db; ANALYZE trgm_exp.dc2; ANALYZE trgm_exp.dc8;
SELECT c.relname, pg_relation_size(c.oid) AS bytes, round(pg_relation_size(c.oid)/1048576.0,2) AS mb, round(pg_relation_size(c.oid)/1e5,1) AS b_per_msg FROM pg_class c WHERE relnamespace='trgm_exp'::regnamespace AND relkind='i' AND relname ~ '^d' ORDER BY 1;
