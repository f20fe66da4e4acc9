"""Golden tests of every `ama stats` metric on hand-built sessions, through the index and
through the scan (`--no-cache`), which must agree exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.index.helpers import Builder, ama, ama_json, restyle, usage

UTC = {"TZ": "UTC"}


@pytest.fixture
def corpus(sessions_dir: Path, tmp_path: Path) -> dict:
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    a, b = str(a_dir), str(b_dir)

    # A: a priced, cache-reporting endpoint on channel "main"; retries, errors, usage kinds
    s = Builder(sessions_dir, a, created="2026-03-01T09:00:00.000Z")
    s.model_change("2026-03-01T09:00:00.000Z", "anthropic", "claude", channel="main")
    s.user("fix the parser", "2026-03-01T10:00:00.000Z")
    s.assistant(
        "2026-03-01T10:00:05.000Z",
        u=usage(100, 20, 1000, 0, 0.01),
        stop="toolUse",
        tools=[("read", {"path": "a"}), ("grep", {"pattern": "x"})],
    )
    s.result("2026-03-01T10:00:06.000Z", "file a")
    s.result("2026-03-01T10:00:07.000Z", "match x", name="grep")
    s.assistant("2026-03-01T10:00:20.000Z", "done", u=usage(50, 10, 1100, 0, 0.005))
    s.user("also handle tabs", "2026-03-01T10:00:21.000Z", origin="steer")
    failed = s.assistant(
        "2026-03-01T10:00:30.000Z", "", u=usage(10, 5, 0, 0, 0.001), stop="error", error="overloaded"
    )
    s.context_edit("2026-03-01T10:00:31.000Z", failed, "retry")
    s.assistant(
        "2026-03-01T10:00:40.000Z",
        "tabs too",
        u=usage(10, 5, 1200, 0, 0.002),
        stop="toolUse",
        tools=[("read", {"path": "b"})],
    )
    s.usage_entry(
        "2026-03-01T10:01:00.000Z", "cache_warm", "anthropic", "claude", usage(0, 0, 0, 500, 0.0005)
    )
    s.usage_entry("2026-03-01T10:01:05.000Z", "permission_classify", "openai", "mini", usage(30, 2))
    s.compaction("2026-03-01T10:02:00.000Z", "summary", usage(200, 50, 0, 0, 0.003))
    s.branch_summary("2026-03-01T10:02:30.000Z", "no usage here")
    for ttfb, dur, status in ((800, 4000, 200), (1200, 6000, 200), (600, 3000, 529)):
        s.custom(
            "2026-03-01T10:03:00.000Z",
            "ama.request",
            {
                "purpose": "conversation",
                "provider": "anthropic",
                "model": "claude",
                "channel": "main",
                "startedAt": "x",
                "firstByteMs": ttfb,
                "durationMs": dur,
                "httpStatus": status,
                "attempt": 1,
                "stopReason": "stop",
            },
        )
    s.custom("2026-03-01T10:03:01.000Z", "ama.todo", {"items": []})

    # B: a relay that reports no caching and has no prices; turns around midnight UTC
    s = Builder(sessions_dir, b, created="2026-03-02T23:00:00.000Z")
    s.model_change("2026-03-02T23:00:00.000Z", "relay", "deepseek")
    s.user("first", "2026-03-02T23:30:00.000Z")
    s.assistant(
        "2026-03-02T23:30:10.000Z",
        provider="relay",
        model="deepseek",
        u=usage(500, 100),
        tools=[("edit", {"path": "c"})],
    )
    s.user("second", "2026-03-03T00:10:00.000Z")
    s.assistant("2026-03-03T00:10:30.000Z", provider="relay", model="deepseek", u=usage(600, 50))
    s.user("never answered", "2026-03-03T00:20:00.000Z")

    # C: a turn still open at the end of the file; a price of zero is still a price
    s = Builder(sessions_dir, a, created="2026-03-05T11:00:00.000Z")
    s.model_change("2026-03-05T11:00:00.000Z", "openai", "gpt")
    s.user("hello", "2026-03-05T12:00:00.000Z")
    s.assistant("2026-03-05T12:00:03.000Z", provider="openai", model="gpt", u=usage(40, 10, 0, 0, 0.0))

    # a file with a damaged header is counted as invalid, nothing else
    bad = sessions_dir / "--x--" / "bad.jsonl"
    bad.parent.mkdir()
    bad.write_bytes(b"not json\n")
    return {"a": a, "b": b}


HIT_A = 3300 / (370 + 3300 + 500)


def expected_totals() -> dict:
    return {
        "sessions": 3,
        "requests": 10,
        "requestsByKind": {"conversation": 7, "cache_warm": 1, "compaction": 1, "permission_classify": 1},
        "turns": 4,
        "turnDurationMs": 40000 + 10000 + 30000 + 3000,
        "averageTurnMs": 20750.0,
        "tokens": {"input": 1540, "output": 252, "cacheRead": 3300, "cacheWrite": 500},
        "cacheHitRate": HIT_A,
        "cost": 0.0215,
        "pricedRequests": 7,
        "unpricedRequests": 3,
        "errors": 1,
        "retries": 1,
        "cacheEndpoints": {"reporting": 1, "total": 4},
        "tools": [{"name": "read", "calls": 2}, {"name": "edit", "calls": 1}, {"name": "grep", "calls": 1}],
        "toolsTotal": {"names": 3, "calls": 4},
    }


def stats(*args: str, env: dict = UTC, cwd: str | None = None) -> tuple[dict, dict]:
    """The report through the index and through the scan; asserts they agree."""
    indexed = ama_json("stats", *args, env=env, cwd=cwd)
    scanned = ama_json("stats", *args, "--no-cache", env=env, cwd=cwd)
    fi, fs = indexed.pop("files"), scanned.pop("files")
    assert indexed == scanned
    assert fs["cached"] == 0
    return indexed, {"index": fi, "scan": fs}


def test_totals_and_file_counts(corpus: dict) -> None:
    r, files = stats("--all")
    want = expected_totals()
    got = {k: r[k] for k in want}
    for k in ("cacheHitRate", "cost"):
        assert got.pop(k) == pytest.approx(want.pop(k))
    assert got == want
    assert files["scan"] == {"scanned": 4, "cached": 0, "invalid": 1}
    assert files["index"]["invalid"] == 1
    again = ama_json("stats", "--all", env=UTC)  # answered from the query cache this time
    assert again.pop("files") == {"scanned": 0, "cached": 4, "invalid": 1}
    assert again == r


def test_by_model_groups_latency_and_http_status(corpus: dict) -> None:
    r, _ = stats("--all", "--by", "model")
    groups = {g["key"]: g for g in r["groups"]}
    assert [g["key"] for g in r["groups"]] == [
        "anthropic/claude@main",
        "relay/deepseek",
        "openai/gpt",
        "openai/mini",
    ]
    a = groups["anthropic/claude@main"]
    assert (a["requests"], a["turns"], a["sessions"], a["errors"], a["retries"]) == (6, 1, 1, 1, 1)
    assert a["requestsByKind"] == {"conversation": 4, "cache_warm": 1, "compaction": 1}
    assert a["cacheHitRate"] == pytest.approx(HIT_A)
    assert a["cost"] == pytest.approx(0.0215)
    relay = groups["relay/deepseek"]
    assert relay["cacheHitRate"] is None and relay["cost"] is None and relay["unpricedRequests"] == 2
    assert relay["turns"] == 2 and relay["turnDurationMs"] == 40000
    assert groups["openai/gpt"]["cost"] == 0.0 and groups["openai/gpt"]["pricedRequests"] == 1
    assert groups["openai/mini"]["turns"] == 0
    eps = {e["endpoint"]: e for e in r["endpoints"]}
    e = eps["anthropic/claude@main"]
    assert e["reportsCache"] is True and e["channel"] == "main"
    assert e["ttfbMs"] == {"count": 3, "p50": 800.0, "p90": 1200.0, "p99": 1200.0, "max": 1200.0}
    assert e["durationMs"] == {"count": 3, "p50": 4000.0, "p90": 6000.0, "p99": 6000.0, "max": 6000.0}
    assert e["httpStatus"] == {"200": 2, "529": 1}
    assert eps["relay/deepseek"]["reportsCache"] is False and eps["relay/deepseek"]["ttfbMs"] is None
    human = ama("stats", "--all", "--by", "model", env=UTC).stdout
    assert "Latency per endpoint" in human and "529×1" in human and "anthropic/claude@main" in human


def test_channels_providers_projects(corpus: dict) -> None:
    r, _ = stats("--all", "--by", "channel")
    assert [g["key"] for g in r["groups"]] == ["anthropic@main", "relay", "openai"]
    r, _ = stats("--all", "--by", "provider")
    assert {g["key"]: g["requests"] for g in r["groups"]} == {"anthropic": 6, "relay": 2, "openai": 2}
    r, _ = stats("--by", "project")  # --by project without --project: every project
    assert {g["key"]: g["sessions"] for g in r["groups"]} == {corpus["a"]: 2, corpus["b"]: 1}


def test_scope_defaults_to_the_current_directory(corpus: dict) -> None:
    r, _ = stats(cwd=corpus["b"])
    assert r["scope"] == {"project": corpus["b"]}
    assert (r["sessions"], r["requests"], r["turns"], r["cost"]) == (1, 2, 2, None)
    r, _ = stats("--project", corpus["a"])
    assert (r["sessions"], r["requests"]) == (2, 8)
    out = ama("stats", "--project", corpus["b"], env=UTC).stdout
    assert "— (none of the 2 requests has a price; tokens only)" in out
    assert "none of the 1 endpoints reports caching" in out


@pytest.mark.parametrize(
    ("tz", "days"),
    [
        ("UTC", {"2026-03-01": 7, "2026-03-02": 1, "2026-03-03": 1, "2026-03-05": 1}),
        ("Asia/Tokyo", {"2026-03-01": 7, "2026-03-03": 2, "2026-03-05": 1}),
        ("America/New_York", {"2026-03-01": 7, "2026-03-02": 2, "2026-03-05": 1}),
    ],
)
def test_day_buckets_follow_the_local_time_zone(corpus: dict, tz: str, days: dict) -> None:
    r, _ = stats("--all", "--by", "day", env={"TZ": tz})
    assert {g["key"]: g["requests"] for g in r["groups"]} == days


def test_a_time_zone_change_invalidates_the_index(corpus: dict) -> None:
    utc = ama_json("stats", "--all", "--by", "day", env={"TZ": "UTC"})
    tokyo = ama_json("stats", "--all", "--by", "day", env={"TZ": "Asia/Tokyo"})
    assert tokyo["files"]["scanned"] == 4  # rebuilt, not answered from UTC buckets
    assert [g["key"] for g in utc["groups"]] != [g["key"] for g in tokyo["groups"]]


def test_since_until_ranges(corpus: dict) -> None:
    r, _ = stats("--all", "--since", "2026-03-03")
    assert (r["requests"], r["turns"], r["range"]) == (2, 2, {"since": "2026-03-03", "until": None})
    r, _ = stats("--all", "--since", "2026-03-02", "--until", "2026-03-02")
    assert (r["requests"], r["turns"], r["tokens"]["input"]) == (1, 1, 500)
    r, _ = stats("--all", "--until", "2026-03-01")
    assert r["requests"] == 7 and r["tools"][:2] == [
        {"name": "read", "calls": 2},
        {"name": "grep", "calls": 1},
    ]
    r, _ = stats("--all", "--since", "today")
    assert r["requests"] == 0 and r["sessions"] == 0


def test_human_layout(corpus: dict) -> None:
    out = ama("stats", "--all", "--top", "2", env=UTC).stdout.splitlines()
    assert out[0] == "All time · all projects · 3 sessions"
    assert (
        out[1]
        == "Requests          10 (conversation 7 · cache_warm 1 · compaction 1 · permission_classify 1)"
    )
    assert out[2] == "Turns             4 · average 20.8s"
    assert out[3] == "Tokens            input 1.5k · output 252 · cache read 3.3k · cache write 500"
    assert out[4].startswith("Cache hit rate    79.1% (endpoints reporting cache 1/4;")
    assert out[5] == "Cost              $0.0215 (3 more requests without a price, not counted)"
    assert out[6] == "Errors / retries  1 / 1"
    assert "Top 2 tools of 3" in out and "  read  2" in out


def test_bad_arguments_exit_2_with_the_value(corpus: dict) -> None:
    p = ama("stats", "--since", "lastweek", rc=2)
    assert "lastweek" in p.stderr
    p = ama("stats", "--since", "2026-03-05", "--until", "2026-03-01", rc=2)
    assert "after --until" in p.stderr
    p = ama("stats", "--by", "color", rc=2)
    assert "color" in p.stderr
    p = ama("stats", "--top", "-1", rc=2)
    assert "--top" in p.stderr


def test_the_parallel_scan_gives_the_same_report(corpus: dict) -> None:
    want = ama_json("stats", "--all", "--by", "model", env=UTC)
    got = ama_json("stats", "--all", "--by", "model", "--no-cache", env={**UTC, "AMA_SCAN_WORKERS": "3"})
    want.pop("files"), got.pop("files")
    assert got == want


@pytest.mark.parametrize("style", ["spaced", "shuffled"])
def test_the_same_report_from_any_json_layout(corpus: dict, sessions_dir: Path, style: str) -> None:
    """Python's spacing and another key order: the line prefilter and the typed fast paths
    must give what compact lines give, through the index and the scan."""
    want, _ = stats("--all", "--by", "model")
    restyle(sessions_dir, style)
    got, files = stats("--all", "--by", "model")
    assert got == want
    assert files["index"]["scanned"] == 4 and files["scan"]["scanned"] == 4


def test_the_line_prefilter_skips_the_same_lines_in_python_spacing(corpus: dict, sessions_dir: Path) -> None:
    from ama.index.facts import RELEVANT

    compact = [line for p in sorted(sessions_dir.rglob("*.jsonl")) for line in p.read_bytes().splitlines()]
    restyle(sessions_dir, "spaced")
    spaced = [line for p in sorted(sessions_dir.rglob("*.jsonl")) for line in p.read_bytes().splitlines()]
    assert len(compact) == len(spaced) and compact != spaced
    verdicts = [bool(RELEVANT.match(b"\n" + line)) for line in compact]
    assert verdicts == [bool(RELEVANT.match(b"\n" + line)) for line in spaced]
    assert 0 < sum(verdicts) < len(verdicts)  # some lines skipped, some kept


def test_the_prefilter_keeps_lines_it_cannot_prove_irrelevant() -> None:
    from ama.index.facts import RELEVANT

    skipped = [
        b'{"type": "message", "id": "a", "parentId": null, "timestamp": "t", "message": {"role": "toolResult"}}',
        b'{"id":"a","type":"label","label":"x"}',
        b'{"type":"custom", "id":"a", "parentId":"b", "customType":"ama.todo","data":{}}',
    ]
    kept = [
        # the role sits in a nested object, not in the entry's own message
        b'{"type":"message","details":{"message":{"role":"toolResult"}},"message":{"role":"assistant"}}',
        b'{"type":"message","id":"a\\"b","message":{"role":"toolResult"}}',  # an escape: parse it
        b'{"type":"custom","id":"a","customType":"ama.request","data":{}}',
        b'{"message":{"role":"toolResult"},"type":"message"}',  # another key order: parse it
    ]
    assert not any(RELEVANT.match(b"\n" + line) for line in skipped)
    assert all(RELEVANT.match(b"\n" + line) for line in kept)


def test_rows_summed_by_sqlite_give_the_per_file_report(corpus: dict, sessions_dir: Path, monkeypatch) -> None:
    """A report without --by sums the request and turn rows in SQLite and counts the
    sessions there: the same report as adding the rows of each file in Python."""
    import time

    from ama.index import db as D
    from ama.index import stats as S
    from ama.index.indexer import refresh

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    # a turn that starts before midnight and is answered after: up to that day the
    # session has a turn and no request
    s = Builder(sessions_dir, "/midnight", created="2026-03-05T09:00:00.000Z")
    s.user("late", "2026-03-05T23:59:58.000Z")
    s.assistant("2026-03-06T00:00:05.000Z")
    s.user("again", "2026-03-06T10:00:00.000Z")
    s.assistant("2026-03-06T10:00:05.000Z")
    db = D.connect()
    try:
        rid = refresh(db, str(sessions_dir)).root_id
        cwds = [c for (c,) in db.execute("SELECT DISTINCT cwd FROM files WHERE cwd IS NOT NULL")]
        queries = [S.StatsQuery(), S.StatsQuery(since="2026-03-02"), S.StatsQuery(until="2026-03-01"),
                   S.StatsQuery(since="2026-03-02", until="2026-03-02"), S.StatsQuery(since="2099-01-01")]  # fmt: skip
        queries += [S.StatsQuery(project=c) for c in cwds]
        queries += [S.StatsQuery(until="2026-03-05", project="/midnight")]
        sessions = []
        for q in queries:
            summed = S.aggregate(S.from_index(db, rid, q, summed=True), q)
            per_file = S.aggregate(S.from_index(db, rid, q, summed=False), q)
            assert summed == per_file, vars(q)
            sessions.append(summed["sessions"])
        assert sessions[0] >= 3 and sessions[4] == 0 and len(set(sessions)) > 2
        assert sessions[-1] == 1  # the midnight session, by its turn alone
    finally:
        db.close()
        monkeypatch.undo()
        time.tzset()
