"""``Vocabulary``: a fixed index over text tokens (MXNet 1.9.1's ``mx.contrib.text.vocab``).

Index 0 is always the unknown token (``_constants.UNKNOWN_IDX``), the reserved tokens
follow in the order given, then the counted tokens: most frequent first, equally frequent
ones in their sort order, cut by ``min_freq`` and ``most_freq_count``. Any hashable token
works (str, int, tuple), as long as all tokens are of one comparable type.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Hashable, Sequence

from ._constants import UNKNOWN_IDX

__all__ = ["Vocabulary"]


class Vocabulary:
    """Indices for the unknown token, the reserved tokens and the keys of a counter.

    Parameters
    ----------
    counter : collections.Counter or None
        Token frequencies; its keys are indexed by frequency (see the module docstring).
    most_freq_count : int or None
        At most this many counted tokens are indexed (reserved ones do not count); None:
        no limit.
    min_freq : int
        Counted tokens less frequent than this are left out (must be positive).
    unknown_token : hashable
        Stands for every token not in the vocabulary; index 0.
    reserved_tokens : list of hashable or None
        Always indexed, right after the unknown token (padding, sentence marks ...); no
        duplicates and not the unknown token.
    """

    def __init__(self, counter: Counter | None = None, most_freq_count: int | None = None, min_freq: int = 1,
                 unknown_token: Hashable = "<unk>", reserved_tokens: Sequence[Hashable] | None = None) -> None:
        assert min_freq > 0, "`min_freq` must be set to a positive value."
        if reserved_tokens is not None:
            assert unknown_token not in set(reserved_tokens), "`reserved_token` cannot contain `unknown_token`."
            assert len(set(reserved_tokens)) == len(reserved_tokens), \
                "`reserved_tokens` cannot contain duplicate reserved tokens."
        self._unknown_token = unknown_token
        self._reserved_tokens = None if reserved_tokens is None else reserved_tokens[:]
        self._idx_to_token: list = [unknown_token, *(reserved_tokens or ())]
        self._token_to_idx: dict = {token: idx for idx, token in enumerate(self._idx_to_token)}
        if counter is not None:
            self._index_counter_keys(counter, most_freq_count, min_freq)

    def _index_counter_keys(self, counter: Counter, most_freq_count: int | None, min_freq: int) -> None:
        """Append the keys of ``counter`` that pass the frequency thresholds."""
        assert isinstance(counter, Counter), "`counter` must be an instance of collections.Counter."
        special = set(self._idx_to_token)
        # by frequency, ties by token; the sort fails, as MXNet's, on tokens of mixed types
        ranked = sorted(sorted(counter.items(), key=lambda kv: kv[0]), key=lambda kv: kv[1], reverse=True)
        room = len(counter) if most_freq_count is None else most_freq_count
        for token, freq in ranked:
            if freq < min_freq or room == 0:   # a negative count, as MXNet's, never stops
                break
            if token not in special:
                self._token_to_idx[token] = len(self._idx_to_token)
                self._idx_to_token.append(token)
                room -= 1

    def __len__(self) -> int:
        return len(self._idx_to_token)

    @property
    def token_to_idx(self) -> dict:
        """dict: each indexed token's index."""
        return self._token_to_idx

    @property
    def idx_to_token(self) -> list:
        """list: the indexed tokens; position = index."""
        return self._idx_to_token

    @property
    def unknown_token(self) -> Hashable:
        """The token that stands for every token not indexed (index 0)."""
        return self._unknown_token

    @property
    def reserved_tokens(self) -> Any:
        """The reserved tokens (a copy of the given list) or None."""
        return self._reserved_tokens

    def to_indices(self, tokens: Any) -> Any:
        """Index of a token, or indices of a list of tokens (unknown ones: 0)."""
        if isinstance(tokens, list):
            return [self._token_to_idx.get(token, UNKNOWN_IDX) for token in tokens]
        return self._token_to_idx.get(tokens, UNKNOWN_IDX)

    def to_tokens(self, indices: Any) -> Any:
        """Token of an index, or tokens of a list of indices; ValueError for an index that
        is not an int or is past the end (negative ones count from the end, as a list's)."""
        single = not isinstance(indices, list)
        tokens = []
        for idx in [indices] if single else indices:
            if not isinstance(idx, int) or idx >= len(self._idx_to_token):
                raise ValueError("Token index %d in the provided `indices` is invalid." % idx)
            tokens.append(self._idx_to_token[idx])
        return tokens[0] if single else tokens
