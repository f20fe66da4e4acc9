"""The redaction rule table against a corpus: one fake sample per rule, near-misses kept."""

from __future__ import annotations

import base64
import json
import random
import re
from pathlib import Path

import pytest

from ama.export.redact import MASK, PathMask, clean
from ama.secret_patterns import CONTEXT_RULES, RULES, looks_secret

CORPUS = Path(__file__).parent.parent / "fixtures" / "secrets"
#: rules that are not in the token table but are checked by the corpus too
EXTRA = {"private-key", "authorization", "url-credentials", "generic-assignment"}


def samples() -> list[tuple[str, str, str]]:
    """(rule, text, secret): the secret is stored in pieces and joined here."""
    rows = json.loads((CORPUS / "samples.json").read_text())
    return [(r["rule"], r["text"].replace("{}", "".join(r["secret"])), "".join(r["secret"])) for r in rows]


def near_misses() -> list[str]:
    lines = (CORPUS / "near_misses.txt").read_text().splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def test_every_rule_has_a_sample_and_the_corpus_names_only_known_rules() -> None:
    names = {r.name for r in RULES} | {r.name for r in CONTEXT_RULES}
    covered = {rule for rule, _, _ in samples()}
    assert names - covered == set()
    assert covered - names - EXTRA == set()
    families = {r.family for r in RULES}
    assert {"cloud", "payment", "chat", "vcs", "registry"} <= families


@pytest.mark.parametrize(
    ("rule", "text", "secret"), samples(), ids=lambda v: v if isinstance(v, str) and len(v) < 40 else ""
)
def test_each_sample_is_redacted(rule: str, text: str, secret: str) -> None:
    out = clean(text)
    assert secret not in out and MASK in out, (rule, out)
    # no long piece of the secret survives either (a partial match would leave a tail)
    for i in range(0, max(1, len(secret) - 12), 4):
        assert secret[i : i + 12] not in out or len(secret) < 12, (rule, out)


@pytest.mark.parametrize("text", near_misses())
def test_near_misses_stay(text: str) -> None:
    assert clean(text) == text


def test_a_base64_image_stays() -> None:
    blob = base64.b64encode(random.Random(7).randbytes(30_000)).decode()
    text = f'{{"type": "image", "mimeType": "image/png", "data": "data:image/png;base64,{blob}"}}'
    assert clean(text) == text


def test_the_named_misses_of_issue_10() -> None:
    by_rule = {rule: text for rule, text, _ in samples()}
    for rule in (
        "aws-secret-access-key",
        "stripe-secret-key",
        "slack-webhook-url",
        "sendgrid-api-key",
        "gitlab-token",
        "huggingface-token",
    ):
        assert MASK in clean(by_rule[rule]), rule
    stripe = [clean(t) for r, t, _ in samples() if r == "stripe-secret-key"]
    assert all(MASK in s for s in stripe) and len(stripe) == 3  # sk_live_, rk_live_, sk_test_


def test_generic_assignments() -> None:
    assert clean("password=hunter2") == "password=[REDACTED]"
    assert clean("DB_PASS: 'correct horse'") == "DB_PASS: '[REDACTED]'"
    assert clean("--token=abc123def") == "--token=[REDACTED]"
    assert clean('"signing_key": "Zk3q9XwP0aLm2VbN7cRt5YhJ"') == '"signing_key": "[REDACTED]"'
    assert clean('"sort_key": "created_at"') == '"sort_key": "created_at"'  # low entropy: kept
    assert clean("password = getpass") == "password = getpass"  # code: a variable


def test_looks_secret_names_the_rule() -> None:
    slack = next(s for r, _, s in samples() if r == "slack-webhook-url")
    assert looks_secret(slack) == "slack-webhook-url"
    assert looks_secret("postgres://u:" + "pw" + "@db/x") == "url-credentials"
    assert looks_secret("/usr/bin:/bin") is None
    assert looks_secret("6dcb09b5b57875f334f61aebed695e2e4193db5e") is None


def test_path_mask() -> None:
    mask = PathMask.for_session("/home/alice/proj", "/home/alice")
    assert mask.apply("Created /home/alice/proj/a.txt") == "Created <workspace>/a.txt"
    assert mask.apply("cd /home/alice/proj && ls") == "cd <workspace> && ls"
    assert mask.apply("see /home/alice/.bashrc") == "see ~/.bashrc"
    assert mask.apply("/home/alice/project2/x") == "~/project2/x"  # not the workspace
    assert mask.apply("/home/alicent/x") == "/home/alicent/x"  # not the home either
    assert mask.apply("https://example.com/home/alice/proj") == "https://example.com/home/alice/proj"
    assert PathMask.for_session("/", "/").apply("/etc/passwd") == "/etc/passwd"
    assert re.fullmatch(r"<workspace>", mask.apply("/home/alice/proj"))


def test_every_token_rule_is_long_enough_for_the_candidate_scan() -> None:
    """Only runs of MIN_TOKEN token characters are searched: no rule may match less."""
    import re._parser as parser  # the standard library's own regex parser: the minimal width

    from ama.secret_patterns import MIN_TOKEN, TOKEN_CHARS

    for rule in RULES:
        assert parser.parse(rule.pattern).getwidth()[0] >= MIN_TOKEN, rule.name
    chars = re.compile(f"[{TOKEN_CHARS}]+")
    for rule, _text, secret in samples():
        if rule not in EXTRA and not rule.startswith(("aws-secret", "azure-storage")):
            assert chars.fullmatch(secret), rule
