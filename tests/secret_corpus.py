"""A corpus of planted secrets: realistic fake values in many forms, languages and config formats.

The values are generated from a seed when the corpus is built, never stored: a repository holding
token-shaped strings trips every secret scanner that reads it, and a fixed value would let a
detector be tuned to the value instead of the form. Each case is one small file whose definition
carries the value where a pack can show it: in a body, a signature (a default argument) or a doc.
"""

from __future__ import annotations

import base64
import random
import string
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


@dataclass(frozen=True)
class Planted:
    """One secret ``value`` planted in ``path`` (whose full text is ``content``) in the way ``form`` names."""

    form: str
    language: str
    path: str
    content: str
    value: str
    # The name of the definition that holds the value, for tasks that ask about it.
    symbol: str


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _pem(rng: random.Random, label: str, lines: int = 8) -> str:
    body = "\n".join(_pick(rng, B64, 64) for _ in range(lines))
    return f"-----BEGIN {label}-----\n{body}\n{_pick(rng, B64, 20)}==\n-----END {label}-----"


def _jwt(rng: random.Random) -> str:
    def part(data: str) -> str:
        return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")

    header = part('{"alg":"HS256","typ":"JWT"}')
    payload = part(f'{{"sub":"{rng.randrange(10**9)}","name":"{_pick(rng, ALNUM, 8)}","iat":1700000000}}')
    return f"{header}.{payload}.{_pick(rng, ALNUM + '-_', 43)}"


def _password(rng: random.Random) -> str:
    return _pick(rng, ALNUM + "!#%&*+-", 18)


# Each value generator makes one fresh secret of a kind. They imitate the published formats.
VALUES: dict[str, Callable[[random.Random], str]] = {
    # AWS key ids are base32 after their prefix.
    "aws-access-key-id": lambda r: "AKIA" + _pick(r, string.ascii_uppercase + "234567", 16),
    "aws-secret-key": lambda r: _pick(r, ALNUM + "+/", 40),
    "github-classic": lambda r: "ghp_" + _pick(r, ALNUM, 36),
    "github-fine-grained": lambda r: "github_pat_" + _pick(r, UPPER_ALNUM, 22) + "_" + _pick(r, ALNUM, 59),
    # Provider formats with a value no entropy check passes, or a character more or less than the
    # format: still tokens (a test token of zeros, one mangled by a copy), which leaked once.
    "github-classic-zeros": lambda r: "ghp_" + "0" * 28 + _pick(r, ALNUM, 8),
    "github-classic-37": lambda r: "ghp_" + _pick(r, ALNUM, 37),
    "github-fine-grained-81": lambda r: "github_pat_" + _pick(r, UPPER_ALNUM, 22) + "_" + _pick(r, ALNUM, 58),
    "slack-bot-ones": lambda r: "xoxb-" + "1" * 11 + "-" + "1" * 12 + "-" + "a" * 16 + _pick(r, ALNUM, 8),
    "aws-access-key-id-17": lambda r: "AKIA" + _pick(r, string.ascii_uppercase + "234567", 17),
    "stripe-live-zeros": lambda r: "sk_live_" + "0" * 16 + _pick(r, ALNUM, 8),
    "gitlab": lambda r: "glpat-" + _pick(r, ALNUM + "_-", 20),
    "slack-bot": lambda r: (
        f"xoxb-{_pick(r, string.digits, 11)}-{_pick(r, string.digits, 12)}-" + _pick(r, ALNUM, 24)
    ),
    "slack-webhook": lambda r: (
        "https://hooks.slack.com/services/T"
        + _pick(r, UPPER_ALNUM, 8)
        + "/B"
        + _pick(r, UPPER_ALNUM, 8)
        + "/"
        + _pick(r, ALNUM, 24)
    ),
    "stripe-live": lambda r: "sk_live_" + _pick(r, ALNUM, 24),
    "openai": lambda r: "sk-proj-" + _pick(r, ALNUM + "_-", 48),
    "anthropic": lambda r: "sk-ant-api03-" + _pick(r, ALNUM + "_-", 93) + "AA",
    "google-api": lambda r: "AIza" + _pick(r, ALNUM + "_-", 35),
    "npm": lambda r: "npm_" + _pick(r, ALNUM, 36),
    "sendgrid": lambda r: "SG." + _pick(r, ALNUM + "_-", 22) + "." + _pick(r, ALNUM + "_-", 43),
    "twilio": lambda r: "SK" + _pick(r, HEX, 32),
    "jwt": _jwt,
    "hex-secret": lambda r: _pick(r, HEX, 40),
    "password": _password,
    "rsa-private-key": lambda r: _pem(r, "RSA PRIVATE KEY"),
    "openssh-private-key": lambda r: _pem(r, "OPENSSH PRIVATE KEY"),
    "pgp-private-key": lambda r: _pem(r, "PGP PRIVATE KEY BLOCK"),
}


@dataclass(frozen=True)
class Form:
    """A way a secret is written: which value kind, and a template per language.

    A template's ``{name}`` is the definition's name and ``{v}`` the value.
    """

    name: str
    value_kind: str
    templates: dict[str, str]


_PY_BODY = 'def {name}():\n    """Open the client."""\n    {var} = "{v}"\n    return {var}\n'
_EXT = {
    "python": "py",
    "javascript": "js",
    "typescript": "ts",
    "go": "go",
    "java": "java",
    "ruby": "rb",
    "php": "php",
    "bash": "sh",
    "rust": "rs",
    "csharp": "cs",
    "kotlin": "kt",
    "yaml": "yaml",
    "json": "json",
    "toml": "toml",
    "properties": "properties",
    "xml": "xml",
    "ini": "ini",
}

FORMS: tuple[Form, ...] = (
    Form(
        "provider token in a body",
        "github-classic",
        {
            "python": _PY_BODY.replace("{var}", "gh"),
            "go": 'package main\n\nfunc {name}() string {\n\tclient := "{v}"\n\treturn client\n}\n',
            "rust": 'fn {name}() -> &\'static str {\n    let client = "{v}";\n    client\n}\n',
        },
    ),
    Form(
        "fine-grained token in a body",
        "github-fine-grained",
        {"javascript": 'function {name}() {\n  const client = "{v}";\n  return client;\n}\n'},
    ),
    Form(
        "AWS key id and secret",
        "aws-access-key-id",
        {
            "java": 'class Aws {\n  static String {name}() {\n    return "{v}";\n  }\n}\n',
            "csharp": 'class Aws {\n  static string {name}() {\n    var id = "{v}";\n'
            "    return id;\n  }\n}\n",
        },
    ),
    Form(
        "secret-named assignment",
        "aws-secret-key",
        {
            "python": 'def {name}():\n    aws_secret_access_key = "{v}"\n    return aws_secret_access_key\n',
            "kotlin": 'fun {name}(): String {\n    val awsSecretKey = "{v}"\n    return awsSecretKey\n}\n',
            "yaml": "aws:\n  secret_access_key: {v}\n",
        },
    ),
    Form(
        "token as a default argument (signature)",
        "gitlab",
        {
            "python": 'def {name}(token="{v}"):\n    """Clone the mirror."""\n    return token\n',
            "typescript": 'export function {name}(token: string = "{v}"): string {\n  return token;\n}\n',
        },
    ),
    Form(
        "token in a doc",
        "slack-bot",
        {
            "python": 'def {name}():\n    """Post to staging with bot {v} for now."""\n    return None\n',
            "java": "class Bot {\n  /** Staging bot: {v} */\n  void {name}() {}\n}\n",
            "go": "package main\n\n// {name} posts with staging bot {v}.\nfunc {name}() {}\n",
        },
    ),
    Form(
        "Slack webhook URL",
        "slack-webhook",
        {
            "ruby": 'def {name}\n  hook = "{v}"\n  hook\nend\n',
            "bash": '{name}() {\n  curl -X POST -d @msg.json "{v}"\n}\n',
        },
    ),
    Form(
        "Stripe key assigned to a plain name",
        "stripe-live",
        {
            "php": "<?php\nfunction {name}() {\n    $client = '{v}';\n    return $client;\n}\n",
            "javascript": "function {name}() {\n  const client = '{v}';\n  return client;\n}\n",
        },
    ),
    Form(
        "LLM API keys",
        "openai",
        {
            "python": 'def {name}():\n    client = OpenAI(api_key="{v}")\n    return client\n',
            "typescript": 'export function {name}() {\n  return new OpenAI({ apiKey: "{v}" });\n}\n',
        },
    ),
    Form(
        "Anthropic key",
        "anthropic",
        {"python": 'def {name}():\n    return Anthropic(api_key="{v}")\n'},
    ),
    Form(
        "Google API key",
        "google-api",
        {
            "kotlin": 'fun {name}(): String {\n    return "{v}"\n}\n',
            "json": '{"maps": {"key": "{v}"}}\n',
        },
    ),
    Form(
        "npm token",
        "npm",
        {
            "bash": "{name}() {\n  echo '//registry.npmjs.org/:_authToken={v}' > ~/.npmrc\n}\n",
            "ini": "//registry.npmjs.org/:_authToken={v}\n",
        },
    ),
    Form(
        "unquoted shell export",
        "password",
        {
            "bash": "{name}() {\n  export API_KEY={v}\n  run_server\n}\n",
            "properties": "db.password={v}\n",
        },
    ),
    Form(
        "password in a URL",
        "password",
        {
            "python": 'def {name}():\n    return connect("postgres://app:{v}@db.internal:5432/app")\n',
            "go": 'package main\n\nfunc {name}() string {\n\treturn "mongodb+srv://svc:{v}@cluster0.example.net/db"\n}\n',
            "yaml": "cache:\n  url: redis://default:{v}@cache:6379/0\n",
        },
    ),
    Form(
        "Bearer JWT",
        "jwt",
        {
            "javascript": "function {name}() {\n"
            '  return fetch(url, { headers: { Authorization: "Bearer {v}" } });\n}\n',
            "bash": '{name}() {\n  curl -H "Authorization: Bearer {v}" https://api.example.com/me\n}\n',
        },
    ),
    Form(
        "PHP array password",
        "password",
        {"php": "<?php\nfunction {name}() {\n    return ['host' => 'db', 'password' => '{v}'];\n}\n"},
    ),
    Form(
        "env fetch default",
        "hex-secret",
        {
            "ruby": 'def {name}\n  ENV.fetch("SECRET_KEY_BASE", "{v}")\nend\n',
            "python": 'def {name}():\n    return os.environ.get("SIGNING_SECRET", "{v}")\n',
            "javascript": 'function {name}() {\n  return process.env.AUTH_SECRET || "{v}";\n}\n',
        },
    ),
    Form(
        "backtick string",
        "password",
        {
            "javascript": "function {name}() {\n  const password = `{v}`;\n  return password;\n}\n",
            "go": "package main\n\nfunc {name}() string {\n\tdbPassword := `{v}`\n\treturn dbPassword\n}\n",
        },
    ),
    Form(
        "subscripted assignment",
        "password",
        {
            "python": "def {name}(cfg):\n    cfg['password'] = '{v}'\n    return cfg\n",
            "php": "<?php\nfunction {name}() {\n    $cfg['db_password'] = \"{v}\";\n    return $cfg;\n}\n",
        },
    ),
    Form(
        "config formats",
        "password",
        {
            "json": '{"database": {"password": "{v}"}}\n',
            "toml": '[database]\npassword = "{v}"\n',
            "xml": "<config>\n  <password>{v}</password>\n</config>\n",
            "ini": "[db]\npassword = {v}\n",
        },
    ),
    Form(
        "SendGrid and Twilio keys",
        "sendgrid",
        {"csharp": 'class Mail {\n  static string {name}() {\n    return "{v}";\n  }\n}\n'},
    ),
    Form(
        "Twilio API key",
        "twilio",
        {"ruby": 'def {name}\n  Twilio::REST::Client.new("{v}", ENV["TWILIO_SECRET"])\nend\n'},
    ),
    Form(
        "RSA private key block",
        "rsa-private-key",
        {
            "python": 'def {name}():\n    return """{v}"""\n',
            "go": "package main\n\nfunc {name}() string {\n\treturn `{v}`\n}\n",
        },
    ),
    Form(
        "OpenSSH private key block",
        "openssh-private-key",
        {"bash": "{name}() {\n  cat > ~/.ssh/id_ed25519 <<'EOF'\n{v}\nEOF\n}\n"},
    ),
    Form(
        "PGP private key block",
        "pgp-private-key",
        {
            "javascript": "function {name}() {\n  return `{v}`;\n}\n",
            "rust": 'fn {name}() -> &\'static str {\n    r"{v}"\n}\n',
        },
    ),
    Form(
        "hex secret assigned to a secret name",
        "hex-secret",
        {
            "java": 'class Hooks {\n  static final String WEBHOOK_SECRET = "{v}";\n'
            "  String {name}() { return WEBHOOK_SECRET; }\n}\n",
            "csharp": 'class Hooks {\n  const string ClientSecret = "{v}";\n'
            "  string {name}() { return ClientSecret; }\n}\n",
            "typescript": 'export const {name} = { clientSecret: "{v}" };\n',
        },
    ),
    # Added after the others, so that their values, drawn from one generator, stay as they were.
    Form(
        "low-entropy provider token in a secret-named assignment",
        "github-classic-zeros",
        {
            "python": 'def {name}():\n    GITHUB_TOKEN = "{v}"\n    return GITHUB_TOKEN\n',
            "yaml": "deploy:\n  token: {v}\n",
        },
    ),
    Form(
        "provider token a character long in a body",
        "github-classic-37",
        {"javascript": 'function {name}() {\n  const client = "{v}";\n  return client;\n}\n'},
    ),
    Form(
        "fine-grained token a character short in a doc",
        "github-fine-grained-81",
        {"python": 'def {name}():\n    """Clone with {v} until the app is installed."""\n    return None\n'},
    ),
    Form(
        "low-entropy Slack token in a doc",
        "slack-bot-ones",
        {"go": "package main\n\n// {name} posts as {v}.\nfunc {name}() {}\n"},
    ),
    Form(
        "AWS key id a character long",
        "aws-access-key-id-17",
        {"ruby": 'def {name}\n  access_key_id = "{v}"\n  access_key_id\nend\n'},
    ),
    Form(
        "low-entropy Stripe key assigned to a secret name",
        "stripe-live-zeros",
        {
            "typescript": 'export function {name}(): string {\n  const stripeSecret = "{v}";\n'
            "  return stripeSecret;\n}\n"
        },
    ),
)

# Commit messages that carry a value: recentPRs titles and bodies must be redacted too.
COMMIT_FORMS: tuple[tuple[str, str], ...] = (
    ("github-classic", "Rotate the deploy token {v}"),
    ("slack-bot", "Use bot {v} in staging"),
    ("stripe-live", "Fix billing\n\nThe old key {v} is revoked; see the runbook."),
    ("aws-access-key-id", "Move uploads to the new bucket\n\nAccess key {v} belongs to the uploader role."),
)


def build(seed: int = 0, copies: int = 2) -> list[Planted]:
    """Every form in every template language, ``copies`` times each with fresh values."""
    rng = random.Random(seed)
    planted: list[Planted] = []
    for copy in range(copies):
        for form_index, form in enumerate(FORMS):
            for language, template in form.templates.items():
                value = VALUES[form.value_kind](rng)
                name = f"{language}_{form.value_kind.replace('-', '_')}_{form_index}_{copy}"
                content = template.replace("{name}", name).replace("{v}", value)
                path = f"{language}/case_{form_index}_{copy}.{_EXT[language]}"
                planted.append(Planted(form.name, language, path, content, value, name))
    return planted


def commit_messages(seed: int = 0) -> list[tuple[str, str]]:
    """(value, message) pairs for commits whose titles and bodies carry a secret."""
    rng = random.Random(seed + 1)
    return [
        (value, template.replace("{v}", value))
        for kind, template in COMMIT_FORMS
        for value in [VALUES[kind](rng)]
    ]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def planted_repository(root: Path, planted: list[Planted]) -> list[str]:
    """A git repository of the planted files, committed in groups under messages that carry secrets too."""
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "bench@example.com")
    git(root, "config", "user.name", "Bench")
    messages = commit_messages()
    for case in planted:
        path = root / case.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(case.content)
    # Files are committed in as many groups as there are messages, so every file's history names one.
    for index, (_, message) in enumerate(messages):
        for case in planted[index :: len(messages)]:
            git(root, "add", case.path)
        git(root, "commit", "-q", "-m", message)
    return [value for value, _ in messages]
