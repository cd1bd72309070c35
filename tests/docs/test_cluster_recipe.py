"""docs/spark.md's and the README's standalone-cluster commands are the recipe the cluster test runs.

tests/spark/session/test_cluster.py runs :func:`cluster_recipe.steps` with its own places; here both pages' blocks are
parsed and compared with the same steps rendered with the places the pages show, so a page cannot drift from
what is tested. The small shell reader itself is pinned on worked examples and a round-trip property.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.cluster_recipe import DOCUMENTED, SPARK_EXTRA, Step, parse, render, steps

ROOT = Path(__file__).resolve().parents[2]


def _sh_blocks(text: str) -> list[str]:
    """The ``sh`` fences' bodies, indentation (a list item's) removed."""
    blocks = re.findall(r"^( *)```sh\n(.*?)^\1```", text, flags=re.MULTILINE | re.DOTALL)
    return ["".join(line.removeprefix(indent) for line in body.splitlines(keepends=True)) for indent, body in blocks]


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_the_spark_page_shows_the_recipe_the_cluster_test_runs() -> None:
    page = (ROOT / "docs" / "spark.md").read_text(encoding="utf-8")
    blocks = _sh_blocks(_section(page, "## A standalone cluster"))
    assert len(blocks) == 4  # the wheel, the virtualenvs, the master and workers, the submission
    assert [step for block in blocks for step in parse(block)] == steps(DOCUMENTED)


def test_the_readme_shows_the_same_recipe() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = _sh_blocks(_section(readme, "## On your Spark"))
    assert parse(block) == steps(DOCUMENTED)


def test_the_pages_name_the_wheel_of_this_version_and_the_spark_extras_ranges() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert DOCUMENTED.version == project["version"]
    assert DOCUMENTED.wheel == f"dist/assignors-{project['version']}-py3-none-any.whl"
    installs = [step.argv[2:] for step in steps(DOCUMENTED) if step.argv[1:2] == ("install",)]
    assert installs == [
        ("pandas>=2.2,<3", "pyarrow>=16"),
        ("pandas>=2.2,<3", "pyarrow>=16", "plotly>=5.20"),
    ]
    assert set(installs[1]) <= set(project["optional-dependencies"]["spark"])
    assert SPARK_EXTRA["pyspark"] == "pyspark>=4.0,<5"


def test_parse_reads_continuations_exports_prefixes_and_background() -> None:
    block = (
        "export A=1 B='two words'\n"
        "\n"
        "X=y run --flag \\\n"
        "    value  # a comment\n"
        "make one && make two\n"
        "serve --port 7 &\n"
    )
    assert parse(block) == [
        Step((), (("A", "1"), ("B", "two words"))),
        Step(("run", "--flag", "value"), (("X", "y"),)),
        Step(("make", "one")),
        Step(("make", "two")),
        Step(("serve", "--port", "7"), background=True),
    ]
    assert parse(block)[-1].option("--port") == "7"


_NAMES = st.from_regex(r"[A-Z_][A-Z0-9_]{0,6}", fullmatch=True)
_WORDS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12).filter(
    lambda word: word not in {"&", "&&"}  # the reader's operators: it does not keep quoting apart from them
)
_ENV = st.lists(st.tuples(_NAMES, _WORDS), max_size=3).map(tuple)
_COMMAND = st.builds(
    Step,
    st.tuples(
        st.from_regex(r"[a-z./$][a-z0-9./_-]{0,8}", fullmatch=True).filter(lambda head: head != "export")
    ).flatmap(lambda head: st.lists(_WORDS, max_size=5).map(lambda rest: (*head, *rest))),
    _ENV,
    st.booleans(),
)
_EXPORT = st.builds(Step, st.just(()), _ENV.filter(bool))


@given(st.lists(st.one_of(_COMMAND, _EXPORT), max_size=6))
def test_parse_reads_back_what_render_writes(recipe: list[Step]) -> None:
    assert parse(render(recipe)) == recipe


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("run 'unclosed", "No closing quotation"),
        ("run trailing \\", "No escaped character"),
        ("make one && make two &", "not in the small shell"),  # a shell backgrounds the whole list
        ("make one && && make two", "not in the small shell"),
        ("export PATH", "export without a value"),
        ("A=1 B=2", "assignments without a command"),
    ],
)
def test_parse_refuses_what_it_would_read_unlike_a_shell(line: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse(line)
