"""Which data file of the fix a test's parameter names (`gitgauge/mining/parameters.py`, the rule
in docs/guide/per-test-verdicts.md), and that such a test is the fix's own (`pertest.Owners`)."""

from __future__ import annotations

import pytest

from gitgauge.core.junit import TestReport
from gitgauge.mining import pertest
from gitgauge.mining.parameters import NamedFiles

CR = "tests/data/invalid/carriage-return.toml"
KEY = "testdata/valid/key.json"
FILES = NamedFiles(
    [
        CR,
        KEY,
        "tests/data/a.txt",
        "tests/data/1.json",
        "tests/data/empty.toml",
        "tests/data/xy1.toml",
    ]
    + ["tests/data/caf\u00e9.toml", "tests/data/README", "tests/data/cr.toml"]
)


@pytest.mark.parametrize(
    ("title", "named"),
    [
        # pytest: the stem (tomli's ids), the name, a path under the data folder or the
        # repository, with or without the extension, an absolute path, Windows separators.
        ("test_invalid[carriage-return]", CR),
        ("test_invalid[carriage-return.toml]", CR),
        ("test_invalid[invalid/carriage-return.toml]", CR),
        ("test_invalid[data/invalid/carriage-return]", CR),
        (f"test_invalid[{CR}]", CR),
        ("test_invalid[/tmp/wt/slot0/tests/data/invalid/carriage-return.toml]", CR),
        ("test_invalid[invalid\\\\carriage-return.toml]", CR),  # pytest escapes `\` as `\\`
        # Several parameters joined by `-`, and pytest's counter for a repeated id.
        ("test_x[True-carriage-return-3]", CR),
        ("test_x[carriage-return0]", CR),
        ("test_x[empty1]", "tests/data/empty.toml"),
        ("test_x[xy1_0]", "tests/data/xy1.toml"),
        # pytest's escaping of what is not printable ASCII.
        ("test_x[caf\\xe9]", "tests/data/caf\u00e9.toml"),
        ("test_x[caf\u00e9]", "tests/data/caf\u00e9.toml"),  # escaping switched off
        # A short name is a file only with its extension.
        ("test_x[a.txt]", "tests/data/a.txt"),
        ("test_x[1.json]", "tests/data/1.json"),
        ("test_x[a]", None),
        ("test_x[1]", None),
        ("test_x[cr]", None),
        ("test_x[0-1]", None),
        # A name without an extension is a stem: long enough, it is named.
        ("test_x[README]", "tests/data/README"),
        # Part of a name, or another folder, is not the file.
        ("test_x[return]", None),
        ("test_x[carriage]", None),
        ("test_x[other/carriage-return.toml]", None),
        ("test_x[valid/carriage-return]", None),
        ("test_carriage_return", None),
        ("test_x", None),
        # Go subtests: every run of the `/` levels.
        ("TestParse/key.json", KEY),
        ("TestParse/key", KEY),
        ("TestParse/valid/key", KEY),
        ("TestParse/group/key", KEY),
        ("TestParse/testdata/valid/key.json", KEY),
        ("TestParse/a", None),
        # A free title (node, mocha, tape): only a name or a path.
        ("carriage-return.toml", CR),
        ("invalid/carriage-return.toml", CR),
        ("carriage-return", None),
        ("parses carriage-return.toml", None),
    ],
)
def test_a_parameter_names_a_file_by_its_name_path_or_telling_stem(
    title: str, named: str | None
) -> None:
    assert FILES.named_by(title) == named


def test_no_files_name_nothing() -> None:
    assert NamedFiles([]).named_by("test_x[carriage-return]") is None


def owners(changed: list[str]) -> pertest.Owners:
    tree = ["tests/test_data.py", *changed]
    return pertest.Owners(changed, tree=lambda: tree, read=lambda path: None, changed=changed)


def test_a_test_of_an_unchanged_module_is_the_fixs_own_when_it_runs_the_fixs_data_file() -> None:
    fix = owners([CR])
    assert fix.owned("tests.test_data::test_invalid[carriage-return]")
    assert fix.owned("tests.test_data.TestInvalid::test_it[carriage-return]")
    assert not fix.owned("tests.test_data::test_invalid[bare-newline]")
    assert not fix.owned("tests.test_data::test_valid")
    # Deleted (or only renamed away) files are not the fix's: they are not in `changed`.
    deleted = pertest.Owners([CR], tree=lambda: [], read=lambda path: None, changed=[])
    assert not deleted.owned("tests.test_data::test_invalid[carriage-return]")
    # A TAP name under its file: the last title is the parameter.
    assert fix.owned("test/data.test.js > invalid > carriage-return.toml")


def test_fail_to_pass_of_such_tests_is_not_outside_the_fix() -> None:
    at_fix = pertest_report({"tests.test_data::test_invalid[carriage-return]": "passed"})
    at_parent = pertest_report({"tests.test_data::test_invalid[carriage-return]": "failed"})
    inside = pertest.split([at_fix], [at_parent], owners=owners([CR]))
    assert inside.fail_to_pass == ["tests.test_data::test_invalid[carriage-return]"]
    assert not inside.outside_fix
    outside = pertest.split([at_fix], [at_parent], owners=owners(["tests/data/other.toml"]))
    assert outside.outside_fix
    assert pertest.counts(outside).endswith(
        ", the failing tests live in files the fix did not change: review it"
    )


def pertest_report(outcomes: dict[str, str]) -> TestReport:
    report = TestReport()
    for name, outcome in outcomes.items():
        report.add(name, outcome)  # type: ignore[arg-type]
    return report
