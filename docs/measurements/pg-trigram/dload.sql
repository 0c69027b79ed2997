\timing on
CREATE TABLE trgm_exp.dl (id bigint PRIMARY KEY, content text);
CREATE TABLE trgm_exp.dt (id bigint PRIMARY KEY, tool_text text);
\copy trgm_exp.dl FROM '/tmp/trgm/d/long.tsv'
\copy trgm_exp.dt FROM '/tmp/trgm/d/tool.tsv'
CREATE TABLE trgm_exp.dsrc WITH (autovacuum_enabled=off) AS
 SELECT s.id - 300000 AS id, s.session_id, CASE WHEN l.id IS NOT NULL THEN 'tool' ELSE s.role END AS role, s.tool_name, s.created_at, s.state,
        COALESCE(l.content, s.content) AS content, t.tool_text
 FROM trgm_exp.src s LEFT JOIN trgm_exp.dl l ON l.id = s.id - 300000 LEFT JOIN trgm_exp.dt t ON t.id = s.id - 300000
 WHERE s.id > 300000 AND s.id <= 400000 ORDER BY s.id;
ALTER TABLE trgm_exp.dsrc ADD PRIMARY KEY (id);
DROP TABLE trgm_exp.dl; DROP TABLE trgm_exp.dt;
SELECT count(*), count(*) FILTER (WHERE length(content) > 2048) AS gt2048, count(*) FILTER (WHERE length(content) > 8192) AS gt8192, count(tool_text) AS with_tool, round(avg(octet_length(content))) AS avg_bytes, sum(octet_length(content)) AS content_bytes, pg_total_relation_size('trgm_exp.dsrc') FROM trgm_exp.dsrc;
