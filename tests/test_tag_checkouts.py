"""The tags of gitgauge's checkouts through the library door, on the sample of
`helpers.repos.tagged`: a pooled checkout's reset (as mine verifies a candidate), a task's
workspace reset to another commit of its task, and the per-commit tag lists remembered (a
parent's from its child's, without another walk of the history)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from helpers.repos import GitRepo
from helpers.repos.tagged import VISIBLE_AT_BASE, Sample, build

from gitgauge.core.git import Repository
from gitgauge.core.git.checkout import CheckoutPool
from gitgauge.core.git.tags import TagCache, merged_tags
from gitgauge.running.workspace import TaskWorkspaces


@pytest.fixture
def sample(tmp_path: Path, private_tmp: Path) -> Sample:
    """The sample, with gitgauge's checkouts and copies in a folder of the test's own: none may
    be left behind (`private_tmp`)."""
    return build(tmp_path / "sample")


def test_each_reset_of_a_pooled_checkout_writes_its_commits_tags_and_drops_any_made_there(
    sample: Sample,
) -> None:
    """Through the library door: a slot's checkout reset from the fix to its parent (as mine
    verifies a candidate) holds the parent's tags only, also after a test run tagged in it."""
    before = sample.repo.snapshot()
    host = Repository(sample.repo.root)

    def tags_in(work_tree: Path) -> list[str]:
        listed = subprocess.run(
            ["git", "tag", "--list"], cwd=work_tree, capture_output=True, text=True
        )
        return sorted(listed.stdout.split())

    with CheckoutPool(owner_repository=host.root) as pool, pool.slot(0) as checkout:
        checkout.reset(sample.fix, stores=host.object_stores(), warn=print)
        assert tags_in(checkout.path) == [*VISIBLE_AT_BASE, "v1.2.0"]
        subprocess.run(["git", "tag", "made-by-a-test"], cwd=checkout.path, check=True)
        assert "made-by-a-test" in tags_in(checkout.path)
        checkout.reset(sample.base, stores=host.object_stores(), warn=print)
        assert tags_in(checkout.path) == VISIBLE_AT_BASE
    assert "made-by-a-test" not in sample.repo.git("tag", "--list").split()
    assert sample.repo.snapshot() == before


def test_a_task_workspace_reset_elsewhere_holds_no_tag_its_base_has_not(sample: Sample) -> None:
    """A workspace reset to another commit of its task (a chain's parent) holds the tags of that
    commit's history among base's: an older commit fewer, a later one (here the fix, which no
    kind resets to) none that base lacks, since the history copy holds no tag object past it."""
    first = sample.repo.git("rev-list", "--max-parents=0", "HEAD").strip()
    with TaskWorkspaces(
        Repository(sample.repo.root), sample.base, history="isolated", link=[], warn=print
    ) as prepared:
        names = {
            commit: [tag.name.removeprefix("refs/tags/") for tag in prepared.tags_at(commit)]
            for commit in (sample.base, first, sample.fix)
        }
    assert names[sample.base] == VISIBLE_AT_BASE
    assert names[first] == ["v1.0.0", "v1.0.0-signed"]
    assert names[sample.fix] == VISIBLE_AT_BASE


def test_a_parents_tags_come_from_its_remembered_child_without_another_walk(
    git_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mine asks at a fix, then at its parent: the parent's tags are the fix's but those on the
    fix, read from what was remembered (one `for-each-ref` per candidate), and the same as git
    lists. A tag of a tag (whose commit one peel does not tell) makes it ask git again."""
    import shutil

    old = git_repo.commit("Initial commit", files={"a": "1\n"})
    git_repo.git("tag", "-a", "v1", "-m", "one")
    parent = git_repo.commit("Second", files={"a": "2\n"})
    git_repo.git("tag", "v2")
    fix = git_repo.commit("Fix", files={"a": "3\n"})
    git_repo.git("tag", "-a", "v3", "-m", "three")
    git_repo.git("tag", "v3-light")
    real_git = shutil.which("git")
    assert real_git is not None
    calls = tmp_path / "calls"
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\necho "$1" >> "{calls}"\nexec "{real_git}" "$@"\n')
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")

    def walks() -> int:
        listed = calls.read_text().split() if calls.exists() else []
        calls.unlink(missing_ok=True)
        return listed.count("for-each-ref")

    cache = TagCache(git_repo.root)
    names = [tag.name for tag in cache.at(fix)]
    assert names == ["refs/tags/v1", "refs/tags/v2", "refs/tags/v3", "refs/tags/v3-light"]
    assert walks() == 1
    assert cache.at(parent) == merged_tags(git_repo.root, parent)
    assert [tag.name for tag in cache.at(parent)] == ["refs/tags/v1", "refs/tags/v2"]
    assert walks() == 1  # merged_tags' own; the cache asked nothing
    git_repo.git("-c", "advice.nestedTag=false", "tag", "-a", "v1-again", "-m", "x", "v1")
    fresh = TagCache(git_repo.root)
    fresh.at(parent)
    assert [tag.name for tag in fresh.at(old)] == ["refs/tags/v1", "refs/tags/v1-again"]
    assert walks() == 2  # the nested tag's commit is not known from one peel: git is asked
