"""Line-end hyphens decided per document: a real hyphen, or a word a line break cut."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from drac.documents.offline.lines import SOFT_HYPHEN, WORD, WORD_MAX, Line


def resolve_hyphens(pages: list[list[Line]], hyphenated: bool = True) -> bool:
    """Turn each line-end hyphen PDFium marked into a real hyphen or nothing (a wrapped word).

    The glyph is the same either way, so the document decides. A hyphen stays next to a
    digit, before fewer than three letters ("Walk-in": typesetters do not break there), or
    where the document writes the hyphenated form elsewhere; a word the document writes
    whole elsewhere is joined. Otherwise it stays before a capital ("Bei-Dou") and between
    two words the document also writes on their own ("high-traffic"); a part that is no word
    of the document elsewhere ("experi-ence", "The-aters", "Recogni-tion") was cut by a line
    break, so the word is joined (in a PDF not `hyphenated`, kept). Returns whether a wrapped
    word was joined (the document's typesetter hyphenates).
    """
    marked = [
        (line, lines[position + 1].text if position + 1 < len(lines) else "")
        for lines in pages
        for position, line in enumerate(lines)
        if SOFT_HYPHEN in line.text
    ]
    if not marked:
        return False
    words: Counter[str] = Counter()
    compounds: set[str] = set()
    for lines in pages:
        for line in lines:
            text = line.text.casefold()
            words.update(WORD.findall(text))
            compounds.update(_COMPOUND.findall(text))
    found = [
        (line, index, at_end, left, right)
        for line, following in marked
        for index, at_end, left, right in _markers(line, following)
    ]
    # the parts' own occurrences at markers are no sign that they are words on their own
    at_markers = Counter(part.casefold() for *_, left, right in found for part in (left, right))
    joined = False
    for line, index, at_end, left, right in found:
        verdict = _hyphen_evidence(left, right, words, compounds)
        if verdict is None:
            verdict = (
                not hyphenated
                or right[:1].isupper()
                or all(
                    words[part] > at_markers[part] for part in (left.casefold(), right.casefold())
                )
            )
        line.chars[index] = ("-" if verdict or at_end else "", line.chars[index][1])
        if at_end:
            line.hyphen_end = not verdict
        joined = joined or not verdict
    for line, _ in marked:
        line.text = "".join(ch for ch, _ in line.chars).strip()
    return joined


_COMPOUND = re.compile(r"[^\W_]+(?:-[^\W_]+)+")


_WORD_AFTER = re.compile(r"^[^\W_]+")


def _markers(line: Line, following: str) -> Iterator[tuple[int, bool, str, str]]:
    """(index, at the line's end, word before, word after) of each hyphen marker of a line.

    Each word is read from the characters next to the marker, so a line of many markers costs
    time linear in its length.
    """
    chars = line.chars
    last_visible = max((i for i, (ch, _) in enumerate(chars) if ch.strip()), default=-1)
    for index, (char, _) in enumerate(chars):
        if char != SOFT_HYPHEN:
            continue
        start = index
        while start > 0 and _is_word_char(chars[start - 1][0]) and index - start < WORD_MAX:
            start -= 1
        end = index + 1
        # the word goes on past further markers ("Tech-ni-cian" in a narrow cell)
        while (
            end < len(chars)
            and end - index < WORD_MAX
            and (
                _is_word_char(chars[end][0])
                or (chars[end][0] == SOFT_HYPHEN and end + 1 < len(chars))
            )
        ):
            end += 1
        at_end = index >= last_visible
        before = "".join(ch for ch, _ in chars[start:index])
        if at_end:
            after_match = _WORD_AFTER.search(following.strip()[:WORD_MAX])
            after = after_match.group(0) if after_match else ""
        else:
            after = "".join(ch for ch, _ in chars[index + 1 : end] if ch != SOFT_HYPHEN)
        yield index, at_end, before, after


def _is_word_char(char: str) -> bool:
    return len(char) == 1 and (char.isalnum())


def _hyphen_evidence(
    left: str, right: str, words: Counter[str], compounds: set[str]
) -> bool | None:
    """True for a real hyphen, False for a wrapped word, None when the document cannot tell."""
    if len(left) < 2 or len(right) < 3 or left[-1].isdigit() or right[0].isdigit():
        return True
    if f"{left}-{right}".casefold() in compounds:
        return True
    if (left + right).casefold() in words:
        return False
    return None
