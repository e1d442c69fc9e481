"""Token counting for building a vocabulary (MXNet 1.9.1's ``mx.contrib.text.utils``)."""
from __future__ import annotations

import re
from collections import Counter

__all__ = ["count_tokens_from_str"]


def count_tokens_from_str(source_str: str, token_delim: str = " ", seq_delim: str = "\n", to_lower: bool = False,
                          counter_to_update: Counter | None = None) -> Counter:
    """Count the tokens of ``source_str``.

    The string is split at every match of ``token_delim`` or ``seq_delim`` (both regular
    expressions: escape special characters, e.g. ``'\\\\*'``) and empty pieces are
    dropped.

    Parameters
    ----------
    source_str : str
        The text.
    token_delim, seq_delim : str
        Token and sequence delimiters (regular expressions).
    to_lower : bool
        Count the lower-cased tokens.
    counter_to_update : collections.Counter or None
        Add the counts to this counter (updated in place and returned) instead of a new one.

    Examples
    --------
    >>> count_tokens_from_str(' Life is great ! \\n life is good . \\n', ' ', '\\n', True)
    Counter({'life': 2, 'is': 2, 'great': 1, '!': 1, 'good': 1, '.': 1})
    """
    tokens = [t for t in re.split(token_delim + "|" + seq_delim, source_str) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    if counter_to_update is None:
        return Counter(tokens)
    counter_to_update.update(tokens)
    return counter_to_update
