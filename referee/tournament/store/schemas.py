"""The SQL that creates the stores' tables: SQLite's and PostgreSQL's (see docs/store.md)."""

from __future__ import annotations

__all__ = ["APPLICATION", "PG_SCHEMA", "SQLITE_RUNNERS", "SQLITE_SCHEMA", "SQLITE_VERSION"]

SQLITE_VERSION = 2
"""Version of the SQLite table layout (table ``schema_version``)."""
APPLICATION = "gin-referee tournament store"
"""``meta.application`` of a SQLite store."""

_FINAL = "BEGIN SELECT RAISE(ABORT, 'recorded data is final'); END;"
SQLITE_SCHEMA = f"""CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tournament (id INTEGER PRIMARY KEY CHECK (id = 1), config_json TEXT NOT NULL,
    config_hash TEXT NOT NULL, created_at REAL NOT NULL);
CREATE TABLE games (
    game_id INTEGER PRIMARY KEY CHECK (game_id >= 0), pairing TEXT NOT NULL,
    seat0 TEXT NOT NULL, seat1 TEXT NOT NULL, deal_id TEXT NOT NULL, pair_index INTEGER,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'claimed', 'done')),
    owner TEXT, lease TEXT, lease_expires REAL, attempts INTEGER NOT NULL DEFAULT 0,
    result_json TEXT, timings_json TEXT, recorded_at REAL,
    CHECK (status <> 'claimed' OR (lease IS NOT NULL AND lease_expires IS NOT NULL)),
    CHECK ((status = 'done') = (result_json IS NOT NULL AND recorded_at IS NOT NULL)));
CREATE INDEX games_status ON games (status);
CREATE INDEX games_open ON games (game_id) WHERE status <> 'done';
CREATE TABLE faults (id INTEGER PRIMARY KEY, game_id INTEGER NOT NULL REFERENCES games (game_id),
    seat INTEGER, kind TEXT NOT NULL, detail TEXT, hand INTEGER, request_id INTEGER,
    extra_json TEXT);
CREATE INDEX faults_game ON faults (game_id);
CREATE TRIGGER games_done_final BEFORE UPDATE ON games WHEN OLD.status = 'done' {_FINAL}
CREATE TRIGGER games_kept BEFORE DELETE ON games {_FINAL}
CREATE TRIGGER faults_final BEFORE UPDATE ON faults {_FINAL}
CREATE TRIGGER faults_kept BEFORE DELETE ON faults {_FINAL}
CREATE TRIGGER tournament_final BEFORE UPDATE ON tournament {_FINAL}
CREATE TRIGGER tournament_kept BEFORE DELETE ON tournament {_FINAL}
INSERT INTO schema_version (version) VALUES ({SQLITE_VERSION});
INSERT INTO meta (key, value) VALUES ('application', '{APPLICATION}')"""
SQLITE_RUNNERS = """CREATE TABLE IF NOT EXISTS runners (owner TEXT PRIMARY KEY, host TEXT NOT NULL,
    pid INTEGER NOT NULL, role TEXT NOT NULL, expires REAL NOT NULL)"""
PG_SCHEMA = """
CREATE TABLE gin_schema (version int NOT NULL);
CREATE TABLE tournament (
    tournament text PRIMARY KEY, config jsonb NOT NULL, config_hash text NOT NULL,
    created_at double precision NOT NULL);
CREATE TABLE meta (tournament text NOT NULL REFERENCES tournament, key text NOT NULL,
    value text NOT NULL, PRIMARY KEY (tournament, key));
CREATE TABLE games (
    tournament text NOT NULL REFERENCES tournament, game_id int NOT NULL CHECK (game_id >= 0),
    pairing text NOT NULL, seat0 text NOT NULL, seat1 text NOT NULL, deal_id text NOT NULL,
    pair_index int, status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'claimed', 'done')),
    owner text, lease text, lease_expires double precision, attempts int NOT NULL DEFAULT 0,
    result jsonb, timings jsonb, recorded_at double precision,
    PRIMARY KEY (tournament, game_id),
    CHECK (status <> 'claimed' OR (lease IS NOT NULL AND lease_expires IS NOT NULL)),
    CHECK ((status = 'done') = (result IS NOT NULL AND recorded_at IS NOT NULL)));
CREATE INDEX games_open ON games (tournament, game_id) WHERE status <> 'done';
CREATE INDEX games_status ON games (tournament, status);
CREATE TABLE faults (
    id bigserial PRIMARY KEY, tournament text NOT NULL, game_id int NOT NULL,
    seat smallint, kind text NOT NULL, detail text, hand int, request_id bigint, extra jsonb,
    FOREIGN KEY (tournament, game_id) REFERENCES games);
CREATE INDEX faults_game ON faults (tournament, game_id);
CREATE TABLE files (tournament text NOT NULL, game_id int NOT NULL, name text NOT NULL,
    data bytea NOT NULL, PRIMARY KEY (tournament, game_id, name),
    FOREIGN KEY (tournament, game_id) REFERENCES games);
CREATE TABLE runners (tournament text NOT NULL REFERENCES tournament, owner text NOT NULL,
    host text NOT NULL, pid int NOT NULL, role text NOT NULL, expires double precision NOT NULL,
    PRIMARY KEY (tournament, owner));
CREATE FUNCTION gin_final() RETURNS trigger LANGUAGE plpgsql AS
    $$ BEGIN RAISE EXCEPTION 'recorded data is final'; END $$;
CREATE TRIGGER games_done_final BEFORE UPDATE ON games FOR EACH ROW
    WHEN (OLD.status = 'done') EXECUTE FUNCTION gin_final();
CREATE TRIGGER games_kept BEFORE DELETE ON games FOR EACH ROW EXECUTE FUNCTION gin_final();
CREATE TRIGGER faults_final BEFORE UPDATE OR DELETE ON faults
    FOR EACH ROW EXECUTE FUNCTION gin_final();
CREATE TRIGGER files_final BEFORE UPDATE OR DELETE ON files
    FOR EACH ROW EXECUTE FUNCTION gin_final();
CREATE TRIGGER tournament_final BEFORE UPDATE OR DELETE ON tournament
    FOR EACH ROW EXECUTE FUNCTION gin_final()"""
