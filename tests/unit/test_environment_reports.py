"""A task's pasted environment (version reports, interpreter banners) is not read as the task; the
task's own text around it, and text merely shaped like it, is."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from smartctx.retrieval.environment_reports import without_environment
from smartctx.retrieval.query import parse_task

# xarray's show_versions(), as its issue template asks for it.
SHOW_VERSIONS = """concat drops variables that only one dataset has

<details><summary>Output of <tt>xr.show_versions()</tt></summary>

INSTALLED VERSIONS
------------------
commit: None
python: 3.8.3 (default, Jul  2 2020, 11:26:31)
[Clang 10.0.0 ]
machine: x86_64
LANG: en_US.UTF-8

xarray: 0.16.0
netCDF4: None
h5netcdf: 0.8.1
bottleneck: 1.3.2
</details>
"""

# scikit-learn's show_versions() inside a fence, under the template's heading.
SYSTEM_AND_DEPS = """#### Versions
```
System:
    python: 3.7.3 (default, Mar 27 2019, 22:11:17)  [GCC 7.3.0]
executable: /usr/bin/python3
   machine: Linux-4.15.0-43-generic-x86_64-with-Ubuntu-18.04-bionic

BLAS:
    macros: HAVE_CBLAS=None
cblas_libs: openblas, openblas

Python deps:
       pip: 19.0.3
     numpy: 1.16.2
    Cython: 0.29.6
```
"""

BANNER = """```
Python 3.6.0 |Continuum Analytics, Inc.| (default, Dec 23 2016, 12:22:00)
Type "copyright", "credits" or "license" for more information.

IPython 5.1.0 -- An enhanced Interactive Python.
?         -> Introduction and overview of IPython's features.
%quickref -> Quick reference.

In [1]: apart(bug, t)
```"""


def _lines_gone(text: str) -> list[str]:
    kept = without_environment(text).split("\n")
    return [line.strip() for line, after in zip(text.split("\n"), kept, strict=True) if line != after]


def test_a_version_report_goes_with_its_heads_and_the_command_that_printed_it() -> None:
    gone = _lines_gone(SHOW_VERSIONS)
    assert "h5netcdf: 0.8.1" in gone and "netCDF4: None" in gone and "machine: x86_64" in gone
    assert "INSTALLED VERSIONS" in gone and "[Clang 10.0.0 ]" in gone
    assert gone[0].startswith("<details><summary>Output of")
    assert without_environment(SHOW_VERSIONS).startswith("concat drops variables that only one dataset has\n")
    assert "</details>" not in gone


def test_a_fenced_system_report_goes_and_its_fences_stay() -> None:
    after = without_environment(SYSTEM_AND_DEPS)
    assert after.count("```") == 2 and "#### Versions" in after
    words = set(parse_task(SYSTEM_AND_DEPS).words)
    assert not words & {"cblas", "libs", "macros", "executable", "numpy", "cython", "blas", "deps"}


def test_a_javascript_projects_envinfo_report_goes_too() -> None:
    """The shape is the rule, not the project: `npx envinfo`, which JavaScript issue forms ask for."""
    report = (
        "  System:\n    OS: macOS 13.4\n    CPU: (8) arm64 Apple M1\n  Binaries:\n"
        "    Node: 18.16.0 - ~/.nvm/versions/node/v18.16.0/bin/node\n    npm: 9.5.1 - /usr/local/bin/npm\n"
        "  npmPackages:\n    vite: ^4.3.9 => 4.3.9\n    typescript: 5.1.3\n"
    )
    task = "HMR stops after a CSS import error\n\n" + report
    assert set(_lines_gone(task)) == {line.strip() for line in report.splitlines()}
    assert not set(parse_task(task).words) & {"binaries", "npm", "cpu", "arm64", "npmpackages"}


def test_an_interpreters_banner_goes_and_the_session_stays() -> None:
    gone = _lines_gone(BANNER)
    assert len(gone) == 5
    assert "In [1]: apart(bug, t)" in without_environment(BANNER)
    assert not set(parse_task(BANNER).words) & {"ipython", "copyright", "credits", "quickref", "enhanced"}


def test_a_report_line_that_names_a_module_path_stays() -> None:
    """Sphinx's template asks for its extensions beside the versions: they name code."""
    task = (
        "**Environment info**\n- OS: Mac\n- Python version: 3.8.2\n- Sphinx version: 3.1.0\n"
        "- Docutils version: 0.16\n- Sphinx extensions:  sphinx.ext.autosummary\n- Extra tools: No\n"
    )
    gone = _lines_gone(task)
    assert "- Sphinx extensions:  sphinx.ext.autosummary" not in gone
    assert "- Sphinx version: 3.1.0" in gone and "- OS: Mac" in gone


@pytest.mark.parametrize(
    "text",
    [
        # Fewer than three versions: a pasted configuration, the task's own words.
        "settings:\ntimeout: 3.5\nretries: 2.0\nbackend: redis\n",
        # Code that assigns numbers is code, however many lines of it.
        "alpha = 1.5\nbeta = 2.5\ngamma = 3.5\nlearning_rate = 0.1\n",
        # Prose that names a version.
        "In version 1.6.2 Symbol instances had no __dict__.\nSince 1.7.0 they do.\nTested on 1.8.1 too.\n",
        # Key-value lines split by prose: no run of three versions.
        "numpy: 1.17\nThe fit diverges.\nscipy: 1.3\nWith n_init > 1 it differs.\npandas: 0.25\n",
    ],
)
def test_text_shaped_like_a_report_but_not_one_stays(text: str) -> None:
    assert without_environment(text) == text


@given(st.text(alphabet=st.sampled_from("ab:=.-_ 019\n|()[]>#`"), max_size=300))
def test_lines_are_only_ever_blanked(text: str) -> None:
    after = without_environment(text)
    assert after.count("\n") == text.count("\n")
    assert all(line in ("", before) for before, line in zip(text.split("\n"), after.split("\n"), strict=True))
