"""Hostile and careless input, run through the real `nsb` command.

Every case of tests/hostile_corpus.py (generated here, not stored) must end
with exit 2 and one `nsb: error:` line naming the file or key, without a
traceback, without echoing a secret, within a hang guard and using little
memory (measured from the child's own rusage). The cases run in parallel in
one module fixture; each is reported as its own test.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests import hostile_corpus

MAX_RSS_MB = 200
CASES = hostile_corpus.cases()


@pytest.fixture(scope="module")
def outcomes() -> dict[str, hostile_corpus.Outcome]:
    with ThreadPoolExecutor(max_workers=4) as pool:
        found = pool.map(hostile_corpus.run_case, CASES)
        return dict(zip([c.name for c in CASES], found, strict=True))


def test_the_corpus_covers_every_class_of_the_issue():
    names = {c.name for c in CASES}
    for fragment in ("billion-laughs-", "alias-cycle-", "deep-block-", "deep-flow-",
                     "dev-zero-", "fifo-", "symlink-loop-", "non-utf8-", "nul-char-",
                     "huge-int-", "big-list-", "key-null-", "duplicate-key-", "nan-",
                     "jinja-lipsum-", "jinja-power-tower-", "jinja-nested-range-",
                     "jinja-str-repeat-", "jinja-include-", "jinja-div-zero-",
                     "jinja-recursive-macro-", "task-args-deep", "task-args-injection-",
                     "task-args-surrogate", "duplicate-vnf-name", "pod-ssh-port-0",
                     "pod-password-int", "output-url-secret", "report-deep-",
                     "push-damaged-target", "inventory-to-directory"):
        assert any(fragment in name for name in names), fragment
    assert len(names) == len(CASES), "case names must be unique"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input_gets_one_located_line(case, outcomes):
    outcome = outcomes[case.name]
    assert outcome.code is not None, f"still running after {hostile_corpus.HANG_GUARD_S} s"
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert "Traceback" not in outcome.stderr, outcome.stderr[-2000:]
    assert outcome.code == 2, (outcome.code, outcome.stderr[-500:])
    assert len(lines) == case.mistakes, outcome.stderr[-2000:]
    assert all(line.startswith("nsb: error: ") for line in lines), lines
    if case.names:
        assert case.names in lines[0], lines[0]
    for secret in case.secrets:
        assert secret not in outcome.stdout + outcome.stderr
    assert outcome.max_rss_mb < MAX_RSS_MB, f"peak RSS {outcome.max_rss_mb:.0f} MB"


@pytest.mark.parametrize("relative", hostile_corpus.TYPED_FILES)
def test_any_field_of_the_wrong_type_gets_one_line(relative, tmp_path, nsb_main,
                                                   monkeypatch):
    """In-process (hundreds of cases): a list, a mapping or null in place of each
    value of the sample files is accepted or refused in one line, never a traceback."""
    hostile_corpus.build(hostile_corpus.Case("types", []), tmp_path)
    monkeypatch.chdir(tmp_path)
    task = hostile_corpus.NSB_TASK if relative == hostile_corpus.NSB_TASK \
        else hostile_corpus.YS_TASK
    original = (tmp_path / relative).read_text()
    mutations = hostile_corpus.field_mutations(relative, tmp_path)
    assert len(mutations) > 10
    for line, field, text in mutations:
        (tmp_path / relative).write_text(text)
        code, _, err = nsb_main("task", "start", "--dry-run", task)
        lines = err.strip().splitlines()
        assert code in (0, 2), (line, field, err)
        if code == 2:
            assert len(lines) == 1 and lines[0].startswith("nsb: error: "), (line, field, err)
    (tmp_path / relative).write_text(original)
