\timing on
CREATE TABLE trgm_exp.m0 AS SELECT * FROM trgm_exp.src ORDER BY id; ALTER TABLE trgm_exp.m0 ADD PRIMARY KEY (id);
CREATE TABLE trgm_exp.ma AS SELECT * FROM trgm_exp.src ORDER BY id; ALTER TABLE trgm_exp.ma ADD PRIMARY KEY (id);
CREATE TABLE trgm_exp.mb AS SELECT * FROM trgm_exp.src ORDER BY id; ALTER TABLE trgm_exp.mb ADD PRIMARY KEY (id);
CREATE TABLE trgm_exp.mp AS SELECT * FROM trgm_exp.src ORDER BY id; ALTER TABLE trgm_exp.mp ADD PRIMARY KEY (id);
CREATE TABLE trgm_exp.mf AS SELECT * FROM trgm_exp.src ORDER BY id; ALTER TABLE trgm_exp.mf ADD PRIMARY KEY (id);
VACUUM ANALYZE trgm_exp.m0; VACUUM ANALYZE trgm_exp.ma; VACUUM ANALYZE trgm_exp.mb; VACUUM ANALYZE trgm_exp.mp; VACUUM ANALYZE trgm_exp.mf; VACUUM ANALYZE trgm_exp.src; VACUUM ANALYZE trgm_exp.sessions;
