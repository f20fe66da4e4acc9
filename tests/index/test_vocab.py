"""The vocabulary's text form (index/vocab.py) finds the same terms as the scan of ``terms``,
follows small and large updates, and is ignored when it does not match ``terms``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ama.index import vocab
from ama.index.db import connect
from tests.index.helpers import Builder, ama

TOKENS = ["pars", "parser", "i", "e", "lexer", "zzz-none", "İ".lower(), "ndex", "x"]


def _sessions(sessions_dir: Path, tmp_path: Path) -> Builder:
    ws = tmp_path / "ws"
    ws.mkdir()
    s = Builder(sessions_dir, str(ws), created="2026-03-01T09:00:00.000Z")
    s.user("Fix the PARSER crash in the lexer of İstanbul", "2026-03-01T10:00:00.000Z")
    s.assistant("2026-03-01T10:00:05.000Z", "Looking at the parser index and the INDEX of terms")
    t = Builder(sessions_dir, str(ws), created="2026-03-02T09:00:00.000Z")
    t.user("rename the lexer, then parse the indices", "2026-03-02T10:00:00.000Z")
    return s


def _scan(db: sqlite3.Connection, tok: str) -> set[str]:
    rows = db.execute("SELECT term FROM terms WHERE instr(term, ?) OR (? AND instr(term, 'İ'))", (tok, "i" in tok))
    return {t for (t,) in rows if tok in t.lower()}


def _hits(word: str) -> tuple[list[dict], list[dict]]:
    indexed = ama("sessions", "search", word, "--all", "--json").stdout
    scanned = ama("sessions", "search", word, "--all", "--json", "--no-cache").stdout
    return [json.loads(x) for x in indexed.splitlines()], [json.loads(x) for x in scanned.splitlines()]


def test_text_form_finds_what_the_scan_finds(sessions_dir: Path, tmp_path: Path) -> None:
    _sessions(sessions_dir, tmp_path)
    ama("stats", "--all")  # builds the index
    db = connect()
    try:
        assert vocab.consistent(db)
        found = vocab.terms_for(db, TOKENS, 10_000)
        assert found is not None
        for tok in TOKENS:
            assert set(found[tok]) == _scan(db, tok), tok
        assert any("İ" in t for t in found["i"])
        limited = vocab.terms_for(db, ["e"], 2)
        assert limited is not None and len(limited["e"]) == 2  # the limit
        # rows of a few terms each (a build's rows are CHUNK_BYTES long): the same terms
        db.execute("BEGIN IMMEDIATE")
        vocab.CHUNK_BYTES, saved = 10, vocab.CHUNK_BYTES
        try:
            vocab.rebuild(db)
        finally:
            vocab.CHUNK_BYTES = saved
        db.execute("COMMIT")
        (rows,) = db.execute("SELECT count(*) FROM terms_text").fetchone()
        assert rows > 3 and vocab.consistent(db)
        # the rows, in order, are the terms in key order; each counts its own terms
        chunks = db.execute("SELECT n, data FROM terms_text ORDER BY chunk").fetchall()
        terms = [t for (t,) in db.execute("SELECT term FROM terms ORDER BY term")]
        assert b"\n".join(bytes(d) for _n, d in chunks).decode().split("\n") == terms
        assert all(n == len(bytes(d).split(b"\n")) for n, d in chunks)
        again = vocab.terms_for(db, TOKENS, 10_000)
        assert again is not None and {t: set(v) for t, v in again.items()} == {t: set(v) for t, v in found.items()}
    finally:
        db.close()


def test_an_appended_turn_adds_a_row_and_is_found(sessions_dir: Path, tmp_path: Path) -> None:
    s = _sessions(sessions_dir, tmp_path)
    ama("stats", "--all")
    s.user("now the quokkaesque refactor", "2026-03-01T11:00:00.000Z")
    indexed, scanned = _hits("quokkaesq")
    assert indexed == scanned and len(indexed) == 1
    db = connect()
    try:
        assert vocab.consistent(db)
        (rows,) = db.execute("SELECT count(*) FROM terms_text").fetchone()
        assert rows == 2  # the build's row and the appended turn's new terms
        assert vocab.terms_for(db, ["quokka"], 10) == {"quokka": ["quokkaesque"]}
    finally:
        db.close()


def test_a_text_form_that_does_not_match_is_not_used(sessions_dir: Path, tmp_path: Path) -> None:
    s = _sessions(sessions_dir, tmp_path)
    ama("stats", "--all")
    before = _hits("lexer")
    db = connect()
    try:
        # what an index from before the text form, or a writer that does not know it, leaves
        db.execute("DELETE FROM terms_text WHERE chunk = (SELECT max(chunk) FROM terms_text)")
        assert not vocab.consistent(db) and vocab.terms_for(db, ["lexer"], 10) is None
    finally:
        db.close()
    assert _hits("lexer") == before and len(before[0]) == 2  # the scan of terms answers
    s.user("the wombat parser", "2026-03-01T11:00:00.000Z")
    indexed, scanned = _hits("wombat")  # the next small update rebuilds the text form
    assert indexed == scanned and len(indexed) == 1
    db = connect()
    try:
        assert vocab.consistent(db)
    finally:
        db.close()
