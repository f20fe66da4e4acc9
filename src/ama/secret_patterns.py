"""The credential shapes ama recognizes, as data: one table of rule families.

Two layers use this table: ``export/`` redacts matches in exported text, and ``tools/``
drops environment variables whose *value* matches before a bash command starts.  It lives
at the bottom of the package, next to ``errors.py``, and imports only the standard library
because of who imports it: ``tools/`` must not import ``export/`` (a sibling concern), and
``sandbox/`` may import nothing but the standard library, so the environment scrub by
value runs in ``tools/bash_env.py`` and hands the already-clean environment to the sandbox.

Each rule is a regular expression for the whole secret (its known prefix and alphabet);
``CONTEXT_RULES`` are secrets without a prefix of their own, recognized by the words in
front of them (their group ``s`` is the secret).  The families follow the ones common
secret scanners ship with (cloud providers, payment, chat, version control, package
registries, AI providers, other SaaS, keys and generic assignments); the token formats
are the vendors' published ones.  Shapes only: nothing here can promise to find every
secret.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    family: str
    name: str
    pattern: str
    #: context rules: a lowercase word the text must contain before the regex is tried
    hint: str = ""


# fmt: off
RULES: tuple[Rule, ...] = (
    # cloud providers
    Rule("cloud", "aws-access-key-id", r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}"),
    Rule("cloud", "gcp-api-key", r"AIza[0-9A-Za-z_\-]{35}"),
    Rule("cloud", "azure-ad-client-secret", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}"),
    Rule("cloud", "digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}"),
    Rule("cloud", "alibaba-access-key-id", r"LTAI[A-Za-z0-9]{20}"),
    Rule("cloud", "hashicorp-vault-token", r"hv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    Rule("cloud", "terraform-cloud-token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}"),
    Rule("cloud", "doppler-token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}"),
    Rule("cloud", "databricks-token", r"dapi[a-f0-9]{32}(?:-\d)?"),
    Rule("cloud", "heroku-api-key", r"HRKU-[A-Za-z0-9_\-]{60}"),
    Rule("cloud", "planetscale-token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9=._\-]{32,64}"),
    Rule("cloud", "flyio-token", r"fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3}"),
    # payment
    Rule("payment", "stripe-secret-key", r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,99}"),
    Rule("payment", "stripe-webhook-secret", r"whsec_[A-Za-z0-9]{32,}"),
    Rule("payment", "square-token", r"(?:EAAA|sq0atp-|sq0csp-)[A-Za-z0-9_\-+=]{22,60}"),
    Rule("payment", "braintree-access-token", r"access_token\$production\$[0-9a-z]{16}\$[0-9a-f]{32}"),
    Rule("payment", "shopify-token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    Rule("payment", "flutterwave-secret-key", r"FLWSECK_TEST-[a-hA-H0-9]{32}-X"),
    # chat and messaging
    Rule("chat", "slack-token", r"xox[abeoprs]-(?:\d+-)?[A-Za-z0-9\-]{10,}"),
    Rule("chat", "slack-app-token", r"xapp-\d-[A-Z0-9]{8,}-\d{6,}-[a-z0-9]{20,}"),
    Rule("chat", "slack-webhook-url", r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,}"),
    Rule("chat", "discord-webhook-url", r"https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{60,}"),
    Rule("chat", "teams-webhook-url", r"https://[A-Za-z0-9\-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9\-@/]{40,}"),
    Rule("chat", "telegram-bot-token", r"\d{8,10}:AA[0-9A-Za-z_\-]{33}"),
    Rule("chat", "twilio-api-key", r"SK[0-9a-fA-F]{32}"),
    Rule("chat", "sendgrid-api-key", r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}"),
    Rule("chat", "mailgun-api-key", r"key-[a-f0-9]{32}"),
    Rule("chat", "mailchimp-api-key", r"[a-f0-9]{32}-us\d{1,2}"),
    # version control and CI
    Rule("vcs", "github-token", r"gh[pousr]_[A-Za-z0-9]{36,}"),
    Rule("vcs", "github-fine-grained-pat", r"github_pat_[A-Za-z0-9_]{22,}"),
    Rule("vcs", "gitlab-token", r"gl(?:pat|dt|rt|ft|ptt|cbt|imt|soat|oas|ffct)-[A-Za-z0-9_\-]{20,}"),
    Rule("vcs", "gitlab-runner-registration-token", r"GR1348941[A-Za-z0-9_\-]{20,}"),
    Rule("vcs", "gitlab-agent-token", r"glagent-[A-Za-z0-9_\-]{50,}"),
    Rule("vcs", "atlassian-api-token", r"ATATT3[A-Za-z0-9_\-=]{60,}"),
    # package registries
    Rule("registry", "npm-token", r"npm_[A-Za-z0-9]{36,}"),
    Rule("registry", "pypi-token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    Rule("registry", "rubygems-token", r"rubygems_[a-f0-9]{48}"),
    Rule("registry", "nuget-api-key", r"oy2[a-z0-9]{43}"),
    Rule("registry", "dockerhub-pat", r"dckr_pat_[A-Za-z0-9_\-]{27,}"),
    Rule("registry", "clojars-token", r"CLOJARS_[a-z0-9]{60}"),
    Rule("registry", "artifactory-api-key", r"AKCp[A-Za-z0-9]{69}"),
    Rule("registry", "pulumi-token", r"pul-[a-f0-9]{40}"),
    # AI providers
    Rule("ai", "anthropic-key", r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    Rule("ai", "openai-key", r"sk-[A-Za-z0-9_\-]{16,}"),
    Rule("ai", "huggingface-token", r"(?:hf_|api_org_)[A-Za-z]{34,}"),
    Rule("ai", "groq-key", r"gsk_[A-Za-z0-9]{48,}"),
    Rule("ai", "replicate-token", r"r8_[A-Za-z0-9]{37,}"),
    Rule("ai", "perplexity-key", r"pplx-[A-Za-z0-9]{48,}"),
    Rule("ai", "xai-key", r"xai-[A-Za-z0-9]{70,}"),
    # other SaaS
    Rule("saas", "sentry-token", r"sntry[su]_[A-Za-z0-9+/=_]{50,}"),
    Rule("saas", "newrelic-key", r"NR(?:AK|II|JS)-[A-Za-z0-9]{20,}"),
    Rule("saas", "linear-api-key", r"lin_api_[A-Za-z0-9]{40}"),
    Rule("saas", "notion-token", r"ntn_[A-Za-z0-9]{40,}"),
    Rule("saas", "postman-api-key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    Rule("saas", "grafana-token", r"(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})"),
    Rule("saas", "onepassword-service-token", r"ops_eyJ[A-Za-z0-9+/=]{40,}"),
    # keys and signed tokens
    Rule("key", "age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    Rule("key", "jwt", r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
)

#: secrets without a prefix of their own: the group ``s`` is the secret
CONTEXT_RULES: tuple[Rule, ...] = (
    Rule("cloud", "aws-secret-access-key",
         r"(?i:aws)[\w.\-]{0,20}?(?i:secret|sk)[\w.\-]{0,20}?[\"']?\s*(?:[:=]|:=|=>)\s*[\"']?(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
         "aws"),
    Rule("cloud", "azure-storage-account-key", r"(?i:AccountKey)=(?P<s>[A-Za-z0-9+/]{86}==)", "accountkey"),
)
# fmt: on

#: a secret starts where no token character precedes it
_LEAD = r"(?<![A-Za-z0-9_\-])"
TOKENS = re.compile(_LEAD + "(?:" + "|".join(r.pattern for r in RULES) + ")")
#: tokens are made of these characters and are at least ``MIN_TOKEN`` long: only such runs
#: are searched with ``TOKENS`` (sixty rules tried at every position of a text cost 10x more)
TOKEN_CHARS = r"A-Za-z0-9_\-.$~+/=:@"
MIN_TOKEN = 15
CANDIDATE = re.compile(f"(?<![{TOKEN_CHARS}])[{TOKEN_CHARS}]{{{MIN_TOKEN},}}")
CONTEXT = tuple((r.hint, re.compile(r.pattern)) for r in CONTEXT_RULES)
#: ``Bearer x`` / ``Basic x`` / ``Token x`` (the usual spellings: a literal start keeps it fast)
AUTH_HEADER = re.compile(
    r"(Bearer|bearer|BEARER|Basic|BASIC|Token|TOKEN)(\s+)(?!\[REDACTED\])([A-Za-z0-9._~+/=\-]{6,})"
)
PEM = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
    re.DOTALL,
)
#: ``scheme://user:password@``: group 1 the user, 2 the password
URL_CREDENTIALS = re.compile(r"://([^\s/:@]*):([^\s/@]+)@")


def sub_tokens(text: str, repl: str) -> str:
    """``text`` with every match of a token rule replaced by ``repl``: only the runs of
    token characters at least as long as the shortest token are searched."""
    out: list[str] = []
    done = 0
    for m in CANDIDATE.finditer(text):
        piece = m.group(0)
        new = TOKENS.sub(repl, piece)
        if new != piece:
            out += [text[done : m.start()], new]
            done = m.end()
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def search_tokens(text: str) -> re.Match[str] | None:
    """The first match of a token rule in ``text`` (searched like ``sub_tokens``)."""
    for m in CANDIDATE.finditer(text):
        found = TOKENS.search(m.group(0))
        if found is not None:
            return found
    return None


def auth_credential(m: re.Match[str]) -> bool:
    """Whether an ``AUTH_HEADER`` match is a credential, not prose ("Bearer tokens")."""
    if m.start() > 0 and (m.string[m.start() - 1].isalnum() or m.string[m.start() - 1] == "_"):
        return False
    value = m.group(3)
    return any(c.isdigit() for c in value) or len(value) >= 16 or value.endswith("=")


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def looks_secret(value: str) -> str | None:
    """The name of the rule a whole value (e.g. an environment variable's) matches, or None.

    Token rules anywhere in the value, credentials in a URL, a PEM private key, a
    ``Bearer``/``Basic`` credential, or a context rule.
    """
    if len(value) < 8:
        return None
    if "://" in value and URL_CREDENTIALS.search(value):
        return "url-credentials"
    if "PRIVATE KEY" in value and PEM.search(value):
        return "private-key"
    m = search_tokens(value)
    if m is not None:
        text = m.group(0)
        return next((r.name for r in RULES if re.fullmatch(r.pattern, text)), "token")
    if any(auth_credential(a) for a in AUTH_HEADER.finditer(value)):
        return "authorization"
    low = value.lower()
    for rule, (hint, rx) in zip(CONTEXT_RULES, CONTEXT, strict=True):
        if hint in low and rx.search(value):
            return rule.name
    return None
