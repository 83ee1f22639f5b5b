"""Renderings and the content hash (real tiktoken counting)."""

from __future__ import annotations

from nous.memory import renderings
from nous.text import tokens

COUNTER = tokens.counter()


def test_hash_folds_case_whitespace_and_punctuation() -> None:
    assert renderings.content_hash("Use  tabs.\n") == renderings.content_hash("use tabs")
    assert renderings.content_hash("use tabs") != renderings.content_hash("use spaces")


def test_summary_keeps_whole_sentences_within_100_tokens() -> None:
    text = " ".join(f"Sentence number {n} explains one more reason." for n in range(60))
    summary = renderings.summary("fact", text, None, 1.0, COUNTER)
    assert summary.startswith("Fact: Sentence number 0")
    assert summary.endswith(".")
    assert COUNTER.count(summary) <= renderings.SUMMARY_TOKENS


def test_micro_is_one_line_of_the_first_sentence() -> None:
    text = "Don't push directly to main. Always open a pull request first.\nSecond line."
    micro = renderings.micro("constraint", text, None, 1.0, COUNTER)
    assert micro == "Don't push directly to main."


def test_micro_cuts_a_long_first_sentence_with_an_ellipsis() -> None:
    text = "word " * 200
    micro = renderings.micro("fact", text, "success", 1.0, COUNTER)
    assert micro.endswith("… [success]") and "\n" not in micro
    assert COUNTER.count(micro) <= renderings.MICRO_TOKENS + 1


def test_normalise_collapses_blank_lines_and_spaces() -> None:
    assert renderings.normalise("  a \t b\r\n\r\n\r\n\nc ") == "a b\n\nc"


def test_a_lead_in_is_said_once_before_a_code_block_of_several_lines() -> None:
    """From agent-framework's build-and-test SKILL.md: a list item introducing a code block."""
    text = (
        "- **Running tests across the solution** with a filter may cause some projects to match "
        "zero tests. Use `--ignore-exit-code 8` to suppress this:\n\n"
        "```bash\n# Run all unit tests across the solution\n"
        "dotnet test --solution ./all.slnx --ignore-exit-code 8\n```\n\n- **Next item**\n"
    )
    _, body = renderings.flat(text)
    assert body.count("Use `--ignore-exit-code 8` to suppress this:") == 1, body
    assert body.index("suppress this:") < body.index("dotnet test --solution")
