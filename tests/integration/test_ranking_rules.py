"""Golden ranking rules on small workspaces built for each rule: packs use their budget, spread over
files, put the project's own code above vendored copies and let matching tests vote for the code
they use instead of taking its place."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.node_rows import function_row
from tests.workspaces import write_tree

from smartctx.core.context import ContextOptions, ContextPack, ContextRequest, Focus
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.diversify import CONTAINER_HEAD_LINES, diversify, limits_for
from smartctx.retrieval.files import RankedFile
from smartctx.retrieval.pipeline import Ranking, build_context, rank
from smartctx.retrieval.score import GRAPH_ONLY_FACTOR, ScoredNode
from smartctx.store.index_store import IndexStore
from smartctx.wire.convert import pack_to_wire


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


def pack_for(
    root: Path, index: Path, files: Mapping[str, str], task: str, counter: TokenCounter, **options: object
) -> ContextPack:
    write_tree(root, files)
    store = IndexStore(root, index)
    try:
        Indexer(root, store, IndexConfig(workers=0)).reconcile()
        with store.snapshot() as snapshot:
            request = ContextRequest(task, ContextOptions.from_values(dict(options)))
            return build_context(request, snapshot, counter, WorkspaceSources(root))
    finally:
        store.close()


def ranking_for(tmp_path: Path, files: Mapping[str, str], task: str) -> Ranking:
    """The first three stages' answer to ``task`` over a fresh index of ``files``."""
    root = write_tree(tmp_path / "ws", files)
    store = IndexStore(root, tmp_path / "index")
    try:
        Indexer(root, store, IndexConfig(workers=0)).reconcile()
        with store.snapshot() as snapshot:
            return rank(task, snapshot, ContextOptions(), Focus(), WorkspaceSources(root))
    finally:
        store.close()


def items(pack: ContextPack) -> list[str]:
    return [item.id for item in (*pack.bodies, *pack.summaries)]


def background_modules(folder: str, count: int) -> dict[str, str]:
    """``count`` small modules in ``folder`` that no task here is about: the rest of a project, so that
    a task's words are as rare in the index as in a real one."""
    return {
        f"{folder}/module_{number:02d}.py": f"def handler_{number}(request):\n    return request\n"
        for number in range(count)
    }


URL_CODE = '''
def {name}(url, params):
    """Prepare the url: parse the scheme, host and port, encode the query params, requote the path."""
    scheme, host, port = parse_url(url)
    query = encode_params(params)
    return requote_path(scheme, host, port, query)


def parse_url(url):
    """Parse a url into scheme, host and port; an invalid url raises InvalidURL."""
    return url.split("://")


def encode_params(params):
    return "&".join(params)


def requote_path(scheme, host, port, query):
    return scheme + host + port + query
'''
URL_TASK = "Invalid URL error: prepare_url does not parse the host and port of http://[::1]:8000/path?query"


@pytest.mark.parametrize(
    ("vendored", "attributes"),
    [
        ("requests/packages/urllib3/util/url.py", {}),
        ("third_party/urllib3/url.py", {}),
        ("static/js/url-parser-3.5.1.js", {}),
        ("lib/urlkit/url.py", {".gitattributes": "lib/urlkit/** linguist-vendored\n"}),
        ("lib/urlkit/url.py", {"lib/.gitattributes": "urlkit/*.py linguist-vendored\n"}),
    ],
)
def test_a_vendored_copy_ranks_below_the_projects_own_code(
    tmp_path: Path, counter: TokenCounter, vendored: str, attributes: dict[str, str]
) -> None:
    """The vendored copy matches the task better (it says "url" more); the own code still wins."""
    copy = URL_CODE.format(name="prepare_url") + URL_CODE.replace("url", "url_url").format(name="urlopen")
    if vendored.endswith(".js"):
        copy = "function prepareUrl(url) { return parseUrl(url); } // parse url host port query\n" * 20
    files = {"requests/models.py": URL_CODE.format(name="prepare_url"), vendored: copy, **attributes}
    pack = pack_for(tmp_path / "ws", tmp_path / "index", files, URL_TASK, counter)
    scores = {item.id: item.score for item in (*pack.bodies, *pack.summaries)}
    own = [score for item, score in scores.items() if item.startswith("requests/models.py")]
    copied = [score for item, score in scores.items() if item.startswith(vendored)]
    assert pack.bodies[0].file_path == "requests/models.py"
    assert len(own) == 4, "every definition of the project's own file is packed"
    assert not copied or min(own) > max(copied), "all of the own code ranks above all of the copy"


def test_gitattributes_can_say_a_vendor_folder_is_own_code(tmp_path: Path, counter: TokenCounter) -> None:
    """``-linguist-vendored`` takes a path out of the vendored rules, as on GitHub."""
    files = {
        "vendor/app/models.py": URL_CODE.format(name="prepare_url"),
        "tools/other.py": "def other():\n    return 1\n",
        ".gitattributes": "vendor/app/** -linguist-vendored\n",
    }
    pack = pack_for(tmp_path / "ws", tmp_path / "index", files, URL_TASK, counter)
    assert "kindFactor" not in pack.bodies[0].score_parts
    assert pack.bodies[0].file_path == "vendor/app/models.py"


BILLING = {
    "billing/invoices.py": (
        "def compute_invoice(order):\n"
        '    """Sum the order lines."""\n'
        "    return sum(line.amount for line in order.lines)\n\n\n"
        "def invoice_number(order):\n    return order.id\n"
    ),
    "billing/unrelated.py": "def rounding_mode():\n    return 'half-even'\n",
    "tests/test_billing.py": (
        "from billing.invoices import compute_invoice\n\n\n"
        "def test_refunded_order_with_a_discount_coupon_totals_zero():\n"
        '    """A refunded order with a discount coupon must total zero, not a negative amount."""\n'
        "    order = make_refunded_order(discount_coupon=True)\n"
        "    assert compute_invoice(order) == 0\n"
    ),
}
BILLING_TASK = "A refunded order with a discount coupon totals a negative amount instead of zero"


def test_a_matching_test_votes_for_the_code_it_calls_instead_of_taking_a_slot(
    tmp_path: Path, counter: TokenCounter
) -> None:
    pack = pack_for(tmp_path / "ws", tmp_path / "index", BILLING, BILLING_TASK, counter)
    assert not any(item.startswith("tests/") for item in items(pack))
    assert not any(entry.file_path.startswith("tests/") for entry in pack.file_map)
    first = pack.bodies[0]
    assert first.id == "billing/invoices.py::compute_invoice"
    assert first.score_parts["testVotes"] > 0


def test_a_task_about_tests_gets_the_tests(tmp_path: Path, counter: TokenCounter) -> None:
    task = "Add a test: " + BILLING_TASK
    pack = pack_for(tmp_path / "ws", tmp_path / "index", BILLING, task, counter)
    assert any(item.startswith("tests/test_billing.py::") for item in items(pack))


@pytest.mark.parametrize(
    ("named", "tests_packed"),
    [
        # The workspace's own test file: the task is about it.
        ("tests/test_billing.py", True),
        # Quoted from a diff of the test: its ``a/`` folder is no folder of the workspace.
        ("a/tests/test_billing.py", True),
        # The reporter's own script, which the workspace does not hold: a bug report's reproduction.
        ("test_repro.py", False),
        # A file of that name in another folder is not the workspace's.
        ("qa/test_billing.py", False),
    ],
)
def test_a_named_test_file_brings_the_tests_only_when_the_workspace_holds_it(
    tmp_path: Path, counter: TokenCounter, named: str, tests_packed: bool
) -> None:
    task = f"Running {named}: {BILLING_TASK}"
    pack = pack_for(tmp_path / "ws", tmp_path / "index", BILLING, task, counter)
    assert any(item.startswith("tests/test_billing.py::") for item in items(pack)) is tests_packed
    if not tests_packed:
        assert pack.bodies[0].id == "billing/invoices.py::compute_invoice"


# A web framework's own test library (as ``django/test/``): shipped code its users' tests import,
# beside the framework's test suite.
TEST_LIBRARY = {
    "webapp/test/client.py": (
        "class Client:\n"
        '    """A browser for tests: sends requests to the app and follows its redirects."""\n\n'
        "    def get(self, path, query=None, follow=False):\n"
        "        response = self.app.handle('GET', path, query)\n"
        "        while follow and response.is_redirect:\n"
        "            response = self.app.handle('GET', response.location)\n"
        "        return response\n"
    ),
    "webapp/handlers.py": (
        "def handle(method, path, query):\n"
        '    """Route a request to its view."""\n'
        "    return route(path)(method, query)\n"
    ),
    "tests/test_client.py": (
        "from webapp.test.client import Client\n\n\n"
        "def test_get_follows_redirects_with_the_query_string():\n"
        "    client = Client()\n"
        "    assert client.get('/old', query='a=1', follow=True).query == 'a=1'\n"
    ),
}


def test_a_packages_own_test_library_is_its_code_not_its_tests(tmp_path: Path, counter: TokenCounter) -> None:
    task = "Client.get drops the query string when it follows a redirect"
    pack = pack_for(tmp_path / "ws", tmp_path / "index", TEST_LIBRARY, task, counter)
    assert pack.bodies[0].id == "webapp/test/client.py::Client.get"
    assert not any(item.startswith("tests/") for item in items(pack))


def test_a_test_library_ranks_below_the_code_a_task_is_about(tmp_path: Path) -> None:
    """The task reads like the test client's docstring, but the redirect is the app's to follow."""
    files = {
        **TEST_LIBRARY,
        "webapp/routing.py": (
            "def follow(response, query):\n"
            '    """The response a redirect leads to."""\n'
            "    return response.app.handle('GET', response.location, query)\n"
        ),
    }
    task = "Requests sent to the app lose the query string when a redirect is followed"
    ranking = ranking_for(tmp_path, files, task)
    assert [file.path for file in ranking.files[:2]] == ["webapp/routing.py", "webapp/test/client.py"]
    assert ranking.files[1].parts["kindFactor"] < 1.0


# Two packages of one project with a module of the same name and much the same code: only the
# folder above the module's own says which package it is.
RETRY = (
    "def retry_request(request, attempts):\n"
    '    """Send the request again when its token expired."""\n'
    "    for attempt in range(attempts):\n"
    "        response = request.send()\n"
    "        if response.status != 401:\n"
    "            return response\n"
    "        request.refresh_token()\n"
    "    return response\n"
)
PACKAGES = {"client/http/retries.py": RETRY, "server/http/retries.py": RETRY}


@pytest.mark.parametrize("package", ["client", "server"])
def test_a_titles_scope_puts_the_package_it_names_first(
    tmp_path: Path, counter: TokenCounter, package: str
) -> None:
    task = f"{package}: retry_request gives up after the first expired token"
    pack = pack_for(tmp_path / "ws", tmp_path / "index", PACKAGES, task, counter)
    assert pack.bodies[0].id == f"{package}/http/retries.py::retry_request"
    assert pack.bodies[0].score_parts["titleScope"] > 0


def test_naming_a_test_function_does_not_fill_the_pack_with_tests(
    tmp_path: Path, counter: TokenCounter
) -> None:
    task = "test_refunded_order_with_a_discount_coupon_totals_zero fails: " + BILLING_TASK
    pack = pack_for(tmp_path / "ws", tmp_path / "index", BILLING, task, counter)
    assert not any(item.startswith("tests/") for item in items(pack))
    assert pack.bodies[0].id == "billing/invoices.py::compute_invoice"


# A C library: each function declared in the header and defined in its source file.
PARSER_C = {
    "include/parser.h": (
        "#ifndef PARSER_H\n#define PARSER_H\n"
        "int parse_number(const char *text, int length);\n"
        "int parse_string(const char *text, int length);\n"
        "#endif\n"
    ),
    "src/parser.c": (
        '#include "parser.h"\n\n'
        "int parse_number(const char *text, int length) {\n"
        "    int value = 0;\n"
        "    for (int i = 0; i < length; i++) value = value * 10 + (text[i] - '0');\n"
        "    return value;\n"
        "}\n\n"
        "int parse_string(const char *text, int length) {\n"
        "    return length > 0 && text[0] == '\"' ? length - 2 : -1;\n"
        "}\n"
    ),
}


def test_a_header_prototype_gives_its_body_slot_to_the_definition(
    tmp_path: Path, counter: TokenCounter
) -> None:
    task = "parse_number overflows on a long number"
    pack = pack_for(tmp_path / "ws", tmp_path / "index", PARSER_C, task, counter)
    bodies = [body.id for body in pack.bodies]
    assert bodies[0] == "src/parser.c::parse_number"
    assert not any(body.startswith("include/") for body in bodies)
    # The prototype still tells where the function is declared, for the price of its signature.
    assert "include/parser.h::parse_number" in [summary.id for summary in pack.summaries]


def library(modules: int) -> dict[str, str]:
    """A workspace with enough matching material to fill any budget: ``modules`` files of ten
    functions each about ledgers, accounts and balances, each with a body and a docstring."""
    files: dict[str, str] = {}
    for module in range(modules):
        functions = []
        for number in range(10):
            lines = "".join(
                f"    balance_{line} = account.ledger_total({line}) + {number}\n" for line in range(8)
            )
            functions.append(
                f"def reconcile_ledger_{module}_{number}(account, ledger):\n"
                f'    """Reconcile the ledger of an account: balance entry {number} of module {module}."""\n'
                f"{lines}    return balance_0\n"
            )
        files[f"accounts/ledger_{module:02d}.py"] = "\n\n".join(functions)
    return files


LEDGER_TASK = "The ledger balance of an account is wrong after reconcile: the ledger total misses entries"


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexStore]]:
    root = write_tree(tmp_path_factory.mktemp("ledger") / "ws", library(60))
    store = IndexStore(root, tmp_path_factory.mktemp("ledger-index"))
    Indexer(root, store, IndexConfig(workers=0)).reconcile()
    yield root, store
    store.close()


def ledger_pack(ledger: tuple[Path, IndexStore], counter: TokenCounter, **options: object) -> ContextPack:
    root, store = ledger
    with store.snapshot() as snapshot:
        request = ContextRequest(LEDGER_TASK, ContextOptions.from_values(dict(options)))
        return build_context(request, snapshot, counter, WorkspaceSources(root))


def test_a_pack_uses_its_budget_when_there_is_material(
    ledger: tuple[Path, IndexStore], counter: TokenCounter
) -> None:
    used = {
        budget: ledger_pack(ledger, counter, budget_tokens=budget) for budget in (4000, 8000, 16000, 32000)
    }
    assert used[8000].tokens_used >= 0.85 * 8000
    assert used[4000].tokens_used < used[8000].tokens_used < used[16000].tokens_used < used[32000].tokens_used
    assert len(used[4000].bodies) <= 5 and len(used[4000].summaries) <= 25
    assert len(used[8000].bodies) > 5
    files = {item.file_path for item in (*used[8000].bodies, *used[8000].summaries)}
    assert len(files) >= 5, "a pack spreads over files"
    mapped = {entry.file_path for entry in used[8000].file_map}
    assert mapped and not mapped & files, "the file map lists further files only"
    assert f"- {used[8000].file_map[0].file_path}" in used[8000].text


def test_explicit_caps_still_win(ledger: tuple[Path, IndexStore], counter: TokenCounter) -> None:
    pack = ledger_pack(ledger, counter, budget_tokens=32000, max_bodies=2, max_summaries=3)
    assert (len(pack.bodies), len(pack.summaries)) == (2, 3)


def test_the_file_map_is_in_the_json_with_its_lines(
    ledger: tuple[Path, IndexStore], counter: TokenCounter
) -> None:
    wire = pack_to_wire(ledger_pack(ledger, counter))
    entry = wire["fileMap"][0]
    assert entry["filePath"].startswith("accounts/ledger_") and entry["reason"]
    symbol = entry["symbols"][0]
    assert symbol["startLine"] <= symbol["endLine"]
    assert f"`{symbol['qualifiedName']}`:{symbol['startLine']}" in wire["text"]


def test_a_file_map_line_is_short_so_the_map_reaches_twice_as_far(
    ledger: tuple[Path, IndexStore], counter: TokenCounter
) -> None:
    """A map line is a path and the file's top definition, half the tokens of one that also said why
    the file ranks and named three definitions: the ledger's 8k pack names 40 further files in the
    map's tokens, where the longer lines named 16."""
    pack = ledger_pack(ledger, counter, budget_tokens=8000)
    assert len(pack.file_map) >= 2 * 16
    lines = pack.text.split("## Other likely files")[1].splitlines()[2:]
    assert len(lines) == len(pack.file_map)
    for entry, line in zip(pack.file_map, lines, strict=True):
        (symbol,) = entry.symbols
        assert line == f"- {entry.file_path}: `{symbol.qualified_name}`:{symbol.start_line}"
        assert entry.reason, "why it ranks stays in the entry, for the panel"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(min_value=100, max_value=40_000))
def test_the_budget_is_exact_with_the_file_map(
    ledger: tuple[Path, IndexStore], counter: TokenCounter, budget: int
) -> None:
    pack = ledger_pack(ledger, counter, budget_tokens=budget)
    assert pack.tokens_used <= budget
    assert counter.count(pack.text) == pack.tokens_used


def test_the_same_request_gives_the_same_pack(ledger: tuple[Path, IndexStore], counter: TokenCounter) -> None:
    first, second = (pack_to_wire(ledger_pack(ledger, counter)) for _ in range(2))
    assert json.dumps({**first, "metadata": None}) == json.dumps({**second, "metadata": None})


# Everyday words of a bug report, spread over many modules that have nothing to do with the fix.
PROSE = (
    "When the service starts the connection to the server is opened and the request is sent with the"
    " configured timeout; the response is parsed and the result is cached for the next request."
)


def noisy_service(modules: int) -> dict[str, str]:
    """Modules whose docs and code say the prose above, and one module named after a library."""
    files = {
        f"service/part_{number:02d}.py": (
            f'def handle_request_{number}(request, timeout):\n    """{PROSE}"""\n'
            "    connection = open_connection(request.server, timeout)\n"
            "    response = connection.send(request)\n    return parse_response(response)\n"
            + "".join(f"\n\ndef helper_{number}_{helper}():\n    return {helper}\n" for helper in range(6))
        )
        for number in range(modules)
    }
    files["service/discovery/zeroconf.py"] = (
        'def browse(kind):\n    """Browse for services of a kind with zeroconf."""\n    return []\n'
    )
    return files


# A long issue: a hundred different everyday words, then the library's name once.
LONG_ISSUE = " ".join(
    f"{word}ing"
    for word in ("walk", "talk", "jump", "sing", "read", "cook", "clean", "build", "draw", "paint")
) + " ".join(
    f" {first}{second}"
    for first in ("alpha", "beta", "gamma", "delta", "omega")
    for second in "abcdefghijklmnopqrst"
)


def test_a_long_task_keeps_the_weight_of_its_one_rare_name(tmp_path: Path, counter: TokenCounter) -> None:
    """A hundred words before it, and the library named once: the library's file still comes first."""
    task = "\n".join([PROSE, LONG_ISSUE, "It only happens with zeroconf discovery.", PROSE])
    pack = pack_for(tmp_path / "ws", tmp_path / "index", noisy_service(40), task, counter)
    assert pack.bodies[0].file_path == "service/discovery/zeroconf.py"


def test_an_everyday_word_is_not_a_named_symbol(tmp_path: Path, counter: TokenCounter) -> None:
    """``type`` is defined once, and is everywhere in the code's words: quoting it names nothing."""
    files = {
        f"invoices/field_{number:02d}.py": (
            f"def invoice_field_{number}(value, type=None):\n"
            '    """Convert the value to the type of the field; the type decides the format."""\n'
            "    return convert(value, type)\n"
        )
        for number in range(40)
    }
    files["kinds/registry.py"] = "def type(name):\n    return name\n"
    files["invoices/totals.py"] = (
        "def invoice_total_rounding(invoice):\n"
        '    """Round the invoice total to cents."""\n'
        "    return round(invoice.total, 2)\n"
    )
    task = "The `type` of the total is wrong: invoice_total_rounding rounds an invoice total to whole units"
    pack = pack_for(tmp_path / "ws", tmp_path / "index", files, task, counter)
    assert pack.bodies[0].id == "invoices/totals.py::invoice_total_rounding"
    assert "named" not in next(
        (body.score_parts for body in pack.bodies if body.id == "kinds/registry.py::type"), {}
    )


# Two methods that match the task's words alike; only "registering" tells them apart, and the
# other is shorter, so on those words alone it would win.
BLUEPRINT_DOC = "Handle the url_prefix of a nested blueprint."
BLUEPRINTS = {
    "flask/blueprints.py": (
        "class Blueprint:\n"
        "    def open_resource(self, resource):\n"
        f'        """{BLUEPRINT_DOC}"""\n'
        "        return resource\n\n"
        "    def register(self, app):\n"
        f'        """{BLUEPRINT_DOC}"""\n'
        "        for child in self.children:\n"
        "            child.app = app\n"
        "        return app\n"
    ),
    "flask/app.py": "class Flask:\n    def route(self, rule):\n        return rule\n",
    # Unrelated code, so that the words above are rare, as in a real project.
    **background_modules("flask", 30),
}


def test_an_inflected_prose_word_finds_the_base_form_in_code(tmp_path: Path, counter: TokenCounter) -> None:
    task = "Blueprint url_prefix is ignored when registering a nested blueprint"
    pack = pack_for(tmp_path / "ws", tmp_path / "index", BLUEPRINTS, task, counter)
    assert pack.bodies[0].id == "flask/blueprints.py::Blueprint.register"


def test_the_best_file_shows_more_of_its_definitions_as_the_budget_grows(
    ledger: tuple[Path, IndexStore], counter: TokenCounter
) -> None:
    def most_bodies_from_one_file(pack: ContextPack) -> int:
        return max(Counter(body.file_path for body in pack.bodies).values())

    packs = {budget: ledger_pack(ledger, counter, budget_tokens=budget) for budget in (4000, 6000, 8000)}
    # The first-ranked file may take three times a file's cap of 3, 3 and 4 bodies, but at 4k the
    # pack's five bodies leave one slot to another file, and at 8k it has only ten definitions.
    assert [most_bodies_from_one_file(packs[budget]) for budget in (4000, 6000, 8000)] == [4, 9, 10]
    # One file never takes every body slot.
    capped = ledger_pack(ledger, counter, budget_tokens=16000, max_bodies=3)
    assert most_bodies_from_one_file(capped) == 2


@pytest.mark.parametrize("budget", [1500, 3000, 8000])
def test_a_file_whose_summaries_the_budget_cut_is_named_in_the_file_map(
    ledger: tuple[Path, IndexStore], counter: TokenCounter, budget: int
) -> None:
    # The ledger's files match alike and rank by path; the budget cuts the last chosen summaries.
    pack = ledger_pack(ledger, counter, budget_tokens=budget)
    shown = {item.file_path for item in (*pack.bodies, *pack.summaries)}
    mapped = [entry.file_path for entry in pack.file_map]
    named = sorted(shown | set(mapped))
    assert mapped and named == [f"accounts/ledger_{number:02d}.py" for number in range(len(named))]


PRICING = {
    "shop/pricing.py": "def total(lines):\n    return sum(line.amount for line in lines)\n",
    "shop/pricing_rules.py": "def rule(lines):\n    return [line.amount for line in lines]\n",
    "shop/__init__.py": "",
    "shop/cart/__init__.py": "class Cart:\n    pass\n",
    "Money.java": "",
    "src/main/java/org/shop/money/Money.java": "public class Money {\n  int cents;\n}\n",
}


@pytest.mark.parametrize(
    ("task", "named"),
    [
        ("Amounts are rounded down after `from shop.pricing import *`", {"shop/pricing.py"}),
        # The longest prefix that is a module wins; a package is its __init__.py.
        ("shop.pricing.total forgets refunds", {"shop/pricing.py"}),
        ("shop.cart.Cart drops the last line", {"shop/cart/__init__.py"}),
        # A module path has two components at least: ``shop`` alone names no file.
        ("Importing shop raises: see shop.__version__", set()),
        ("org.shop.money.Money loses a cent", {"src/main/java/org/shop/money/Money.java"}),
        # One component names no module (``Money.java`` at the root is not ``org.shop.money.Money``).
        ("shop.pricing_v2 is gone", set()),
    ],
)
def test_a_dotted_module_path_in_the_task_names_its_file(tmp_path: Path, task: str, named: set[str]) -> None:
    ranking = ranking_for(tmp_path, PRICING, task)
    assert set(ranking.found.named_modules) == named
    for file in ranking.files:
        assert (file.signals.get("moduleNamed") == 1.0) == (file.path in named)


def options_crate(fields: int) -> dict[str, str]:
    """A Rust crate whose command-line options are one long struct of documented fields, its
    methods in an ``impl`` block, and files of search code that match the same words."""
    declared = "".join(
        f"    /// Search option {field}: how the search treats its depth and hidden files.\n"
        f"    pub option_{field}: bool,\n"
        for field in range(fields)
    )
    cli = (
        "/// The command-line options of the search.\n"
        f"pub struct Opts {{\n{declared}}}\n\n"
        "impl Opts {\n"
        "    pub fn max_depth(&self) -> usize {\n        if self.option_0 { 1 } else { 0 }\n    }\n"
        "}\n"
    )
    files = {"src/cli.rs": cli}
    for module in range(6):
        functions = "\n".join(
            f"pub fn search_depth_{module}_{number}(hidden: bool, depth: usize) -> usize {{\n"
            "    // The search walks each depth, skipping hidden files unless asked.\n"
            + "".join(f"    let step_{line} = depth + {line};\n" for line in range(6))
            + "    if hidden { depth } else { step_0 }\n}\n"
            for number in range(4)
        )
        files[f"src/walk_{module}.rs"] = functions
    return files


# Long enough that the struct is no whole body (diversify.MAX_CONTAINER_BODY_LINES).
OPTS_FIELDS = 120
OPTS_TASK = "Add an option to Opts to limit the search depth of hidden files"


def test_a_long_struct_the_task_is_about_is_a_body_by_its_head(tmp_path: Path, counter: TokenCounter) -> None:
    pack = pack_for(tmp_path / "ws", tmp_path / "index", options_crate(OPTS_FIELDS), OPTS_TASK, counter)
    bodies = {body.id: body for body in pack.bodies}
    # Without the rule the struct came only among the summaries, after every body.
    assert "src/cli.rs::Opts" in bodies
    opts = bodies["src/cli.rs::Opts"]
    assert (opts.start_line, opts.end_line) == (2, 2 + CONTAINER_HEAD_LINES - 1)
    assert opts.source.count("\n") == CONTAINER_HEAD_LINES
    assert "its first lines" in pack.text
    # Its method, outside the head, keeps a place of its own.
    assert "src/cli.rs::Opts.max_depth" in items(pack)
    assert "src/cli.rs::Opts" not in [summary.id for summary in pack.summaries]


LONG_FUNCTIONS = {"settle": 70, "audit": 30, "reconcile": 50}
REFUND_FILES = {
    "shop/refunds.py": (
        "def refund_fee(order, amount):\n    return order.fee - amount\n\n\n"
        "def refund_order(order):\n    return settle(order.ledger, order)\n"
    ),
    **{
        f"shop/{name}.py": f"def {name}(journal, order):\n"
        + "".join(
            "    fee = refund_fee(order, order.amount)\n"
            if number == fee_at
            else f"    journal.post(order.amount, order.currency, step={number})\n"
            for number in range(120)
        )
        + "    return fee\n"
        for name, fee_at in LONG_FUNCTIONS.items()
    },
    **background_modules("shop/views", 30),
}


@pytest.mark.parametrize("budget", [4_500, 8_000])
def test_a_long_body_after_the_first_shows_the_lines_near_the_task_words_when_the_budget_needs(
    tmp_path: Path, counter: TokenCounter, budget: int
) -> None:
    """Three functions of 122 lines are bodies after the named ``refund_fee``. At 8k tokens all fit
    whole; at 4.5k the last of them is shown by the lines near the task's words, each run of the
    others named by a comment, while the two before it stay whole."""
    task = "refund_fee is charged twice when the ledger settles a refund"
    pack = pack_for(tmp_path / "ws", tmp_path / "index", REFUND_FILES, task, counter, budget_tokens=budget)
    first, *later = pack.bodies
    assert first.id == "shop/refunds.py::refund_fee"
    long_ones = [body for body in later if body.name in LONG_FUNCTIONS]
    assert [(body.start_line, body.end_line) for body in long_ones] == [(1, 122)] * 3
    assert all("    fee = refund_fee(order, order.amount)\n" in body.source for body in long_ones)
    if budget == 8_000:
        assert [body.left_out for body in pack.bodies] == [()] * len(pack.bodies)
        return
    *whole, shortened = long_ones
    assert [body.left_out for body in whole] == [(), ()]
    fee_line = LONG_FUNCTIONS[shortened.name] + 2
    expected = ((7, fee_line - 4), (fee_line + 4, 118))
    assert shortened.left_out == expected
    assert f"    # [lines 7-{fee_line - 4} not shown]\n" in shortened.source
    wire = json.loads(json.dumps(pack_to_wire(pack)))["bodies"][pack.bodies.index(shortened)]
    assert wire["leftOut"] == [{"startLine": start, "endLine": end} for start, end in expected]


def test_a_long_class_stays_a_summary(tmp_path: Path, counter: TokenCounter) -> None:
    attributes = "".join(f"    option_{field} = False\n" for field in range(2 * OPTS_FIELDS))
    files = {
        "search/options.py": f'class Opts:\n    """The options of the search."""\n{attributes}\n'
        "    def max_depth(self):\n        return 1 if self.option_0 else 0\n"
    }
    pack = pack_for(tmp_path / "ws", tmp_path / "index", files, OPTS_TASK, counter)
    # A class's methods take the body slots: its head is seldom what changes.
    assert "search/options.py::Opts" not in [body.id for body in pack.bodies]
    assert "search/options.py::Opts" in [summary.id for summary in pack.summaries]


def crate_with_unit_tests(tests: int) -> dict[str, str]:
    """A Rust source file with the function a task is about and, at its end, a ``mod tests`` of
    unit tests that say the same words and call it."""
    unit_tests = "".join(
        f"    #[test]\n    fn parse_depth_of_search_{number}() {{\n"
        f"        // The search depth parse of case {number}: a negative depth is rejected.\n"
        f'        assert_eq!(parse_depth("{number}"), Some({number}));\n    }}\n\n'
        for number in range(tests)
    )
    return {
        "src/depth.rs": (
            "/// Parse the search depth given on the command line.\n"
            "pub fn parse_depth(text: &str) -> Option<usize> {\n"
            "    // A negative depth is no depth: the search depth parse rejects it.\n"
            "    text.parse::<usize>().ok()\n}\n\n"
            f"#[cfg(test)]\nmod tests {{\n    use super::*;\n\n{unit_tests}}}\n"
        ),
        "src/walk.rs": (
            "pub fn walk_to_depth(depth: usize) -> usize {\n"
            "    // The search walks to the depth given.\n    depth + 1\n}\n"
        ),
    }


def test_unit_tests_inside_a_source_file_vote_instead_of_taking_places(
    tmp_path: Path, counter: TokenCounter
) -> None:
    task = "The search depth parse accepts a negative depth"
    pack = pack_for(tmp_path / "ws", tmp_path / "index", crate_with_unit_tests(6), task, counter)
    # Without the rule the unit tests took body and summary places as if they were code.
    assert not [item for item in items(pack) if "::tests." in item]
    assert pack.bodies[0].id == "src/depth.rs::parse_depth"
    # A task about the tests gets them.
    about_tests = pack_for(
        tmp_path / "ws2", tmp_path / "index2", crate_with_unit_tests(6), "Add tests: " + task, counter
    )
    assert [item for item in items(about_tests) if "::tests." in item]


def parcel_rates(rules: int) -> dict[str, str]:
    """A file whose whole text is about the task, with ``rules`` definitions that match it well and
    one, ``round_grams``, that matches it once; and files of definitions that match it better."""
    strong = "".join(
        f"def parcel_weight_rule_{number}(parcel):\n"
        f'    """Parcel weight rule {number}: the surcharge on the parcel weight."""\n'
        f"    return parcel.weight * {number}\n\n\n"
        for number in range(rules)
    )
    files = {
        "shipping/rates.py": (
            '"""Parcel rates: the surcharge on a parcel by its weight, parcel by parcel."""\n\n\n'
            + strong
            + "def round_grams(value):\n    # Whole grams, as a parcel is weighed.\n    return round(value)\n"
        )
    }
    for number in range(12):
        files[f"billing/surcharge_{number:02d}.py"] = (
            f"def surcharge_weight_{number}(parcel_weight):\n"
            '    """The surcharge by weight: parcel weight surcharge, weight surcharge."""\n'
            "    return parcel_weight\n"
        )
    return files


def test_a_top_file_gives_more_than_its_five_best_matching_definitions(tmp_path: Path) -> None:
    """The file that matches best holds the fix, often in a definition that matches it only weakly:
    past the first candidates, each of the three best-matching files gives its twenty best-matching
    definitions as candidates, not five."""
    task = "The parcel weight surcharge is wrong for heavy parcels"
    root = write_tree(tmp_path / "ws", parcel_rates(8))
    store = IndexStore(root, tmp_path / "index")
    try:
        Indexer(root, store, IndexConfig(workers=0)).reconcile()
        with store.snapshot() as snapshot:
            options = ContextOptions.from_values({"candidate_limit": 4})
            ranking = rank(task, snapshot, options, Focus(), WorkspaceSources(root))
    finally:
        store.close()
    ranked = [f"{item.node.path}::{item.node.qualified_name}" for item in ranking.ranked]
    assert next(iter(ranking.found.file_evidence)) == "shipping/rates.py"
    # With five, the weakest of the file's nine matching definitions was no candidate at all.
    assert "shipping/rates.py::round_grams" in ranked


# A pull request template's instructions, in an HTML comment the page does not show.
PR_TEMPLATE = (
    "<!--\nThanks for contributing! Before submitting, read the contributing guide.\n"
    "Explain what this change does and why: describe the problem, explain your approach.\n"
    'Good examples: "In this change, I fixed...", "This change improves X by..."\n-->\n'
)


def commands_with_examples(commands: int) -> dict[str, str]:
    """The fix's file, and commands whose ``examples`` are sentences like a template's."""
    files = {
        "shipping/rates.py": (
            "def parcel_surcharge(parcel):\n"
            '    """The surcharge on a parcel by its weight."""\n'
            "    return parcel.weight * 0.2\n"
        ),
        **background_modules("app", 20),
    }
    for number in range(commands):
        files[f"commands/command_{number:02d}.py"] = (
            f"class Command{number}:\n"
            "    def examples(self):\n"
            "        return [\n"
            f'            "Explain the approach of step {number}",\n'
            '            "Describe the problem and what the change improves",\n'
            '            "Before submitting, read the guide",\n'
            "        ]\n"
        )
    return files


def test_a_pull_request_templates_comment_finds_nothing(tmp_path: Path) -> None:
    """The template's words (examples, explain, approach …) are the same in every task of a project:
    left in, they found every command's ``examples`` as candidates, right after the fix."""
    task = "The parcel weight surcharge is wrong for heavy parcels\n\n" + PR_TEMPLATE
    ranking = ranking_for(tmp_path, commands_with_examples(12), task)
    ranked = [f"{item.node.path}::{item.node.qualified_name}" for item in ranking.ranked]
    assert ranked[0] == "shipping/rates.py::parcel_surcharge"
    assert not [name for name in ranked if name.endswith(".examples")]


# The best match calls a helper in a file the task says nothing of; another file's definition matches
# the task, weakly, by its own words.
DURATION_FILES = {
    "timing/duration.py": (
        "from core.units import split_unit\n\n\n"
        "def parse_duration(text):\n"
        '    """Parse a duration such as 90s or 2h into seconds; a negative duration is an error."""\n'
        "    value, unit = split_unit(text)\n"
        "    return int(value) * 60\n"
    ),
    "core/units.py": (
        "def split_unit(text):\n"
        "    head, tail = text[:-1], text[-1]\n"
        "    if head and tail:\n"
        "        return head.strip(), tail.lower()\n"
        "    return head, tail\n"
    ),
    "report/printing.py": (
        "def print_total(total):\n"
        '    """Print a total; a negative one is printed in brackets instead of raising."""\n'
        "    text = str(abs(total))\n"
        "    # The sign goes: brackets instead.\n"
        "    return f'({text})' if total < 0 else text\n"
    ),
    **background_modules("app", 30),
}


def test_what_only_the_graph_reached_ranks_below_what_the_search_found(tmp_path: Path) -> None:
    """``split_unit`` matches nothing of the task; its lexical signal is half the best match's, which
    calls it. ``print_total`` matches the task's words itself, weakly: it comes first of the two."""
    task = "parse_duration accepts a negative duration instead of raising"
    ranking = ranking_for(tmp_path, DURATION_FILES, task)
    ranked = {f"{item.node.path}::{item.node.qualified_name}": item for item in ranking.ranked}
    order = list(ranked)
    assert order[0] == "timing/duration.py::parse_duration"
    reached = ranked["core/units.py::split_unit"]
    assert reached.parts["hops"] == 1.0 and reached.parts["graphOnly"] == GRAPH_ONLY_FACTOR
    assert order.index("report/printing.py::print_total") < order.index("core/units.py::split_unit")


def test_a_weak_body_of_another_file_gives_way_to_summaries() -> None:
    """After the first five bodies, a definition is a body only while it scores at least 0.65 of the
    fifth's: one at 0.6 of it is a summary, and no longer holds a place before the best file's next
    definitions."""

    def scored(node_id: int, path: str, score: float) -> ScoredNode:
        node = function_row(node_id, path, f"f{node_id}", node_id * 10, node_id * 10 + 5)
        return ScoredNode(node, score, {"bm25": score})

    ranked = [scored(number, f"pkg/m{number}.py", 3.0 - 0.2 * number) for number in range(1, 6)]
    ranked += [scored(6, "pkg/m6.py", 0.7 * 2.0), scored(7, "pkg/m7.py", 0.6 * 2.0)]
    files = [RankedFile(item.node.path, item.score, {}, ()) for item in ranked]
    selection = diversify(ranked, files, limits_for(ContextOptions(budget_tokens=8000)), frozenset())
    assert [item.node.id for item in selection.bodies] == [1, 2, 3, 4, 5, 6]
    assert [item.node.id for item in selection.summaries] == [7]


ORDER_FILES = {
    "shop/forms.py": (
        "from shop.validators import validate_quantity\n\n\n"
        "class OrderForm:\n"
        "    def clean(self, data):\n"
        "        quantity = validate_quantity(data.get('quantity'))\n"
        "        return {'quantity': quantity}\n"
    ),
    "shop/validators.py": "def validate_quantity(value):\n    return int(value)\n",
    "src/forms.rs": (
        "use crate::validators::validate_quantity;\n\n"
        "pub struct OrderForm;\n\n"
        "impl OrderForm {\n"
        "    pub fn clean(&self, data: &str) -> u32 {\n"
        "        validate_quantity(data)\n"
        "    }\n"
        "}\n"
    ),
    "src/validators.rs": "pub fn validate_quantity(value: &str) -> u32 {\n    value.parse().unwrap()\n}\n",
    "tests/test_forms.py": (
        "from shop.forms import OrderForm\n\n\n"
        "def test_a_blank_quantity_is_a_validation_error():\n"
        "    OrderForm().clean({'quantity': ''})\n"
    ),
}
PYTHON_TRACEBACK = (
    "OrderForm.clean raises ValueError for a blank quantity instead of a validation error\n\n"
    "Traceback (most recent call last):\n"
    '  File "tests/test_forms.py", line 5, in test_a_blank_quantity_is_a_validation_error\n'
    "    OrderForm().clean({'quantity': ''})\n"
    '  File "/home/me/shop/shop/forms.py", line 7, in clean\n'
    "    quantity = validate_quantity(data.get('quantity'))\n"
    '  File "/home/me/shop/shop/validators.py", line 2, in validate_quantity\n'
    "    return int(value)\n"
    "ValueError: invalid literal for int() with base 10: ''\n"
)
RUST_PANIC = (
    "OrderForm::clean panics for a blank quantity instead of a validation error\n\n"
    "thread 'main' panicked at src/validators.rs:2:11:\n"
    "called `Result::unwrap()` on an `Err` value: ParseIntError { kind: Empty }\n"
    "stack backtrace:\n"
    "   0: shop::validators::validate_quantity\n"
    "             at ./src/validators.rs:2:11\n"
    "   1: shop::forms::OrderForm::clean\n"
    "             at ./src/forms.rs:7:9\n"
)


@pytest.mark.parametrize(
    ("task", "innermost"),
    [
        # Python prints the most recent call last; the test's frame is no place to fix.
        (PYTHON_TRACEBACK, "shop/validators.py::validate_quantity"),
        # Rust, like Go, Java and JavaScript, prints the failing frame first.
        (RUST_PANIC, "src/validators.rs::validate_quantity"),
    ],
)
def test_the_innermost_frame_of_a_quoted_stack_trace_ranks_first(
    tmp_path: Path, task: str, innermost: str
) -> None:
    """The task names the form's method and quotes a stack trace through it: the definition where the
    failure happens, the trace's innermost frame in the project's own code, ranks above the method
    the task names, which is a frame too."""
    ranking = ranking_for(tmp_path, ORDER_FILES, task)
    first = ranking.ranked[0]
    assert f"{first.node.path}::{first.node.qualified_name}" == innermost
    assert first.signals["innermostFrame"] == 1.0
    assert [item.signals.get("innermostFrame", 0.0) for item in ranking.ranked].count(1.0) == 1
    # The file map says why, once.
    failing = next(file for file in ranking.files if file.path == innermost.split("::")[0])
    assert failing.reason.startswith("where the stack trace fails")
    assert "in the stack trace" not in failing.reason


CART_FORM = (
    "class CartForm:\n"
    "    def total(self, lines):\n"
    "        return sum(line.amount for line in lines)\n"
    "\n"
    "    def clean(self, data):\n"
    "        return int(data['quantity'])\n"
)


@pytest.mark.parametrize(
    ("line", "function", "framed"),
    [
        # The reporter's file had two more lines at the top: line 7 was in clean, here it is past it.
        (7, "clean", "CartForm.clean"),
        # Line 3 is in total here; the frame says clean, which sits beside it in the same class.
        (3, "clean", "CartForm.clean"),
        # Where the frame names no function this file defines, its line decides.
        (3, "checkout", "CartForm.total"),
        (6, "clean", "CartForm.clean"),
    ],
)
def test_a_frame_names_its_function_when_its_line_is_from_another_version(
    tmp_path: Path, line: int, function: str, framed: str
) -> None:
    task = (
        "CartForm raises ValueError for a blank quantity\n\nTraceback (most recent call last):\n"
        f'  File "/srv/app/shop/cart.py", line {line}, in {function}\n'
        "ValueError: invalid literal for int() with base 10: ''\n"
    )
    ranking = ranking_for(tmp_path, {"shop/cart.py": CART_FORM}, task)
    assert [ranking.found.nodes[node_id].qualified_name for node_id in ranking.found.framed] == [framed]


DECODERS = {
    f"src/main/java/org/shop/{package}/Decoder.java": (
        f"package org.shop.{package};\n\n"
        "public class Decoder {\n"
        "    public int decode(String text) {\n"
        "        return Integer.parseInt(text);\n"
        "    }\n"
        "}\n"
    )
    for package in ("orders", "payments")
}


def test_a_jvm_frame_finds_its_file_by_its_package(tmp_path: Path) -> None:
    """Two ``Decoder.java`` in two packages: the stack trace's package says which one failed."""
    task = (
        'Decoding a blank amount fails\n\njava.lang.NumberFormatException: For input string: ""\n'
        "\tat org.shop.payments.Decoder.decode(Decoder.java:5)\n"
    )
    ranking = ranking_for(tmp_path, DECODERS, task)
    framed = [ranking.found.nodes[node_id] for node_id in ranking.found.framed]
    assert [(node.path, node.qualified_name) for node in framed] == [
        ("src/main/java/org/shop/payments/Decoder.java", "Decoder.decode")
    ]
    assert ranking.found.mentioned_files == {"src/main/java/org/shop/payments/Decoder.java"}


@pytest.mark.parametrize(
    ("named", "mentioned"),
    [
        # The workspace's file, bare, from another checkout's root, or quoted from a traceback.
        ("main.py", {"app/main.py"}),
        ("checkout/app/main.py", {"app/main.py"}),
        ('File "/srv/checkout/app/main.py", line 2, in start', {"app/main.py"}),
        # The reporter's own script of the same name, in a folder the workspace does not have.
        ("/home/me/demo/main.py", set()),
        ('File "/home/me/demo/main.py", line 2, in <module>', set()),
    ],
)
def test_a_named_path_is_the_workspace_file_only_down_to_its_folder(
    tmp_path: Path, named: str, mentioned: set[str]
) -> None:
    files = {
        "app/main.py": "def start():\n    return serve()\n",
        "app/serve.py": "def serve():\n    return 1\n",
    }
    ranking = ranking_for(tmp_path, files, f"Running {named} the server never starts")
    assert ranking.found.mentioned_files == mentioned


ARRAY_FILES = {
    "arrays/core/concat.py": (
        "def concat(datasets, dim):\n"
        '    """Concatenate datasets along dim; a variable that one dataset lacks raises ValueError."""\n'
        "    names = set(datasets[0].variables)\n"
        "    if any(set(dataset.variables) != names for dataset in datasets):\n"
        "        raise ValueError('variables differ')\n"
        "    return [dataset.stack(dim) for dataset in datasets]\n"
    ),
    "arrays/util/print_versions.py": (
        "import platform\n\n\n"
        "def system_info():\n"
        '    """The commit, python, machine, processor, byteorder, LANG and LOCALE lines."""\n'
        "    return [('commit', None), ('python', platform.python_version())]\n\n\n"
        "def show_versions():\n"
        '    """Print INSTALLED VERSIONS: the system, then numpy, scipy, netCDF4, h5netcdf, h5py, dask,\n'
        '    bottleneck, cftime, zarr, pandas, setuptools and pip, or None for each one not installed."""\n'
        "    deps = ['numpy', 'scipy', 'netCDF4', 'h5netcdf', 'h5py', 'dask', 'bottleneck', 'cftime']\n"
        "    deps += ['zarr', 'pandas', 'setuptools', 'pip']\n"
        "    return system_info() + [(name, None) for name in deps]\n"
    ),
    **background_modules("arrays/ops", 20),
}


def test_a_pasted_version_report_does_not_lead_to_the_code_that_prints_one(tmp_path: Path) -> None:
    """The issue template's report names every package the project's ``show_versions`` lists: read as
    the task's words, they put that function first."""
    report = "\n".join(
        [
            "<details><summary>Output of <tt>xr.show_versions()</tt></summary>",
            "",
            "INSTALLED VERSIONS",
            "------------------",
            "commit: None",
            "python: 3.8.3 (default, Jul  2 2020, 11:26:31)",
            "machine: x86_64",
            "processor: i386",
            "byteorder: little",
            "LANG: en_US.UTF-8",
            "LOCALE: en_US.UTF-8",
            *(f"{name}: {version}" for name, version in [("numpy", "1.18.5"), ("scipy", "1.5.0")]),
            *(f"{name}: None" for name in ("netCDF4", "h5netcdf", "h5py", "zarr", "cftime")),
            *(f"{name}: 2.20.0" for name in ("dask", "bottleneck", "pandas", "setuptools", "pip")),
            "</details>",
        ]
    )
    task = f"concat of two datasets raises when a variable is missing from one of them\n\n{report}\n"
    ranking = ranking_for(tmp_path, ARRAY_FILES, task)
    ranked = [f"{item.node.path}::{item.node.qualified_name}" for item in ranking.ranked]
    assert ranked[0] == "arrays/core/concat.py::concat"
    assert "arrays/util/print_versions.py::show_versions" not in ranked


INVOICING = {
    "billing/invoices.py": (
        "def void_invoice(invoice):\n"
        '    """Void an invoice: it is closed and no longer due."""\n'
        "    invoice.status = 'void'\n"
        "    return invoice\n"
    ),
    "billing/payments.py": (
        "def refund_payment(payment, gateway):\n"
        '    """Refund a captured payment through the gateway; the card sees the refund."""\n'
        "    gateway.refund(payment.card, payment.amount)\n"
        "    payment.status = 'refunded'\n"
        "    return payment\n"
    ),
    **background_modules("billing", 20),
}


def test_the_tasks_title_weighs_more_than_its_explanation(tmp_path: Path) -> None:
    """The title says what to change; the explanation below it says more words about the payment it
    involves. Read with every word alike, the payment's code came first."""
    task = (
        "Voiding an invoice leaves it due\n\n"
        "A refund of the captured payment went through the gateway and the card shows the refund,"
        " yet the payment refund leaves the gateway's captured payment as it was."
    )
    ranking = ranking_for(tmp_path, INVOICING, task)
    assert ranking.files[0].path == "billing/invoices.py"
    assert ranking.ranked[0].node.qualified_name == "void_invoice"


POLYNOMIALS = {
    "algebra/errors.py": (
        "class PolynomialError(Exception):\n"
        '    """Raised when an expression is no polynomial in the given generators."""\n'
    ),
    "algebra/modulo.py": (
        "from algebra.errors import PolynomialError\n\n\n"
        "def reduce_modulo(expression, divisor):\n"
        '    """The remainder of an expression by a divisor; substituted symbols are reduced again."""\n'
        "    if not expression.is_polynomial():\n"
        "        raise PolynomialError(expression)\n"
        "    return expression.remainder(divisor)\n"
    ),
    **background_modules("algebra", 20),
}


def test_an_exception_the_task_names_is_not_what_it_asks_to_change(tmp_path: Path) -> None:
    """The task names the error it got; the class of that error was never the code changed in the
    tasks measured, and as a named symbol it came first."""
    task = "Unexpected `PolynomialError` when substituting into a modulo of a symbol"
    ranking = ranking_for(tmp_path, POLYNOMIALS, task)
    order = [item.node.qualified_name for item in ranking.ranked]
    assert order[0] == "reduce_modulo"
    raised = next(item for item in ranking.ranked if item.node.name == "PolynomialError")
    assert "named" not in raised.parts


LEDGER_AND_INVOICES = {
    "billing/invoices.py": (
        "def void_invoice(invoice):\n"
        '    """Void an invoice: the invoice is no longer due."""\n'
        "    invoice.status = 'void'\n"
        "    return invoice\n"
    ),
    "billing/ledger.py": (
        "def post_entry(book, entry):\n"
        '    """Post an entry to the ledger book."""\n'
        "    book.entries.append(entry)\n"
        "    return book\n"
    ),
    **background_modules("billing", 20),
}


def test_the_file_a_report_keeps_coming_back_to_ranks_first(tmp_path: Path) -> None:
    """The report mentions the voided invoice once and the ledger four times: the ledger is what it is
    about. Read with each word once, the invoice's file, whose every line says "invoice", came
    first."""
    task = (
        "Totals drift after a month\n\n"
        "An invoice was voided. Since then the ledger is off: the ledger shows each entry twice, the"
        " ledger total grows, and the ledger never balances."
    )
    ranking = ranking_for(tmp_path, LEDGER_AND_INVOICES, task)
    assert [file.path for file in ranking.files[:2]] == ["billing/ledger.py", "billing/invoices.py"]


REFUNDS_AND_LEDGER = {
    "billing/refunds.py": (
        "def refund_payment(payment):\n"
        '    """Refund a payment; a lost refund is retried."""\n'
        "    payment.refunded = True\n"
        "    return payment\n"
    ),
    "billing/ledger.py": (
        "def settle(ledger):\n"
        '    """Settle the ledger."""\n'
        "    return ledger.close()\n\n\n"
        "def settle_all(ledgers):\n"
        "    return [settle(ledger) for ledger in ledgers]\n"
    ),
    **background_modules("billing", 20),
}


def test_words_only_a_librarys_stack_frames_say_do_not_search_whole_files(tmp_path: Path) -> None:
    """The report's traceback runs through an installed library whose file and functions are named
    like the workspace's ledger; its prose is about refunds. Searched with the frames' words, the
    ledger's file, which says "ledger" and "settle" on every line, came first."""
    task = (
        "Refund lost\n\n"
        "A refund is lost when a payment is refunded twice.\n\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/site-packages/vendorlib/ledger.py", line 20, in settle\n'
        '  File "/usr/lib/python3/site-packages/vendorlib/ledger.py", line 41, in settle_all\n'
        '  File "/usr/lib/python3/site-packages/vendorlib/ledger.py", line 57, in settle_ledger\n'
        "ValueError: refund lost\n"
    )
    ranking = ranking_for(tmp_path, REFUNDS_AND_LEDGER, task)
    assert [file.path for file in ranking.files[:2]] == ["billing/refunds.py", "billing/ledger.py"]


def test_a_task_that_is_only_a_stack_trace_still_searches_whole_files(tmp_path: Path) -> None:
    """With no word outside its frames, the frames' words search whole files: the file map still
    says which files hold the trace's words."""
    task = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/billing/ledger.py", line 7, in settle_all\n'
        '  File "/srv/app/billing/ledger.py", line 3, in settle\n'
    )
    ranking = ranking_for(tmp_path, REFUNDS_AND_LEDGER, task)
    assert ranking.files[0].path == "billing/ledger.py"
    assert "text" in ranking.files[0].parts
