"""Which paths are test code (``file_kinds.is_test_path``): a test runner's folders and file names,
but not a package's own ``test`` or ``testing`` library that its users' tests import, which is code
of its own kind, ranked lower."""

from __future__ import annotations

import pytest

from smartctx.retrieval.file_kinds import FileKind, file_kind, is_test_path


@pytest.mark.parametrize(
    ("path", "test"),
    [
        ("tests/test_views.py", True),
        ("pkg/tests/helpers.py", True),
        ("src/components/__tests__/Button.tsx", True),
        ("core/parser_test.go", True),
        ("spec/models/user_spec.rb", True),
        ("src/test/java/com/acme/ParserTest.java", True),
        ("src/test/java/com/acme/Fixtures.java", True),
        # A top-level test suite, whatever its files are named: pytest's ``testing/``, CPython's
        # ``Lib/test/`` with its support package.
        ("testing/python/collect.py", True),
        ("Lib/test/support/__init__.py", True),
        ("test/helpers.py", True),
        # A test module inside a library test package is still a test.
        ("django/test/test_utils.py", True),
        # A package's test library: shipped code its users' tests import.
        ("django/test/client.py", False),
        ("django/test/testcases.py", False),
        ("sympy/testing/pytest.py", False),
        ("numpy/testing/_private/utils.py", False),
        ("lib/matplotlib/testing/compare.py", False),
        # Only Python packages: another language's ``test`` folder is its tests.
        ("app/test/server.go", True),
        ("packages/core/test/index.ts", True),
        ("billing/invoices.py", False),
    ],
)
def test_a_path_is_test_code_by_the_names_test_runners_use(path: str, test: bool) -> None:
    assert is_test_path(path) is test


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("django/test/client.py", FileKind.TEST_LIBRARY),
        ("sympy/testing/pytest.py", FileKind.TEST_LIBRARY),
        ("django/test/test_utils.py", FileKind.TEST),
        ("tests/test_views.py", FileKind.TEST),
        ("django/db/models/query.py", None),
    ],
)
def test_a_test_library_is_a_kind_of_its_own(path: str, kind: FileKind | None) -> None:
    assert file_kind(path) is kind
